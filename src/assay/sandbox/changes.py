"""What changed in a workspace since its baseline: PVYai's "changed files".

PVYai takes them from `git status --porcelain` against a baseline commit made right
after the fixture was copied. When the agent committed (HEAD moved off the baseline),
status alone would hide those commits, so the work tree is compared with the baseline
instead, untracked files added.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError, Location, SandboxError
from assay.sandbox.gitenv import git_message, git_output, run_git

__all__ = ["WorkspaceChanges", "workspace_changes"]


@dataclass(frozen=True)
class WorkspaceChanges:
    """Paths changed relative to the baseline, repo-relative, each kind sorted."""

    changed: tuple[str, ...]
    """Every path added, modified, deleted or renamed (both names), untracked files included."""
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    """(old, new) pairs."""


class _Collector:
    def __init__(self) -> None:
        self.added: set[str] = set()
        self.modified: set[str] = set()
        self.deleted: set[str] = set()
        self.renamed: set[tuple[str, str]] = set()

    def result(self) -> WorkspaceChanges:
        # A path git no longer tracks but that still exists (e.g. `git rm --cached`) shows
        # up deleted and untracked at once: to the workspace it is a modified file.
        both = self.added & self.deleted
        self.modified |= both
        self.added -= both
        self.deleted -= both
        changed = self.added | self.modified | self.deleted
        changed.update(name for pair in self.renamed for name in pair)
        return WorkspaceChanges(
            changed=tuple(sorted(changed)),
            added=tuple(sorted(self.added)),
            modified=tuple(sorted(self.modified)),
            deleted=tuple(sorted(self.deleted)),
            renamed=tuple(sorted(self.renamed)),
        )


def workspace_changes(path: Path, *, baseline: str | None = None) -> WorkspaceChanges:
    """The changes in the git work tree at `path` since `baseline` (default: HEAD).

    Raises ConfigError when `path` is not the top of a git work tree, SandboxError when
    git fails otherwise (e.g. the baseline commit is gone).
    """
    if not path.is_dir():
        raise ConfigError("the workspace is not a directory", Location(path))
    if baseline is not None and baseline != _head(path):
        return _changes_since(path, baseline)
    result = run_git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], cwd=path)
    _check(result, path)
    return _parse_status(result.stdout)


def _head(path: Path) -> str | None:
    result = run_git(["rev-parse", "--verify", "-q", "HEAD"], cwd=path)
    _check(result, path, tolerate=(1,))  # 1: no commit yet
    return result.stdout.decode("ascii").strip() if result.returncode == 0 else None


def _check(
    result: subprocess.CompletedProcess[bytes], path: Path, *, tolerate: tuple[int, ...] = ()
) -> None:
    if result.returncode == 0 or result.returncode in tolerate:
        return
    message = git_message(result)
    if "not a git repository" in message:
        raise ConfigError(
            "not a git work tree (the workspace must be the top of a git repository)",
            Location(path),
        )
    raise SandboxError(f"git failed in {path}: {message}")


def _parse_status(raw: bytes) -> WorkspaceChanges:
    """Parse `git status --porcelain=v1 -z`: `XY path\\0`, renames as `XY new\\0old\\0`."""
    collector = _Collector()
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
            old = os.fsdecode(records[index])
            index += 1
            if staged == "R":
                collector.renamed.add((old, name))
            else:
                collector.added.add(name)
        elif code == "??" or staged == "A":
            collector.added.add(name)
        elif "D" in code:
            collector.deleted.add(name)
        else:
            collector.modified.add(name)
    return collector.result()


def _changes_since(path: Path, baseline: str) -> WorkspaceChanges:
    """Changes from the commit `baseline` to the work tree, untracked files included."""
    if not baseline or baseline.startswith("-"):
        raise SandboxError(f"invalid baseline {baseline!r}")
    diff = run_git(["diff", "--no-ext-diff", "--name-status", "-z", "-M", baseline, "--"], cwd=path)
    _check(diff, path)
    collector = _Collector()
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
    untracked = git_output(["ls-files", "--others", "--exclude-standard", "-z"], cwd=path)
    collector.added.update(os.fsdecode(name) for name in untracked.split(b"\x00") if name)
    return collector.result()
