"""The case kinds (`review`, `verify`, `rubric`, `task`): each one bundle of what it brings.

One entry per kind holds every part of it: the type of its spec, the files a case is made
of (`--affected-by`, the work-root check), the sandbox builder (`workspace/build.py`'s part
of the kind, passed back to `build_sandbox`) and whether a case's sandbox is small enough
to build on the event loop, what the agent is asked and the answer it gives
(`agents/asks.py`'s part), the grader that scores it, whether that grading calls a model
(the judge: its credentials are checked and `--judge-model` applies), what a timeout
during grading is called and whether `--timeout` bounds the grading at all (a task's
checks keep their own limits), the runtime the kind always runs with (a task runs its
agent command), the checks an attempt whose agent never finished still reports (PVYai's
`blocked`), and what an attempt records of its sandbox as soon as it exists or failed (a
task's workspace path, for PVYai's report). The runner and `assay ci`'s preflight ask here
instead of testing `case.kind` themselves; the layers below (sandbox, agents) cannot
import the runner, so each keeps its part in one table keyed by kind, and this registry is
built from those tables (a kind one of them lacks fails at import). Graders are imported
only when a case of their kind runs (the judges bring in the model layer, the task checks
do not).

Kinds are closed: a plugin adds suite formats, runtimes and graders, which all produce or
score cases of these four kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from assay.agents.asks import ASKS, KindAsk
from assay.suites.case import CaseKind, FixtureFile, ReviewSpec, RubricSpec, TaskSpec, VerifySpec
from assay.suites.warden_skill import skill_at_run
from assay.workspace.build import SANDBOX_BUILDERS, SandboxBuilder
from assay.workspace.review import is_small_review_sandbox

if TYPE_CHECKING:
    from assay.core.checks import Check
    from assay.errors import SandboxError
    from assay.grading.base import Grader
    from assay.options import RunOptions
    from assay.suites.case import Case
    from assay.workspace import Sandbox

__all__ = ["KINDS", "CaseKindSpec", "grader_for", "kind_of"]


Inputs = Callable[[Any], list[tuple[str, Path]]]
"""`inputs(spec)`: (what, path) of each file or directory a case's spec is made of."""


@dataclass(frozen=True)
class CaseKindSpec:
    name: CaseKind
    spec_type: type
    inputs: Inputs
    """Its fixtures and skill (the suite file aside): what `--affected-by` compares."""
    copied_tree: Callable[[Any], Path | None]
    """The directory its sandbox copies whole (a task's workspace, a rubric's base tree)."""
    sandbox: SandboxBuilder
    small_sandbox: Callable[[Any, Path | None], bool]
    """`small_sandbox(spec, skill_override)`: its sandbox takes a few milliseconds and
    starts no process, so the runner builds it on the event loop rather than in a thread."""
    ask: KindAsk
    """Its task text and the answer it wants, for every runtime."""
    grader: Callable[[RunOptions], Grader]
    needs_judge: bool
    """Its grading calls a model (the judge)."""
    grading_phase: Literal["judge", "checks", "grading"]
    """What a timeout while grading it is called."""
    runtime: str | None = None
    """The runtime every case of the kind runs with, whatever is asked (task: `command`)."""
    blocked_checks: Callable[[Any, str], list[Check]] | None = None
    """The checks of an attempt whose agent failed: every one `blocked` (task)."""
    timed_grading: bool = True
    """`--timeout` bounds the grading too, with what the agent left of it (a judge that
    never answers must not hold a case longer than an agent may). False for a task: its
    verification commands keep their own limits, as in PVYai (docs/pvyai.md, Timeouts)."""
    record_setup: Callable[[Path, Sandbox | SandboxError], None] | None = None
    """`record_setup(artifacts, sandbox or why it failed)`, called as soon as an attempt's
    sandbox is built or has failed to be (task: PVYai's `workspacePath`, or its error)."""
    one_at_a_time: bool = False
    """Its cases run one at a time, as PVYai runs tasks (a task that binds a fixed port or
    shares /tmp paths would fail beside another), unless `--concurrency` is set explicitly
    (`settings.tasks_one_at_a_time`); other kinds still run side by side."""


def _findings_judge(options: RunOptions) -> Grader:
    # lazy: start-up (not loaded with this module)
    from assay.grading.findings_judge import FindingsJudge

    return FindingsJudge(options=options)


def _verdict(options: RunOptions) -> Grader:
    # lazy: start-up (not loaded with this module)
    from assay.grading.verify_grader import VerdictGrader

    return VerdictGrader(options=options)


def _rubric_judge(options: RunOptions) -> Grader:
    # lazy: start-up (not loaded with this module)
    from assay.grading.rubric_judge import RubricJudge

    return RubricJudge(options=options)


def _task_checks(options: RunOptions) -> Grader:
    from assay.grading.task_checks import TaskGrader  # lazy: start-up (not loaded with this module)

    return TaskGrader(options=options)


def _record_task_setup(artifacts: Path, outcome: Sandbox | SandboxError) -> None:
    # lazy: start-up (not loaded with this module)
    from assay.grading.task_record import record_setup

    record_setup(artifacts, outcome)


def _blocked_task_checks(spec: TaskSpec, reason: str) -> list[Check]:
    # lazy: start-up (not loaded with this module)
    from assay.grading.task_results import blocked_checks

    return blocked_checks(spec, reason)


def _review_inputs(spec: ReviewSpec | VerifySpec) -> list[tuple[str, Path]]:
    inputs = [("fixture", f.source) for f in _fixtures(spec.files, spec.supporting_files)]
    return inputs + ([("skill", spec.skill)] if spec.skill is not None else [])


def _fixtures(*groups: tuple[FixtureFile, ...]) -> list[FixtureFile]:
    return [fixture for group in groups for fixture in group]


def _rubric_inputs(spec: RubricSpec) -> list[tuple[str, Path]]:
    return [("fixture", spec.diff)] + ([("base", spec.base)] if spec.base is not None else [])


def _task_inputs(spec: TaskSpec) -> list[tuple[str, Path]]:
    return [("fixture", spec.workspace)]


def _small_review_sandbox(spec: ReviewSpec | VerifySpec, skill_override: Path | None) -> bool:
    return is_small_review_sandbox(spec, skill_at_run(spec.skill, skill_override))


def _never_small(spec: Any, skill_override: Path | None) -> bool:
    return False  # a rubric's or task's sandbox copies a tree or starts git


def _no_tree(spec: Any) -> None:
    return None  # review and verify fixtures are single files


def _rubric_tree(spec: RubricSpec) -> Path | None:
    return spec.base  # a directory, or a tarball (which the check passes over)


def _task_tree(spec: TaskSpec) -> Path:
    return spec.workspace


def _kind(
    name: CaseKind,
    spec_type: type,
    inputs: Inputs,
    *,
    copied_tree: Callable[[Any], Path | None],
    small_sandbox: Callable[[Any, Path | None], bool] = _never_small,
    grader: Callable[[RunOptions], Grader],
    needs_judge: bool,
    grading_phase: Literal["judge", "checks", "grading"],
    runtime: str | None = None,
    blocked_checks: Callable[[Any, str], list[Check]] | None = None,
    timed_grading: bool = True,
    record_setup: Callable[[Path, Sandbox | SandboxError], None] | None = None,
    one_at_a_time: bool = False,
) -> CaseKindSpec:
    """A built-in kind, with the sandbox's and the agents' parts of it from their tables."""
    return CaseKindSpec(
        name,
        spec_type,
        inputs,
        copied_tree,
        SANDBOX_BUILDERS[name],
        small_sandbox,
        ASKS[name],
        grader,
        needs_judge,
        grading_phase,
        runtime,
        blocked_checks,
        timed_grading,
        record_setup,
        one_at_a_time,
    )


KINDS: Mapping[str, CaseKindSpec] = MappingProxyType(
    {
        "review": _kind(
            "review",
            ReviewSpec,
            _review_inputs,
            copied_tree=_no_tree,
            small_sandbox=_small_review_sandbox,
            grader=_findings_judge,
            needs_judge=True,
            grading_phase="judge",
        ),
        "verify": _kind(
            "verify",
            VerifySpec,
            _review_inputs,
            copied_tree=_no_tree,
            small_sandbox=_small_review_sandbox,
            grader=_verdict,
            needs_judge=False,
            grading_phase="grading",
        ),
        "rubric": _kind(
            "rubric",
            RubricSpec,
            _rubric_inputs,
            copied_tree=_rubric_tree,
            grader=_rubric_judge,
            needs_judge=True,
            grading_phase="judge",
        ),
        "task": _kind(
            "task",
            TaskSpec,
            _task_inputs,
            copied_tree=_task_tree,
            grader=_task_checks,
            needs_judge=False,
            grading_phase="checks",
            runtime="command",
            blocked_checks=_blocked_task_checks,
            timed_grading=False,
            record_setup=_record_task_setup,
            one_at_a_time=True,
        ),
    }
)


def kind_of(case: Case) -> CaseKindSpec:
    return KINDS[case.kind]


def grader_for(case: Case, *, options: RunOptions) -> Grader:
    """The grader of `case`'s kind, followed by the user graders the case names."""
    from assay.grading import with_user_graders  # lazy: start-up (not loaded with this module)

    return with_user_graders(kind_of(case).grader(options), case.graders, options)
