"""Grading: LLM judges, deterministic checks, and graders users write in Python.

Each case kind has one grader; its module is imported only when a case of that kind
runs (the judges pull in the model layer, the task checks do not). The user graders a
case names (`Case.graders`, see `user_graders.py`) run after it and their checks join the
case's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from assay.grading.base import Grade, Grader
from assay.grading.user_graders import (
    GRADERS,
    GraderContext,
    UserGrader,
    register_grader,
    resolve_grader,
    run_user_graders,
)
from assay.report.model import Check

if TYPE_CHECKING:
    from assay.agents.base import AgentOutput, AttemptContext
    from assay.options import RunOptions
    from assay.suites.case import Case

__all__ = [
    "GRADERS",
    "Check",
    "Grade",
    "Grader",
    "GraderContext",
    "UserGrader",
    "grader_for",
    "register_grader",
    "resolve_grader",
]

_GRADERS = {
    "task": ("assay.grading.task_checks", "TaskGrader"),
    "verify": ("assay.grading.verdict", "VerdictGrader"),
    "review": ("assay.grading.findings_judge", "FindingsJudge"),
    "rubric": ("assay.grading.rubric_judge", "RubricJudge"),
}


def grader_for(case: Case, *, options: RunOptions) -> Grader:
    """The grader of `case`'s kind (task checks, verdict match, findings or rubric judge),
    followed by the user graders the case names."""
    module_name, class_name = _GRADERS[case.kind]
    grader: Grader = getattr(importlib.import_module(module_name), class_name)(options=options)
    if case.graders:
        return _WithUserGraders(grader, case.graders)
    return grader


class _WithUserGraders:
    def __init__(self, kind_grader: Grader, names: tuple[str, ...]) -> None:
        self._kind_grader = kind_grader
        self._names = names

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
        added = await run_user_graders(self._names, context)
        grade.checks = [*grade.checks, *added]
        failed = [check for check in added if check.status in ("fail", "error")]
        if failed and grade.status == "pass":
            first = failed[0]
            grade.status = "fail"
            grade.score = 0.0
            grade.reason = f"check {first.id} failed" + (
                f": {first.message}" if first.message else ""
            )
        return grade
