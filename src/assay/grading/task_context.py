"""PVYai's context check of a task: required files present, forbidden ones absent.

Looked at before the verification commands run, as PVYai looks (`context.go`), with Go's
`os.Stat`: a symlink counts as its target, wherever that is (only whether it exists is
asked, nothing is read), and a path that cannot be looked up (under a file, in a loop,
behind a directory that may not be searched) makes the check an `error` whose message is
PVYai's, word for word: `stat workspace path "<path>": stat <absolute path>: <why>`, the
path quoted as Go's `%q` quotes it and the workspace made absolute as Go makes it.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.core.checks import Check
from assay.grading.task_results import task_check
from assay.suites.case import TaskSpec
from assay.upstream.go.fmt import go_abs, go_errno_text, go_quote
from assay.upstream.pvyai.paths import normalize_files

__all__ = ["context_check"]


def context_check(spec: TaskSpec, workspace: Path) -> Check:
    """The `context_checks` result of `spec` for the workspace at `workspace` (relative to
    the working directory, or absolute)."""
    required = normalize_files(spec.context.required_files)
    forbidden = normalize_files(spec.context.forbidden_files)
    root = go_abs(os.fspath(workspace))
    try:
        missing = [path for path in required if not _exists(root, path)]
        present = [path for path in forbidden if _exists(root, path)]
    except _Unreadable as exc:
        return task_check(
            "context_checks",
            "Context quality checks",
            "context",
            "error",
            str(exc),
            expectedFiles=list(required),
        )
    return task_check(
        "context_checks",
        "Context quality checks",
        "context",
        "fail" if missing or present else "pass",
        expectedFiles=list(required),
        missingFiles=missing,
        unexpectedFiles=present,
    )


class _Unreadable(Exception):
    """A context path that could not be looked up, in PVYai's words."""


def _exists(root: str, path: str) -> bool:
    target = os.path.join(root, path)
    try:
        os.stat(target)
    except FileNotFoundError:
        return False
    except OSError as exc:
        why = go_errno_text(exc.errno) if exc.errno else str(exc)
        problem = f"stat {target}: {why}"
        raise _Unreadable(f"stat workspace path {go_quote(path)}: {problem}") from None
    return True
