"""Graders written in Python by users, named from `[tool.assay] graders` or a suite.

A user grader is an async function, or a class with one async `evaluate` method, over a
`GraderContext` (pydantic-evals' `Evaluator.evaluate(ctx)` shape): the case, what the
agent produced, and the sandbox it worked in. It returns a `Check`, a list of them, or a
bool (one check named after the grader). Its checks join the case's own checks after the
case's kind grader has run; a failing one fails the case, one that raises makes it `error`.

    from assay.grading import Check, GraderContext

    async def no_todo_comments(ctx: GraderContext) -> Check:
        ...

A grader is named either by a registered name (the `assay.graders` entry point group, or
`register_grader`) or by a `module:attribute` reference imported on first use. A name that
resolves to nothing is the user's mistake, found by `assay validate` (exit 2, file:line).

Where one runs: a registered or installed grader here, in assay's process; a
`module:attribute` the project's files name (code a pull request can change) in a
confined child (`confined_graders.py`), unless the run has no OS sandbox.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.core.checks import Check
from assay.errors import ConfigError, JudgeError
from assay.registry.graders import (
    GRADERS,
    UserGrader,
    grader_problem,
    project_dir_of,
    register_grader,
    resolve_grader,
    resolve_project_grader,
)
from assay.registry.plugin_calls import is_interruption, what_it_raised

if TYPE_CHECKING:
    from assay.subject import AgentOutput
    from assay.suites.case import Case
    from assay.workspace import Sandbox

__all__ = [
    "GRADERS",
    "GraderContext",
    "GraderResult",
    "UserGrader",
    "grader_problem",
    "register_grader",
    "resolve_grader",
    "run_user_graders",
]


@dataclass(frozen=True)
class GraderContext:
    """What a user grader may look at for one attempt of one case."""

    case: Case
    """The case: its id, kind, kind-specific `spec`, source file and line."""
    output: AgentOutput
    """What the agent under test produced (findings, verdict, review text, trace events)."""
    sandbox: Sandbox
    """The sandbox the agent worked in; `sandbox.path` is its git work tree."""
    model: str | None
    """The subject model of this attempt, if any."""
    attempt: int
    """0-based repeat index."""
    artifacts_dir: Path
    """This attempt's own directory in the report dir (for files a grader wants kept)."""


GraderResult = Check | Iterable[Check] | bool
"""What a grader's `evaluate` returns."""

RunConfined = Callable[[str, Path, GraderContext], Awaitable[list[Check]]]
"""Runs the project's grader (reference, project directory) on a context, confined."""


async def run_user_graders(
    names: Iterable[str],
    ctx: GraderContext,
    *,
    confined: RunConfined | None = None,
) -> list[Check]:
    """Every named grader's checks, in the order named.

    One of the project's own (a `module:attribute` its configuration or a suite named) is
    handed to `confined` when given (the caller's OS sandbox: `confined_graders.py`); an
    installed or registered one, or any when `confined` is None (`--isolation none`),
    runs here."""
    checks: list[Check] = []
    for name in names:
        project_dir = project_dir_of(name)
        if project_dir is not None and confined is not None:
            checks += await confined(name, project_dir, ctx)
            continue
        if project_dir is None:
            grader = resolve_grader(name)
        else:
            try:  # first imported here, not while suites loaded (that was in a child)
                grader = resolve_project_grader(name)
            except ConfigError as exc:
                raise JudgeError(exc.message) from None
        try:
            result = await grader.evaluate(ctx)
        except BaseException as exc:  # the user's code broke: this case is `error`, the run goes on
            if is_interruption(exc):
                raise
            raise JudgeError(f"grader {name!r} raised {what_it_raised(exc)}") from exc
        checks += _checks_of(name, result)
    return checks


def _checks_of(name: str, result: object) -> list[Check]:
    if isinstance(result, bool):
        return [Check(id=name, kind="grader", status="pass" if result else "fail")]
    if isinstance(result, Check):
        return [result]
    if isinstance(result, Iterable) and not isinstance(result, str | bytes):
        items = list(result)
        if all(isinstance(item, Check) for item in items):
            return items
    raise JudgeError(
        f"grader {name!r} returned {type(result).__name__}: expected a Check, a list of "
        "Checks or a bool"
    )
