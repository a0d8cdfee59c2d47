"""The grader of verify cases: the agent's keep/reject must equal the expected verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.core.checks import Check
from assay.grading.base import Grade
from assay.suites.case import VerifySpec

if TYPE_CHECKING:
    from assay.options import RunOptions
    from assay.subject import AgentOutput, AttemptContext

__all__ = ["VerdictGrader"]


class VerdictGrader:
    """Deterministic: no judge, one `verdict` check."""

    def __init__(self, *, options: RunOptions) -> None:
        # Every grader takes the run's options (see assay.runner.kinds); the verdict
        # depend on the case alone.
        self.options = options

    async def grade(self, ctx: AttemptContext, output: AgentOutput) -> Grade:
        spec = ctx.case.spec
        if not isinstance(spec, VerifySpec):
            raise TypeError(
                f"VerdictGrader grades verify cases, not {ctx.case.kind} case {ctx.case.id}"
            )
        expected = spec.expect_verdict
        if output.verdict is None:
            message = f"the agent gave no verdict (expected {expected})"
            check = Check(
                id="verdict", kind="verdict", status="error", message=message, expected=expected
            )
            return Grade(
                status="error", score=0.0, reason=message, checks=[check], error_source="agent"
            )
        if output.verdict == expected:
            message = f"{output.verdict}, as expected"
        else:
            message = f"expected {expected}, got {output.verdict}"
        if output.verdict_reason:
            message += f" (agent: {output.verdict_reason})"
        passed = output.verdict == expected
        check = Check(
            id="verdict",
            kind="verdict",
            status="pass" if passed else "fail",
            message=message,
            expected=expected,
        )
        return Grade(
            status="pass" if passed else "fail",
            score=1.0 if passed else 0.0,
            reason="" if passed else message,
            checks=[check],
        )
