"""`assay run --dry-run`: print what the runner's dry run built (`runner/dry_run.py`)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from assay.core.text import defuse_workflow_commands
from assay.errors import SandboxError
from assay.report.terminal import printable
from assay.runner.dry_run import DryRun, build_dry_run
from assay.suites.case import Case
from assay.workspace import Sandbox

__all__ = ["DiffStat", "diff_stat", "dry_run", "print_dry_run"]

_SHORT_SHA = 7
_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


@dataclass(frozen=True)
class DiffStat:
    files: int
    insertions: int
    deletions: int

    def __str__(self) -> str:
        return (
            f"{self.files} file{'s' * (self.files != 1)} changed, "
            f"{self.insertions} insertion{'s' * (self.insertions != 1)}(+), "
            f"{self.deletions} deletion{'s' * (self.deletions != 1)}(-)"
        )


def dry_run(
    cases: Sequence[Case],
    *,
    work_root: Path | None,
    keep: bool,
    skill_override: Path | None,
    out: TextIO,
) -> int:
    """Build the sandbox of every case in `cases` and describe each on `out`; see
    `print_dry_run`. Raises ConfigError when `work_root` cannot be used."""
    built = build_dry_run(cases, work_root=work_root, skill_override=skill_override)
    return print_dry_run(built, keep=keep, out=out)


def print_dry_run(built: DryRun, *, keep: bool, out: TextIO) -> int:
    """Describe every sandbox of `built` on `out`; 1 when any failed to build, else 0.

    The workspaces are always kept (a dry run implies --keep-workspaces); `keep` only
    says whether the user asked.
    """
    for case, outcome in built.outcomes:
        if isinstance(outcome, SandboxError):
            # Its lines may quote fixture names: each is defused, as it stays a line.
            message = defuse_workflow_commands(str(outcome)).replace("\n", "\n" + " " * 8)
            out.write(f"{case.kind:<7} {printable(case.id)}: FAILED: {message}\n")
        else:
            out.write(f"{case.kind:<7} {printable(case.id)}: {_describe(outcome)}\n")
            out.write(f"{'':<7} {outcome.path}\n")
    failed = built.failed
    count = len(built.outcomes) - failed
    why = "" if keep else " (a dry run implies --keep-workspaces)"
    out.write(
        f"dry run: {count} sandbox{'es' * (count != 1)} built, {failed} failed; nothing was run.\n"
        f"Workspaces kept{why} under {built.root}; remove it when done.\n"
    )
    return 1 if failed else 0


def _describe(sandbox: Sandbox) -> str:
    base = sandbox.base_commit[:_SHORT_SHA]
    if sandbox.kind == "task":
        files = _count_files(sandbox.path)
        return f"{files} workspace file{'s' * (files != 1)}; baseline {base}"
    return f"{diff_stat(sandbox.diff)}; base {base}, head {sandbox.head_commit[:_SHORT_SHA]}"


def diff_stat(diff: str) -> DiffStat:
    """Files, insertions and deletions of a unified git diff (what `git diff --shortstat` says).

    Lines are counted inside hunks by the hunk headers' lengths, so content that itself
    starts with `+++` or `---` is counted right. Binary files count as files only.
    """
    files = insertions = deletions = 0
    old_left = new_left = 0
    for line in diff.split("\n"):
        if old_left > 0 or new_left > 0:
            if line.startswith("+"):
                insertions += 1
                new_left -= 1
            elif line.startswith("-"):
                deletions += 1
                old_left -= 1
            elif not line.startswith("\\"):  # "\ No newline at end of file"
                old_left -= 1
                new_left -= 1
            continue
        if line.startswith("diff --git "):
            files += 1
        elif match := _HUNK.match(line):
            old_left = int(match[1]) if match[1] is not None else 1
            new_left = int(match[2]) if match[2] is not None else 1
    return DiffStat(files, insertions, deletions)


def _count_files(repo: Path) -> int:
    count = 0
    for directory, subdirs, names in os.walk(repo):
        if directory == str(repo):
            subdirs[:] = [name for name in subdirs if name != ".git"]
        # os.walk lists a symlink to a directory among the directories (and skips it)
        count += len(names) + sum(os.path.islink(os.path.join(directory, d)) for d in subdirs)
    return count
