"""The rubric judge: scores a free review 1-5 against a Cassandra case's rubric.

The verdict is Cassandra's `EvaluationResultSchema` (`score`, `rationale`, `findings`,
`met_rubric`) through a typed tool. The case score is (score - 1) / 4 and the case
passes when the judge says the rubric was met.
"""

from __future__ import annotations

import json
from typing import Literal

from assay._util.prompt_text import cap_diff, fenced
from assay.agents.base import AgentOutput, AttemptContext
from assay.errors import JudgeError
from assay.grading.base import Grade
from assay.grading.judging import JudgeCall, load_judge_prompt
from assay.grading.verdicts import RubricVerdict
from assay.models.names import DEFAULT_MODEL
from assay.options import RunOptions
from assay.report.model import Check
from assay.suites.case import RubricSpec

__all__ = ["PROMPT_VERSION", "RubricJudge", "rubric_prompt"]

PROMPT_VERSION = "rubric-judge.v1"
_CALL = JudgeCall("record_evaluation", RubricVerdict)


class RubricJudge:
    """Grader for rubric cases."""

    def __init__(self, *, options: RunOptions) -> None:
        self.options = options

    async def grade(self, ctx: AttemptContext, output: AgentOutput) -> Grade:
        spec = ctx.case.spec
        if not isinstance(spec, RubricSpec):
            raise JudgeError(f"the rubric judge grades rubric cases, not {ctx.case.kind!r}")
        model = ctx.judge_model or ctx.model or DEFAULT_MODEL
        answer = await _CALL.ask(
            model=model,
            system=load_judge_prompt(PROMPT_VERSION),
            prompt=rubric_prompt(spec.rubric, ctx.sandbox.diff, output),
            options=self.options,
            sample=ctx.attempt,
        )
        verdict = answer.verdict
        status: Literal["pass", "fail"] = "pass" if verdict.met_rubric else "fail"
        met = "met" if verdict.met_rubric else "not met"
        return Grade(
            status=status,
            score=(verdict.score - 1) / 4,
            reason=f"judge score {verdict.score}/5, rubric {met}",
            checks=[Check(id="rubric", kind="rubric", status=status, message=verdict.rationale)],
            judge={
                "model": model,
                "prompt_version": PROMPT_VERSION,
                "attempts": answer.attempts,
                "verdict": verdict.model_dump(),
            },
            usage=answer.usage,
        )


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
