"""A scripted judge for FakeAnthropic that decides by what the answers say, not by case names.

`corpus_responder` plays a judge that meets every should_find with finding 0; that is
enough to run the corpus, but it passes an answer made of anything. `assay check` grades
made-up answers, so its tests need a judge that tells a right answer from a wrong one.
This one compares wording, the way a careless but honest reader would:

- findings judge (`record_verdict`): a should_find is met by the finding whose title and
  description share most of its words (Dice coefficient of their content words at least
  SIMILAR); a should_not_find is violated by a finding that similar to it;
- rubric judge (`record_evaluation`, or Cassandra's `submit_review`): the rubric asks for
  its content words; the score is 1 + 4 x the share of them the review uses (rounded),
  met from 4 up. A rubric with no content words at all (`n/a`) asks for nothing, so every
  review meets it with 5.

Content words are lower-cased runs of letters and digits of three or more characters that
are not common English function words, a plural `s` dropped. Anything else (agent turns)
goes to `corpus_responder`.
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.anthropic_api import tool_use_reply
from tests.fakes.corpus_responder import (
    corpus_responder,
    first_user_text,
    judge_sections,
    numbered,
)
from tests.fakes.scripted import Scripted

__all__ = ["SIMILAR", "content_words", "similarity", "wording_judge"]

SIMILAR = 0.5
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    """the and for are but not you all any can had her was one our out has him his how its
    may new now old see two way who did get let say she too use that with have this will
    your from they been were which their there what when would about into than them then
    these some could other more also only over such very just where while should because
    does each must being those after before here both same under again still even most
    none nor own off per via yet""".split()
)
_FINDINGS_JSON = re.compile(r"```json\n(.*?)\n```", re.DOTALL)
_NO_REVIEW_TEXT = "(the reviewer wrote no review text)"


def wording_judge(body: dict[str, Any]) -> Scripted:
    """The judge's answer to one Messages API request; agents' turns as corpus_responder's."""
    tools = [tool["name"] for tool in body.get("tools", [])]
    if "record_verdict" in tools:
        return _findings_verdict(first_user_text(body))
    for name in ("record_evaluation", "submit_review"):
        if name in tools:
            return _rubric_evaluation(first_user_text(body), tool=name)
    return corpus_responder(body)


def content_words(text: str) -> set[str]:
    words = set()
    for word in _WORD.findall(text.lower()):
        if len(word) < 3 or word in _STOP:
            continue
        words.add(word[:-1] if len(word) > 4 and word.endswith("s") else word)
    return words


def similarity(a: str, b: str) -> float:
    """Dice coefficient of the two texts' content words (0 when either has none)."""
    left, right = content_words(a), content_words(b)
    if not left or not right:
        return 0.0
    return 2 * len(left & right) / (len(left) + len(right))


# -- findings -----------------------------------------------------------------------------------


def _findings_verdict(prompt: str) -> Scripted:
    import json

    sections = judge_sections(prompt)
    should_find = numbered(sections["Expected findings (should_find)"])
    should_not_find = numbered(sections["Must not be reported (should_not_find)"])
    shown = _FINDINGS_JSON.search(prompt.split("## The reviewer's findings", 1)[1])
    findings = json.loads(shown[1]) if shown else []
    texts = [f"{f.get('title', '')} {f.get('description', '')}" for f in findings]

    def best(text: str) -> tuple[int | None, float]:
        scored = [(similarity(text, finding), i) for i, finding in enumerate(texts)]
        score, index = max(scored, default=(0.0, None))
        return (index, score) if score >= SIMILAR else (None, score)

    verdict: dict[str, list[dict[str, Any]]] = {"should_find": [], "should_not_find": []}
    for index, text in should_find:
        assertion = re.sub(r" \[required severity: \w+\]| \((required|optional)\)$", "", text)
        match, score = best(assertion)
        verdict["should_find"].append(
            {
                "index": index,
                "met": match is not None,
                "matchedFindingIndex": match,
                "reasoning": f"closest finding shares {score:.0%} of the wording",
            }
        )
    for index, text in should_not_find:
        match, score = best(text)
        verdict["should_not_find"].append(
            {
                "index": index,
                "violated": match is not None,
                "violatingFindingIndex": match,
                "reasoning": f"closest finding shares {score:.0%} of the wording",
            }
        )
    return tool_use_reply("record_verdict", verdict, input_tokens=120, output_tokens=60)


# -- rubric -------------------------------------------------------------------------------------


def _rubric_evaluation(prompt: str, *, tool: str) -> Scripted:
    rubric, review = _rubric_and_review(prompt)
    asked = content_words(rubric)
    used = content_words(review.replace(_NO_REVIEW_TEXT, ""))
    covered = len(asked & used) / len(asked) if asked else 1.0
    score = 1 + round(4 * covered)
    evaluation = {
        "score": score,
        "rationale": f"the review uses {covered:.0%} of what the rubric asks for",
        "findings": sorted(asked & used)[:5],
        "met_rubric": score >= 4,
    }
    return tool_use_reply(tool, evaluation, input_tokens=150, output_tokens=50)


def _rubric_and_review(prompt: str) -> tuple[str, str]:
    """The rubric and the review (its text and findings), from either judge prompt."""
    if prompt.startswith("RUBRIC:\n"):  # Cassandra's
        rubric = prompt.removeprefix("RUBRIC:\n").split("\n\nDIFF:\n", 1)[0]
        return rubric, prompt.split("\n\nREVIEW TO EVALUATE:\n", 1)[1]
    rubric = prompt.split("## Rubric\n\n", 1)[1].split("\n\n## The diff under review", 1)[0]
    return rubric, prompt.split("## The reviewer's written review", 1)[1]
