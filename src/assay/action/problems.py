"""Configuration problems as annotations on the file and line they name.

Shared by `assay ci` and the decision step (decide.py), so standard library only.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Literal

from assay.action import commands
from assay.core.paths import relative_inside
from assay.errors import ConfigError, ConfigErrors

__all__ = ["annotate_config_problem", "report_config_error", "report_unexpected_error"]


def _relative(path: Path | str, workspace: Path) -> str:
    relative = relative_inside(path, workspace)
    return str(path) if relative is None else relative


def annotate_config_problem(
    problem: ConfigError, workspace: Path, *, level: Literal["error", "warning"]
) -> None:
    where = problem.location
    emit = commands.error if level == "error" else commands.warning
    emit(
        problem.message,
        file=_relative(where.path, workspace) if where else None,
        line=where.line if where and where.line else None,
        title="assay: configuration" if level == "error" else "assay: warning",
    )


def report_config_error(exc: ConfigError, workspace: Path) -> None:
    """Each problem of `exc` (one, or every one of a ConfigErrors) as an error annotation."""
    if isinstance(exc, ConfigErrors):
        for problem in exc.errors:
            report_config_error(problem, workspace)
    else:
        annotate_config_problem(exc, workspace, level="error")


def report_unexpected_error(exc: Exception) -> None:
    """A bug or an unforeseen failure: one error annotation, the traceback in the log.

    Called inside `commands.guarded_output()`, so the traceback (which may quote an
    attacker's text or a secret) is neutralised and redacted like any other output.
    """
    from assay._util.secrets import redact  # lazy: start-up (not loaded with this module)

    traceback.print_exception(exc, file=sys.stderr)
    message = commands.neutralise(redact(f"{type(exc).__name__}: {exc}"))
    commands.error(message, title="assay: unexpected error")
