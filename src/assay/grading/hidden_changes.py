"""Changes `git status` does not show: said in every output, failing the task on request.

An agent can hide a file from PVYai's `git status` (a `greet/.gitignore` holding `*` hides
itself and a `greet/__init__.py` that rigs the tests), and in a repository git reads
(`assay score`) an index entry marked `skip-worktree` or `assume-unchanged`, or a rule in
`.git/info/exclude`, hides a change as well; and PVYai's path rule leaves a changed file
whose name holds `:` out of its list (`suites.pvyai_paths.unnamed_changes`). PVYai's
verdict ignores them, and so does assay's by default (`--hidden-changes warn`): the
changed-files check keeps PVYai's verdict and names them (`hiddenFiles`), and the run's
report carries one warning per task (`run.warnings`) that every output shows.
`--hidden-changes fail` adds a failing `hidden_changes` check naming them, so the task
fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal, get_args

from assay.grading.task_results import task_check

if TYPE_CHECKING:
    from assay.core.checks import Check

__all__ = [
    "HIDDEN_CHANGES_MODES",
    "HiddenChangesMode",
    "hidden_change_warning",
    "hidden_changes_check",
    "hidden_files_of",
    "hidden_files_text",
]

HiddenChangesMode = Literal["warn", "fail"]
HIDDEN_CHANGES_MODES: tuple[str, ...] = get_args(HiddenChangesMode)

HIDDEN_FILES_FIELD = "hiddenFiles"
"""The field of the changed-files check (and of `hidden_changes`) that names them."""

_SHOWN = 10
"""Files named in one line; the rest are counted (report.json has them all)."""


def hidden_files_text(hidden: Sequence[str]) -> str:
    """`hidden` as one line: the first few names and how many more."""
    more = f" and {len(hidden) - _SHOWN} more" if len(hidden) > _SHOWN else ""
    return ", ".join(hidden[:_SHOWN]) + more


def hidden_changes_check(hidden: Sequence[str]) -> Check:
    """The failing check `--hidden-changes fail` adds when anything is hidden."""
    return task_check(
        "hidden_changes",
        "Changes hidden from git status",
        "changed_files",
        "fail",
        f"{len(hidden)} change(s) hidden from git status or PVYai's changed files "
        "(--hidden-changes fail): " + hidden_files_text(hidden),
        **{HIDDEN_FILES_FIELD: list(hidden)},
    )


def hidden_files_of(checks: Iterable[Check]) -> list[str]:
    """Every file a case's checks say was hidden from git status, sorted."""
    found: set[str] = set()
    for check in checks:
        files = (check.model_extra or {}).get(HIDDEN_FILES_FIELD)
        if isinstance(files, list):
            found.update(str(name) for name in files)
    return sorted(found)


def hidden_change_warning(case_id: str, checks: Iterable[Check]) -> str | None:
    """The warning for a case whose agent hid changes from git status, naming the files
    (its checks: every attempt's); None when it hid nothing."""
    hidden = hidden_files_of(checks)
    if not hidden:
        return None
    return (
        f"{case_id}: {len(hidden)} change(s) hidden from git status or PVYai's changed "
        f"files (by ignore rules or index flags the baseline did not have, or a ':' in "
        f"the name): {hidden_files_text(hidden)}; PVYai's verdict ignores them "
        "(--hidden-changes fail fails the task)"
    )
