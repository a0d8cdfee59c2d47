"""The user-grader registry: which name (or `module:attribute`) means which grader.

Suites check the graders they name against it while they load (`assay validate` names a
typo at its file and line); `grading.user_graders` runs them. A grader is an async function
or a class with `async def evaluate(self, ctx)` over `assay.grading.GraderContext`.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._util.entrypoints import Registry
from assay.errors import ConfigError
from assay.registry.plugin_calls import what_it_raised
from assay.registry.project_graders import project_grader_problem

__all__ = [
    "GRADERS",
    "UserGrader",
    "grader_problem",
    "imported_grader_problem",
    "project_dir_of",
    "register_grader",
    "resolve_grader",
    "resolve_project_grader",
]

Evaluate = Callable[[Any], Awaitable[Any]]
"""`async (ctx: GraderContext) -> Check | Iterable[Check] | bool`. Typed loosely on purpose:
suites read this registry, and the grader's context (over cases and sandboxes) sits above."""


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
        except Exception as exc:  # its __init__ broke: the grader's mistake, said as such
            raise TypeError(f"class {obj.__name__}() raised {what_it_raised(exc)}") from None
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
    except Exception as exc:  # the module itself broke while importing: its author's to fix
        raise ConfigError(
            f"grader {reference!r}: importing {module_name} raised {what_it_raised(exc)}"
        ) from None
    obj: Any = module
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part, None)
        except Exception as exc:  # a module `__getattr__` or a property that raises
            raise ConfigError(
                f"grader {reference!r}: reading {attribute!r} of {module_name} raised "
                f"{what_it_raised(exc)}"
            ) from None
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

    `project_dir` is the directory of the configuration or suite naming it: a
    `module:attribute` named there is the project's own code (files a pull request can
    change), so it is imported in a confined child (`grading/confined_graders.py`), never
    here, and remembered as the project's (`project_dir_of`). Without `project_dir` (a
    library caller's own reference) it is imported here.
    """
    if not isinstance(reference, str) or not reference.strip():
        return f"a grader is a non-empty string (a name or module:function), got {reference!r}"
    if project_dir is not None and ":" in reference:
        _project_dirs[reference] = project_dir
        return project_grader_problem(reference, project_dir)
    return imported_grader_problem(reference)


def imported_grader_problem(reference: str, *, project_dir: Path | None = None) -> str | None:
    """`grader_problem` found by importing `reference` in this process, `project_dir` put on
    the import path (last, as pytest puts a project's root) so `mypkg.graders:x` is found
    beside the pyproject.toml that names it."""
    if project_dir is not None and str(project_dir) not in sys.path:
        sys.path.append(str(project_dir))
    try:
        resolve_grader(reference)
    except ConfigError as exc:
        return exc.message
    return None


_project_dirs: dict[str, Path] = {}
"""The `module:attribute` graders a configuration or suite named -> its directory."""


def project_dir_of(reference: str) -> Path | None:
    """Where the project's grader `reference` was named (None: not the project's: a
    registered name, an installed entry point, or a library caller's own)."""
    return _project_dirs.get(reference)


def resolve_project_grader(reference: str) -> UserGrader:
    """`resolve_grader`, the project's directory on the import path (`--isolation none`:
    the project's graders run in this process)."""
    project_dir = project_dir_of(reference)
    if project_dir is not None and str(project_dir) not in sys.path:
        sys.path.append(str(project_dir))
    return resolve_grader(reference)
