"""A scripted model for FakeAnthropic that plays every part of ANY review, verify or rubric case.

It reads only the request, never a case name, so it works on a corpus it has not seen:

- an agent turn (the tools offer `submit_findings` or `submit_verdict`): the first turn
  reads the first changed file named in the PR context; the next turn submits one finding
  located in that file (with a written review when the submit tool asks for one), or a
  `keep` verdict for a candidate finding;
- a findings-judge turn (`record_verdict`): every should_find is met by finding 0 when
  the reviewer reported one, no should_not_find is violated, entries numbered as in the
  prompt;
- a rubric-judge turn (`record_evaluation`, or Cassandra's `submit_review`): score 4,
  rubric met, with a rationale.

Every answer depends on the request body alone, so a request retried after a fault gets
the very answer it would have got the first time. `FaultyResponder` wraps a responder and
answers a seeded ~30% of distinct requests first with a fault (429, 529, 500, dropped).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.anthropic_api import (
    dropped,
    overloaded,
    rate_limited,
    server_error,
    tool_use_reply,
)
from tests.fakes.loopback import Reply
from tests.fakes.scripted import Scripted

__all__ = [
    "FINDING_SEVERITY",
    "RUBRIC_SCORE",
    "FaultyResponder",
    "corpus_responder",
    "reviewed_path",
]

FINDING_SEVERITY = "high"
"""The severity of the one finding the scripted reviewer reports."""
RUBRIC_SCORE = 4

_CHANGED_FILES = re.compile(r"^Changed files:\n((?:- .*\n?)+)", re.MULTILINE)
_TITLE = re.compile(r"^Pull request title: (.*)$", re.MULTILINE)
_SECTION = re.compile(
    r"^## (?P<title>[^\n]+)\n\n(?P<body>.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL
)
_NUMBERED = re.compile(r"^\[(\d+)\] ", re.MULTILINE)
_TOOL_USE_ID = re.compile(r"toolu_fake_\d+")
_FINDINGS_COUNT = re.compile(r"^## The reviewer's findings \((\d+)\)$", re.MULTILINE)


def corpus_responder(body: dict[str, Any]) -> Scripted:
    """The answer to one Messages API request, chosen by the tools it offers."""
    tools = {tool["name"] for tool in body.get("tools", [])}
    if "record_verdict" in tools:
        return findings_judge_turn(body)
    if tools & {"record_evaluation", "submit_review"}:
        return rubric_judge_turn(body)
    if tools & {"submit_findings", "submit_verdict"}:
        return agent_turn(body)
    raise ValueError(f"no scripted answer for a request offering tools {sorted(tools)}")


# -- the agent under test -------------------------------------------------------------------


def agent_turn(body: dict[str, Any]) -> Scripted:
    """Read the first changed file, then submit (findings, a review, or a verdict)."""
    prompt = first_user_text(body)
    path = reviewed_path(prompt)
    if not any(message["role"] == "assistant" for message in body["messages"]):
        if path is None:
            return tool_use_reply("list_dir", {"path": "."})
        return tool_use_reply("read_file", {"path": path})
    tools = {tool["name"]: tool for tool in body["tools"]}
    if "submit_verdict" in tools:
        return tool_use_reply(
            "submit_verdict",
            {"verdict": "keep", "reason": f"Read {path or 'the repository'}: the issue is real."},
        )
    title = _TITLE.search(prompt)
    finding = {
        "severity": FINDING_SEVERITY,
        "confidence": "high",
        "title": f"Defect introduced in {path or 'this change'}",
        "description": f"The change ({title[1] if title else 'untitled'}) breaks its caller.",
        "location": {"path": path or ".", "startLine": 1},
    }
    submission: dict[str, Any] = {"findings": [finding]}
    if "review" in tools["submit_findings"]["input_schema"].get("properties", {}):
        submission["review"] = f"One problem: {finding['title']}. {finding['description']}"
    return tool_use_reply("submit_findings", submission)


def reviewed_path(prompt: str) -> str | None:
    """The first file under "Changed files:" in the PR context, None when none is listed."""
    listed = _CHANGED_FILES.search(prompt)
    if listed is None:
        return None
    return listed[1].splitlines()[0].removeprefix("- ").strip()


# -- the judges -------------------------------------------------------------------------------


def findings_judge_turn(body: dict[str, Any]) -> Scripted:
    """Every should_find met by finding 0 (when there is one); nothing violated."""
    sections = judge_sections(first_user_text(body))
    should_find = numbered(sections["Expected findings (should_find)"])
    should_not_find = numbered(sections["Must not be reported (should_not_find)"])
    counted = _FINDINGS_COUNT.search(first_user_text(body))
    has_finding = counted is not None and int(counted[1]) > 0
    verdict = {
        "should_find": [
            {
                "index": index,
                "met": has_finding,
                "matchedFindingIndex": 0 if has_finding else None,
                "reasoning": (
                    f"Finding 0 reports this: {_brief(text)}"
                    if has_finding
                    else "The reviewer reported no findings."
                ),
            }
            for index, text in should_find
        ],
        "should_not_find": [
            {
                "index": index,
                "violated": False,
                "violatingFindingIndex": None,
                "reasoning": f"No finding raises this: {_brief(text)}",
            }
            for index, text in should_not_find
        ],
    }
    return tool_use_reply("record_verdict", verdict, input_tokens=120, output_tokens=60)


def rubric_judge_turn(body: dict[str, Any]) -> Scripted:
    evaluation = {
        "score": RUBRIC_SCORE,
        "rationale": "The review names the main problem of the diff the rubric asks for.",
        "findings": ["identifies the defect in the changed file", "no false positives"],
        "met_rubric": True,
    }
    return tool_use_reply("record_evaluation", evaluation, input_tokens=150, output_tokens=50)


def judge_sections(prompt: str) -> dict[str, str]:
    """The prompt's `## Title` sections by title."""
    return {match["title"].strip(): match["body"] for match in _SECTION.finditer(prompt)}


def numbered(section: str) -> list[tuple[int, str]]:
    """The `[i] text` entries of a section, in order; [] for "(none)"."""
    starts = list(_NUMBERED.finditer(section))
    entries = []
    for position, match in enumerate(starts):
        end = starts[position + 1].start() if position + 1 < len(starts) else len(section)
        entries.append((int(match[1]), section[match.end() : end].strip()))
    return entries


def _brief(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


# -- fault injection --------------------------------------------------------------------------

FAULTS: tuple[Callable[[], Reply], ...] = (
    lambda: rate_limited(retry_after="0"),
    overloaded,
    server_error,
    dropped,
)


def _fingerprint(body: dict[str, Any]) -> str:
    """The request without the fake's tool-use ids, which follow arrival order."""
    return _TOOL_USE_ID.sub("toolu_fake", json.dumps(body, sort_keys=True))


@dataclass
class FaultyResponder:
    """Answers a seeded `rate` of distinct requests with a fault first, then with `inner`.

    Whether (and which) fault a request gets depends on the seed and the request body, not
    on arrival order, so concurrent runs fault the same requests. A request's retry (the
    same body again) is answered by `inner`, so no call fails twice.
    """

    inner: Callable[[dict[str, Any]], Scripted]
    seed: int = 0
    rate: float = 0.3
    faults_served: dict[str, int] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> Scripted:
        digest = hashlib.sha256(_fingerprint(body).encode()).hexdigest()
        with self._lock:
            first_time = digest not in self._seen
            self._seen.add(digest)
        rng = random.Random(f"{self.seed}:{digest}")
        if first_time and rng.random() < self.rate:
            fault = rng.choice(FAULTS)()
            kind = "dropped" if fault.drop else str(fault.status)
            with self._lock:
                self.faults_served[kind] = self.faults_served.get(kind, 0) + 1
            return fault
        return self.inner(body)
