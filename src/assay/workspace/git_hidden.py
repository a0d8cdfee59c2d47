"""What hides a change from `git status` in a repository git reads (`assay score`).

PVYai's changed files are `git status --porcelain`, and in the user's repository more than
ignore rules decide what status shows: an index entry marked `skip-worktree` or
`assume-unchanged` is never compared with its file, and a rule in `.git/info/exclude` (or
any excludes file outside the work tree) hides new files as a `.gitignore` does, yet is no
file of the baseline. These are the paths so hidden (`WorkspaceChanges.hidden`):

- every index entry with either flag (`git ls-files -v`: `S`, or a lowercase tag);
- every untracked file git ignores (`ls-files --others --ignored --exclude-standard`)
  that the baseline's own rules (its `.gitignore` files, where unchanged) do not ignore:
  a rule of `.git/info/exclude`, of a global excludes file, or of a `.gitignore` the
  agent wrote or changed hides it. Files the baseline's rules ignore (build output) are
  no concern; those rules are matched by `baseline.ignored_paths`, on a scratch copy.

A fully ignored directory is one entry (`node_modules/`), as `--directory` lists it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Collection, Iterable
from pathlib import Path

from assay.isolation.processes import CompletedProcess
from assay.workspace.baseline import ignored_paths, read_ignore_rules

__all__ = ["GitCall", "hidden_from_status"]

GitCall = Callable[..., Awaitable[CompletedProcess[bytes]]]
"""Runs git with these arguments in the repository (`git_changes._Repository.git`)."""

_FLAGGED = frozenset("S") | frozenset("hsmrck")
"""`ls-files -v` tags of an entry with `skip-worktree` (`S`) or `assume-unchanged`
(lowercase) set."""


async def hidden_from_status(
    git: GitCall, workspace: Path, *, changed: Collection[str]
) -> tuple[str, ...]:
    """The paths `git status` cannot show a change of (see the module docstring), sorted.

    `changed`: the paths already counted as changed (a modified `.gitignore` among them).
    """
    listing = await git(["ls-files", "-v", "-z"])
    tracked: set[str] = set()
    hidden: set[str] = set()
    for record in _records(listing.stdout):
        tag, name = record[:1].decode("ascii", "replace"), os.fsdecode(record[2:])
        tracked.add(name)
        if tag in _FLAGGED:
            hidden.add(name)
    others = await git(
        ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"]
    )
    ignored = _without_listed_parents(os.fsdecode(name) for name in _records(others.stdout))
    if ignored:
        # The baseline's own rules: its `.gitignore` files the agent left as they were.
        kept = [
            path
            for path in tracked
            if path.rsplit("/", 1)[-1] == ".gitignore" and path not in changed
        ]
        rules = await asyncio.to_thread(read_ignore_rules, workspace, kept)
        expected = await asyncio.to_thread(ignored_paths, ignored, rules)
        hidden.update(name for name in ignored if name not in expected)
    return tuple(sorted(hidden))


def _records(raw: bytes) -> list[bytes]:
    return [record for record in raw.split(b"\x00") if record]


def _without_listed_parents(names: Iterable[str]) -> list[str]:
    """`names` without a directory whose files are listed too (git lists a directory that
    a `.gitignore` inside it empties both as `dir/` and by its files)."""
    listed = sorted(set(names))
    if not listed:
        return []
    return [
        name
        for name, after in zip(listed, [*listed[1:], ""], strict=True)
        if not (name.endswith("/") and after.startswith(name))
    ]
