"""What changed in a workspace since its baseline: PVYai's "changed files".

PVYai takes them from `git status --porcelain` against a baseline commit made right
after the fixture was copied. Two kinds of baseline, two readers:

- a task sandbox's `Baseline`, which assay kept in memory while building it: the work
  tree is compared with it directly (`baseline.py`), and the workspace's `.git`, which
  the agent controls, is never read;
- a commit in the workspace's own repository (`assay score`, where the user made the
  baseline and hands assay the result): git reads it, as PVYai does, through
  `run_git_bounded`, because that repository's config can name commands git runs.
  Without one named, the baseline is the repository's root commit (PVYai's workspace
  has exactly one commit, the baseline). While HEAD is the baseline this is PVYai's own
  reading of `git status --porcelain --untracked-files=all`: ignored files are no
  change, and a staged rename counts its new name only, as PVYai's parser takes it.
  When the agent committed (HEAD moved off the baseline), status alone would hide those
  commits, so the work tree is compared with the baseline instead, untracked files
  added, a rename counting both names (as in a sandbox: the same verdict in `run`).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from assay.errors import ConfigError, SandboxError, SourcePosition
from assay.sandbox.baseline import Baseline, baseline_changes
from assay.sandbox.gitenv import git_message, run_git_bounded
from assay.sandbox.workspace_changes import ChangeCollector, WorkspaceChanges

__all__ = ["WorkspaceChanges", "workspace_changes"]

_STATUS = ["status", "--porcelain=v1", "-z", "--untracked-files=all"]


async def workspace_changes(
    path: Path, *, baseline: Baseline | str | None = None
) -> WorkspaceChanges:
    """The changes in the work tree at `path` since `baseline`.

    `baseline` is a task sandbox's Baseline, a commit id, or None (the root commit when
    there is exactly one, else HEAD); the last two trust the repository at `path` (see
    the module docstring). Against a Baseline this
    never raises for what the agent did (a workspace it removed lost every file).
    Otherwise raises ConfigError when `path` is not the top of a git work tree or git
    hangs there, SandboxError when git fails otherwise (e.g. the commit is gone).
    """
    if isinstance(baseline, Baseline):
        return await asyncio.to_thread(baseline_changes, path, baseline)
    if not path.is_dir():
        raise ConfigError("the workspace is not a directory", SourcePosition(path))
    head = await _head(path)
    if baseline is None:
        baseline = await _root_commit(path) if head is not None else None
    if baseline is not None and baseline != head:
        return await _changes_since(path, baseline)
    status = await _git(path, _STATUS)
    collector = ChangeCollector()
    _read_status(status.stdout, collector)
    return collector.result()


async def _git(
    path: Path, args: Sequence[str], *, tolerate: tuple[int, ...] = ()
) -> subprocess.CompletedProcess[bytes]:
    try:
        result = await run_git_bounded(args, cwd=path)
    except TimeoutError as exc:
        raise ConfigError(
            f"{exc} and was stopped; a filter or fsmonitor command the repository's "
            "config names may hang",
            SourcePosition(path),
        ) from None
    if result.returncode == 0 or result.returncode in tolerate:
        return result
    message = git_message(result)
    if "not a git repository" in message:
        raise ConfigError(
            "not a git work tree (the workspace must be the top of a git repository)",
            SourcePosition(path),
        )
    raise SandboxError(f"git failed in {path}: {message}")


async def _head(path: Path) -> str | None:
    result = await _git(path, ["rev-parse", "--verify", "-q", "HEAD"], tolerate=(1,))
    return result.stdout.decode("ascii").strip() if result.returncode == 0 else None  # 1: none


async def _root_commit(path: Path) -> str | None:
    """HEAD's root commit when its history has exactly one, else None."""
    result = await _git(path, ["rev-list", "--max-parents=0", "HEAD", "--"])
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


async def _changes_since(path: Path, baseline: str) -> WorkspaceChanges:
    """Changes from the commit `baseline` to the work tree, untracked files included."""
    if not baseline or baseline.startswith("-"):
        raise SandboxError(f"invalid baseline {baseline!r}")
    diff = await _git(path, ["diff", "--no-ext-diff", "--name-status", "-z", "-M", baseline, "--"])
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
    listing = await _git(path, [*_STATUS, "--no-renames"])
    untracked = (r for r in listing.stdout.split(b"\x00") if r[:3] == b"?? ")
    _read_status(b"".join(record + b"\x00" for record in untracked), collector)
    return collector.result()
