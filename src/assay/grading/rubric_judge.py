"""The rubric judge: scores a free review 1-5 against a Cassandra case's rubric.

Two prompts (`--judge-prompt`); Cassandra suites default to Cassandra's own, so scores
compare with a team's Cassandra baselines:

- `cassandra`: Cassandra's judge system prompt (its 1-5 scale) and its message layout
  `RUBRIC:` / `DIFF:` (the case's input.diff) / `REVIEW TO EVALUATE:` (the review text);
  the answer is read as leniently as Cassandra reads it (see cassandra_verdict.py);
- `assay`: assay's prompt, which also shows the reviewer's structured findings, with the
  strict typed verdict (a score outside 1..5 goes back to the judge once).

Both answer through the `record_evaluation` tool with Cassandra's `EvaluationResultSchema`.
The case score is (score - 1) / 4 (the score clamped to 1..5) and the case passes when
the judge says the rubric was met.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from assay._util.prompt_text import cap_diff, fenced
from assay.core.checks import Check
from assay.errors import JudgeError
from assay.grading.base import Grade
from assay.grading.cassandra_verdict import CassandraVerdict, read_cassandra_verdict
from assay.grading.judge_verdicts import RubricVerdict
from assay.grading.judging import JudgeAnswer, JudgeCall, load_judge_prompt
from assay.models.names import DEFAULT_MODEL
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, RubricSpec

__all__ = [
    "CASSANDRA_PROMPT_VERSION",
    "PROMPT_VERSION",
    "RubricJudge",
    "cassandra_prompt",
    "judge_prompt_for",
    "rubric_prompt",
]

PROMPT_VERSION = "rubric-judge.v1"
CASSANDRA_PROMPT_VERSION = "cassandra-judge.v1"
_CALL = JudgeCall("record_evaluation", RubricVerdict)
_CASSANDRA_CALL = JudgeCall(
    "record_evaluation", CassandraVerdict, reader=read_cassandra_verdict, tool_model=RubricVerdict
)


def judge_prompt_for(case: Case, options: RunOptions) -> Literal["assay", "cassandra"]:
    """`--judge-prompt`, else the case format's own: Cassandra's for Cassandra's formats."""
    if options.judge_prompt is not None:
        return options.judge_prompt
    return "cassandra" if case.format in ("rubric-manifest", "rubric-dir") else "assay"


class RubricJudge:
    """Grader for rubric cases."""

    def __init__(self, *, options: RunOptions) -> None:
        self.options = options

    async def grade(self, ctx: AttemptContext, output: AgentOutput) -> Grade:
        spec = ctx.case.spec
        if not isinstance(spec, RubricSpec):
            raise JudgeError(f"the rubric judge grades rubric cases, not {ctx.case.kind!r}")
        model = ctx.judge_model or ctx.model or DEFAULT_MODEL
        answer: JudgeAnswer[Any]
        if judge_prompt_for(ctx.case, self.options) == "cassandra":
            version = CASSANDRA_PROMPT_VERSION
            answer = await _CASSANDRA_CALL.ask(
                model=model,
                system=load_judge_prompt(version),
                prompt=cassandra_prompt(spec, output),
                options=self.options,
                sample=ctx.attempt,
            )
        else:
            version = PROMPT_VERSION
            answer = await _CALL.ask(
                model=model,
                system=load_judge_prompt(version),
                prompt=rubric_prompt(spec.rubric, ctx.sandbox.diff, output),
                options=self.options,
                sample=ctx.attempt,
            )
        verdict = answer.verdict
        status: Literal["pass", "fail"] = "pass" if verdict.met_rubric else "fail"
        met = "met" if verdict.met_rubric else "not met"
        return Grade(
            status=status,
            score=(min(max(verdict.score, 1), 5) - 1) / 4,
            reason=f"judge score {verdict.score}/5, rubric {met}",
            checks=[
                Check(
                    id="rubric",
                    kind="rubric",
                    status=status,
                    message=verdict.rationale,
                    expected=spec.rubric,
                )
            ],
            judge={
                "model": model,
                "prompt_version": version,
                "attempts": answer.attempts,
                "verdict": verdict.model_dump(),
                "usage": answer.usage.model_dump(),
            },
            usage=answer.usage,
        )


def cassandra_prompt(spec: RubricSpec, output: AgentOutput) -> str:
    """Cassandra's judge message: the rubric, the case's input.diff, the review text."""
    diff = spec.diff.read_text(encoding="utf-8", errors="replace")
    review = output.review_text or ""
    return f"RUBRIC:\n{spec.rubric}\n\nDIFF:\n{diff}\n\nREVIEW TO EVALUATE:\n{review}"


def rubric_prompt(rubric: str, diff: str, output: AgentOutput) -> str:
    """What the judge reads: the rubric, the diff under review, and the reviewer's output."""
    review = (output.review_text or "").strip() or "(the reviewer wrote no review text)"
    findings = json.dumps(output.findings, indent=2, ensure_ascii=False)
    return (
        f"## Rubric\n\n{rubric.strip()}\n\n"
        f"## The diff under review\n\n{fenced(cap_diff(diff), 'diff')}\n\n"
        f"## The reviewer's written review\n\n{fenced(review, 'markdown')}\n\n"
        f"## The reviewer's findings ({len(output.findings)})\n\n"
        f"{fenced(findings, 'json')}\n\n"
        "Call record_evaluation with your evaluation."
    )
