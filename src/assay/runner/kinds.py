"""The case kinds (`review`, `verify`, `rubric`, `task`) and what each one brings to a run.

One entry per kind says what the runner must know about it: the type of its spec, the
grader that scores it, whether that grading calls a model (the judge: its credentials are
checked and `--judge-model` applies), what a timeout during grading is called, the runtime
the kind always runs with (a task runs its agent command), and the checks an attempt
whose agent never finished still reports (PVYai's `blocked`). The runner and `assay ci`'s
preflight ask here instead of testing `case.kind` themselves. Graders are imported only
when a case of their kind runs (the judges bring in the model layer, the task checks do not).

Kinds are closed: a plugin adds suite formats, runtimes and graders, which all produce or
score cases of these four kinds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from assay.suites.case import ReviewSpec, RubricSpec, TaskSpec, VerifySpec

if TYPE_CHECKING:
    from assay.core.checks import Check
    from assay.grading.base import Grader
    from assay.options import RunOptions
    from assay.suites.case import Case

__all__ = ["KINDS", "CaseKindSpec", "grader_for", "kind_of"]


@dataclass(frozen=True)
class CaseKindSpec:
    name: str
    spec_type: type
    grader: Callable[[RunOptions], Grader]
    needs_judge: bool
    """Its grading calls a model (the judge)."""
    grading_phase: Literal["judge", "checks", "grading"]
    """What a timeout while grading it is called."""
    runtime: str | None = None
    """The runtime every case of the kind runs with, whatever is asked (task: `command`)."""
    blocked_checks: Callable[[Any, str], list[Check]] | None = None
    """The checks of an attempt whose agent failed: every one `blocked` (task)."""


def _findings_judge(options: RunOptions) -> Grader:
    from assay.grading.findings_judge import FindingsJudge

    return FindingsJudge(options=options)


def _verdict(options: RunOptions) -> Grader:
    from assay.grading.verify_grader import VerdictGrader

    return VerdictGrader(options=options)


def _rubric_judge(options: RunOptions) -> Grader:
    from assay.grading.rubric_judge import RubricJudge

    return RubricJudge(options=options)


def _task_checks(options: RunOptions) -> Grader:
    from assay.grading.task_checks import TaskGrader

    return TaskGrader(options=options)


def _blocked_task_checks(spec: TaskSpec, reason: str) -> list[Check]:
    from assay.grading.task_results import blocked_checks

    return blocked_checks(spec, reason)


KINDS: dict[str, CaseKindSpec] = {
    "review": CaseKindSpec("review", ReviewSpec, _findings_judge, True, "judge"),
    "verify": CaseKindSpec("verify", VerifySpec, _verdict, False, "grading"),
    "rubric": CaseKindSpec("rubric", RubricSpec, _rubric_judge, True, "judge"),
    "task": CaseKindSpec(
        "task", TaskSpec, _task_checks, False, "checks", "command", _blocked_task_checks
    ),
}


def kind_of(case: Case) -> CaseKindSpec:
    return KINDS[case.kind]


def grader_for(case: Case, *, options: RunOptions) -> Grader:
    """The grader of `case`'s kind, followed by the user graders the case names."""
    from assay.grading import with_user_graders

    return with_user_graders(kind_of(case).grader(options), case.graders)
