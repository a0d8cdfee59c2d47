"""Grading: LLM judges, deterministic checks, and graders users write in Python.

Each case kind has one grader (which one: `assay.runner.kinds`); its module is imported
only when a case of that kind runs. The user graders a case names (`Case.graders`, see
`user_graders.py`) run after it and their checks join the case's.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from assay.core.checks import Check
from assay.core.statuses import FAILING_CHECKS
from assay.grading.base import Grade, Grader
from assay.grading.user_graders import (
    GRADERS,
    GraderContext,
    UserGrader,
    register_grader,
    resolve_grader,
    run_user_graders,
)

if TYPE_CHECKING:
    from assay.isolation.bwrap import Sandboxing
    from assay.options import RunOptions
    from assay.subject import AgentOutput, AttemptContext

__all__ = [
    "GRADERS",
    "Check",
    "Grade",
    "Grader",
    "GraderContext",
    "UserGrader",
    "register_grader",
    "resolve_grader",
    "with_user_graders",
]


def with_user_graders(
    grader: Grader, names: tuple[str, ...], options: RunOptions | None = None
) -> Grader:
    """`grader` (a case kind's), then the user graders `names`, whose checks join its; the
    project's own run in `options.sandboxing` (`confined_graders.py`)."""
    return _WithUserGraders(grader, names, options) if names else grader


class _WithUserGraders:
    def __init__(
        self, kind_grader: Grader, names: tuple[str, ...], options: RunOptions | None
    ) -> None:
        self._kind_grader = kind_grader
        self._names = names
        self._options = options

    async def grade(self, ctx: AttemptContext, output: AgentOutput) -> Grade:
        grade = await self._kind_grader.grade(ctx, output)
        if grade.status == "error":  # nothing to add to a case that could not be graded
            return grade
        context = GraderContext(
            case=ctx.case,
            output=output,
            sandbox=ctx.sandbox,
            model=ctx.model,
            attempt=ctx.attempt,
            artifacts_dir=ctx.artifacts_dir,
        )
        options = self._options
        sandboxing = options.sandboxing if options is not None else None
        confined = None
        if options is not None and sandboxing is not None and sandboxing.mode == "bwrap":
            confined = functools.partial(
                _grade_confined,
                sandboxing=sandboxing,
                timeout_s=ctx.timeout_s,
                pass_env=tuple(options.pass_env),
            )
        added = await run_user_graders(self._names, context, confined=confined)
        grade.checks = [*grade.checks, *added]
        failed = [check for check in added if check.status in FAILING_CHECKS]
        if failed and grade.status == "pass":
            first = failed[0]
            grade.status = "fail"
            grade.score = 0.0
            grade.reason = f"check {first.id} failed" + (
                f": {first.message}" if first.message else ""
            )
        return grade


async def _grade_confined(
    reference: str,
    project_dir: Path,
    ctx: GraderContext,
    *,
    sandboxing: Sandboxing,
    timeout_s: float,
    pass_env: tuple[str, ...],
) -> list[Check]:
    # lazy: start-up (the sandboxed child's protocol, only for a project's own graders)
    from assay.grading.confined_graders import grade_confined

    return await grade_confined(
        reference, project_dir, ctx, sandboxing=sandboxing, timeout_s=timeout_s, pass_env=pass_env
    )
