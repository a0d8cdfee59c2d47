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
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util.entrypoints import Registry
from assay.core.checks import Check
from assay.errors import ConfigError, JudgeError

if TYPE_CHECKING:
    from assay.sandbox import Sandbox
    from assay.subject import AgentOutput
    from assay.suites.case import Case

__all__ = [
    "GRADERS",
    "GraderContext",
    "UserGrader",
    "register_grader",
    "grader_problem",
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
Evaluate = Callable[[GraderContext], Awaitable[GraderResult]]


@dataclass(frozen=True)
class UserGrader:
    name: str
    evaluate: Evaluate


def _adapt(name: str, obj: object) -> UserGrader:
    if isinstance(obj, UserGrader):
        return obj
    if inspect.isclass(obj):
        method = getattr(obj, "evaluate", None)
        if method is None or not inspect.iscoroutinefunction(method):
            raise TypeError(f"class {obj.__name__} needs an `async def evaluate(self, ctx)`")
        try:
            instance: Any = obj()
        except TypeError as exc:
            raise TypeError(
                f"class {obj.__name__} must be callable without arguments: {exc}"
            ) from None
        return UserGrader(name, instance.evaluate)
    if inspect.iscoroutinefunction(obj):
        return UserGrader(name, obj)
    raise TypeError(
        f"expected an async function or a class with `async def evaluate`, got {type(obj).__name__}"
    )


GRADERS: Registry[UserGrader] = Registry("assay.graders", what="grader", adapt=_adapt)


def register_grader(name: str, grader: object) -> None:
    """Make `name` usable in `graders = [...]` (an async function or an evaluator class)."""
    GRADERS.register(name, _adapt(name, grader), replace=True)


_by_reference: dict[str, UserGrader] = {}


def resolve_grader(reference: str) -> UserGrader:
    """The grader `reference` names: a registered name, or `module:attribute`."""
    if ":" not in reference:
        grader = GRADERS.get(reference)
        if grader is None:
            raise ConfigError(
                f"unknown grader {reference!r}{GRADERS.did_you_mean(reference)}: name one "
                "registered in the assay.graders entry point group, or write module:function"
            )
        return grader
    cached = _by_reference.get(reference)
    if cached is not None:
        return cached
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"grader {reference!r}: cannot import {module_name}: {exc}") from None
    obj: Any = module
    for part in attribute.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ConfigError(f"grader {reference!r}: {module_name} has no {attribute!r}")
    try:
        grader = _adapt(reference, obj)
    except TypeError as exc:
        raise ConfigError(f"grader {reference!r}: {exc}") from None
    _by_reference[reference] = grader
    return grader


def grader_problem(reference: object, *, project_dir: Path | None = None) -> str | None:
    """Why `reference` names no usable grader, or None (it is imported now, so a typo or a
    broken module is found by `assay validate`, not in the middle of a run).

    `project_dir` (the directory of the configuration or suite naming it) is put on the
    import path, as pytest does with a project's root, so `mypkg.graders:x` is found beside
    the pyproject.toml that names it.
    """
    if not isinstance(reference, str) or not reference.strip():
        return f"a grader is a non-empty string (a name or module:function), got {reference!r}"
    if project_dir is not None and ":" in reference and str(project_dir) not in sys.path:
        sys.path.append(str(project_dir))
    try:
        resolve_grader(reference)
    except ConfigError as exc:
        return exc.message
    return None


async def run_user_graders(names: Iterable[str], ctx: GraderContext) -> list[Check]:
    """Every named grader's checks, in the order named."""
    checks: list[Check] = []
    for name in names:
        grader = resolve_grader(name)
        try:
            result = await grader.evaluate(ctx)
        except Exception as exc:  # the user's code broke: this case is `error`, the run goes on
            raise JudgeError(f"grader {name!r} raised {type(exc).__name__}: {exc}") from exc
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
