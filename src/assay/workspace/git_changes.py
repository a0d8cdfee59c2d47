"""What changed in a workspace since its baseline: PVYai's "changed files".

PVYai takes them from `git status --porcelain` against a baseline commit made right
after the fixture was copied. Two kinds of baseline, two readers:

- a task sandbox's `Baseline`, which assay kept in memory while building it: the work
  tree is compared with it directly (`baseline.py`), and the workspace's `.git`, which
  the agent controls, is never read;
- a commit in the workspace's own repository (`assay score`, where the user made the
  baseline and hands assay the result): git reads it, as PVYai does, through
  `run_git_bounded`, because that repository's config (which the verification commands
  could write) can name programs git runs: none of them runs, and git itself runs in
  the commands' OS sandbox when there is one, offline. Without one named, the baseline
  is the repository's root commit (PVYai's workspace has exactly one commit, the
  baseline). While HEAD is the baseline this is PVYai's own reading of `git status
  --porcelain --untracked-files=all`: ignored files are no change, and a staged rename
  counts its new name only, as PVYai's parser takes it. When the agent committed (HEAD
  moved off the baseline), status alone would hide those commits, so the work tree is
  compared with the baseline instead, untracked files added, a rename counting both
  names (as in a sandbox: the same verdict in `run`). Either way git stays out of
  submodules' work trees (`--ignore-submodules=dirty`: a submodule is changed when its
  commit is), whose config it would read, and starts no `git status` there.
What hides a change from `git status` there (index flags, `.git/info/exclude`, ignore
rules the agent wrote) is `WorkspaceChanges.hidden` (`git_hidden`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import ConfigError, SandboxError, SourcePosition
from assay.isolation.git import git_message, run_git_bounded
from assay.isolation.processes import CompletedProcess
from assay.workspace.baseline import Baseline, baseline_changes
from assay.workspace.git_hidden import hidden_from_status
from assay.workspace.workspace_changes import ChangeCollector, WorkspaceChanges

if TYPE_CHECKING:
    from assay.isolation.bwrap import Confinement

__all__ = ["WorkspaceChanges", "workspace_changes"]

_NO_SUBMODULES = "--ignore-submodules=dirty"
_STATUS = ["status", "--porcelain=v1", "-z", "--untracked-files=all", _NO_SUBMODULES]


async def workspace_changes(
    path: Path, *, baseline: Baseline | str | None = None, confinement: Confinement | None = None
) -> WorkspaceChanges:
    """The changes in the work tree at `path` since `baseline`.

    `baseline` is a task sandbox's Baseline, a commit id, or None (the root commit when
    there is exactly one, else HEAD); the last two ask git in the repository at `path`
    (see the module docstring), inside `confinement` when given. Against a Baseline this
    never raises for what the agent did (a workspace it removed lost every file).
    Otherwise raises ConfigError when `path` is not the top of a git work tree or git
    hangs there, SandboxError when git fails otherwise (e.g. the commit is gone).
    """
    if isinstance(baseline, Baseline):
        return await asyncio.to_thread(baseline_changes, path, baseline)
    if not path.is_dir():
        raise ConfigError("the workspace is not a directory", SourcePosition(path))
    repo = _Repository(path, confinement)
    head = await repo.head()
    if baseline is None:
        baseline = await repo.root_commit() if head is not None else None
    if baseline is not None and baseline != head:
        changes = await _changes_since(repo, baseline)
    else:
        status = await repo.git(_STATUS)
        collector = ChangeCollector()
        _read_status(status.stdout, collector)
        changes = collector.result()
    hidden = await hidden_from_status(repo.git, path, changed=changes.changed)
    return dataclasses.replace(changes, hidden=hidden)


@dataclass(frozen=True)
class _Repository:
    """The user's repository at `path`, which git reads inside `confinement` (when given)."""

    path: Path
    confinement: Confinement | None

    async def git(
        self, args: Sequence[str], *, tolerate: tuple[int, ...] = ()
    ) -> CompletedProcess[bytes]:
        path = self.path
        try:
            result = await run_git_bounded(args, cwd=path, isolation=self.confinement)
        except TimeoutError as exc:
            raise ConfigError(
                f"{exc} and was stopped; the repository may be too large, or its config "
                "may include a file that never ends (a FIFO)",
                SourcePosition(path),
            ) from None
        if result.returncode == 0 or result.returncode in tolerate:
            return result
        message = git_message(result)
        if "not a git repository" in message:
            raise ConfigError(self._not_a_work_tree(), SourcePosition(path))
        raise SandboxError(f"git failed in {path}: {message}")

    def _not_a_work_tree(self) -> str:
        if self.confinement is not None and (self.path / ".git").is_file():
            # A linked worktree (or submodule): its repository lives elsewhere, perhaps in
            # a checkout the sandbox hides.
            return (
                "not a git work tree inside the OS sandbox: its .git file names a repository "
                "elsewhere, which the sandbox may hide (score a workspace with its own .git "
                "directory, or pass --isolation none)"
            )
        return "not a git work tree (the workspace must be the top of a git repository)"

    async def head(self) -> str | None:
        result = await self.git(["rev-parse", "--verify", "-q", "HEAD"], tolerate=(1,))
        return result.stdout.decode("ascii").strip() if result.returncode == 0 else None  # 1: none

    async def root_commit(self) -> str | None:
        """HEAD's root commit when its history has exactly one, else None."""
        result = await self.git(["rev-list", "--max-parents=0", "HEAD", "--"])
        roots = result.stdout.decode("ascii").split()
        return roots[0] if len(roots) == 1 else None


def _read_status(raw: bytes, collector: ChangeCollector) -> None:
    """Parse `git status --porcelain=v1 -z`: `XY path\\0`, renames as `XY new\\0old\\0`."""
    records = raw.split(b"\x00")
    index = 0
    while index < len(records):
        record = records[index]
        index += 1
        if not record:
            continue
        code, name = record[:2].decode("ascii"), os.fsdecode(record[3:])
        staged = code[0]
        if staged in "RC":
            index += 1  # the old name: PVYai reads `R  old -> new` as the new name only
            collector.added.add(name)
        elif code == "??" or staged == "A":
            collector.added.add(name)
        elif "D" in code:
            collector.deleted.add(name)
        else:
            collector.modified.add(name)


async def _changes_since(repo: _Repository, baseline: str) -> WorkspaceChanges:
    """Changes from the commit `baseline` to the work tree, untracked files included."""
    if not baseline or baseline.startswith("-"):
        raise SandboxError(f"invalid baseline {baseline!r}")
    diff = await repo.git(
        ["diff", "--no-ext-diff", _NO_SUBMODULES, "--name-status", "-z", "-M", baseline, "--"]
    )
    collector = ChangeCollector()
    records = diff.stdout.split(b"\x00")
    index = 0
    while index + 1 < len(records):
        status, name = records[index].decode("ascii"), os.fsdecode(records[index + 1])
        index += 2
        letter = status[:1]
        if letter in "RC":
            new = os.fsdecode(records[index])
            index += 1
            if letter == "R":
                collector.renamed.add((name, new))
            else:
                collector.added.add(new)
        elif letter == "A":
            collector.added.add(name)
        elif letter == "D":
            collector.deleted.add(name)
        else:
            collector.modified.add(name)
    # Only what is untracked: what is tracked came from the diff above.
    listing = await repo.git([*_STATUS, "--no-renames"])
    untracked = (r for r in listing.stdout.split(b"\x00") if r[:3] == b"?? ")
    _read_status(b"".join(record + b"\x00" for record in untracked), collector)
    return collector.result()
