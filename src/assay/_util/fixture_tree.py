"""The one walk over a fixture directory: what a sandbox copies, and what it refuses.

Copying a fixture (`workspace/worktree.py`) and checking it while suites load share it,
so `assay validate` refuses exactly what a sandbox build would, without importing the
sandbox machinery.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from assay._util.display import human_size
from assay.errors import SandboxError

__all__ = [
    "DIRECTORY",
    "FILE",
    "MAX_EXPANDED_BYTES",
    "MAX_FIXTURE_FILE_BYTES",
    "MAX_MEMBERS",
    "SYMLINK",
    "check_fixture_tree",
    "copyfs_refusal",
    "fixture_entries",
    "fixture_file_problem",
]

DIRECTORY, FILE, SYMLINK = "dir", "file", "symlink"
MAX_EXPANDED_BYTES = 1024**3
"""A base state (directory or tarball) larger than 1 GiB is not a code-review fixture."""
MAX_MEMBERS = 100_000
"""Entries of a fixture directory or members of a tarball."""
MAX_FIXTURE_FILE_BYTES = 256 * 1024**2
"""One fixture file larger than this is not code to review (copied once per attempt)."""


def fixture_file_problem(path: Path, size: int, *, shown: Path | str) -> str | None:
    """Why the fixture file of `size` bytes cannot be copied into a sandbox, or None."""
    if size > MAX_FIXTURE_FILE_BYTES:
        return (
            f"{shown} is {human_size(size)}, over the {human_size(MAX_FIXTURE_FILE_BYTES)} "
            "limit for a fixture file"
        )
    return None


def fixture_entries(source: Path) -> Iterator[tuple[str, Path, str, str]]:
    """(kind, path, relative path, symlink target) for everything under fixture `source`.

    The one walk behind both copying a fixture and checking it when suites are loaded,
    so `validate` refuses exactly what a sandbox build would. `.git` is left out;
    a symlink must stay inside `source`; anything but a file, directory or symlink
    raises SandboxError, as do the limits tarballs have (entries, bytes in all) and a
    file over MAX_FIXTURE_FILE_BYTES.
    """
    real_root = os.path.realpath(source)
    if not os.path.isdir(real_root):
        raise SandboxError(f"{source} is not a directory")
    pending = [(real_root, "")]
    entries = total = 0
    while pending:
        directory, rel_dir = pending.pop()
        with os.scandir(directory) as listing:
            items = list(listing)
        for item in items:
            if item.name.casefold() == ".git":
                continue
            rel = rel_dir + item.name
            entries += 1
            if entries > MAX_MEMBERS:
                raise SandboxError(f"{source} holds more than {MAX_MEMBERS} entries, the limit")
            if item.is_symlink():
                target = _link_inside(Path(item.path), real_root, shown=source / rel)
                yield SYMLINK, Path(item.path), rel, target
            elif item.is_dir(follow_symlinks=False):
                yield DIRECTORY, Path(item.path), rel, ""
                pending.append((item.path, rel + "/"))
            elif item.is_file(follow_symlinks=False):
                size = item.stat(follow_symlinks=False).st_size
                problem = fixture_file_problem(Path(item.path), size, shown=source / rel)
                if problem:
                    raise SandboxError(problem)
                total += size
                if total > MAX_EXPANDED_BYTES:
                    limit = human_size(MAX_EXPANDED_BYTES)
                    raise SandboxError(f"{source} holds more than {limit}, the limit")
                yield FILE, Path(item.path), rel, ""
            else:
                raise SandboxError(
                    f"{source / rel}: not a regular file, directory or symlink; "
                    "fixtures may hold only those"
                )


def check_fixture_tree(source: Path) -> None:
    """Raise SandboxError for what `copy_tree` would refuse in `source`, copying nothing."""
    for _ in fixture_entries(source):
        pass


def copyfs_refusal(source: Path) -> str | None:
    """The first entry of directory `source` that Go 1.24's `os.CopyFS` refuses, or None.

    Cassandra copies a rubric case's base directory with `os.CopyFS`, which before Go 1.25
    copies regular files and directories only: at the first symlink (or FIFO, socket,
    device) it stops with `CopyFS <path>: invalid argument`, and the case fails. The entry
    is the one `fs.WalkDir` meets first (each directory's names sorted byte-wise, depth
    first, `.git` included), its path relative to `source`. Past MAX_MEMBERS entries the
    walk gives up (None): `check_fixture_tree` refuses such a tree anyway.
    """
    pending = [("", _sorted_names(source))]
    seen = 0
    while pending:
        prefix, names = pending[-1]
        if not names:
            pending.pop()
            continue
        name = names.pop()
        rel = prefix + name
        seen += 1
        if seen > MAX_MEMBERS:
            return None
        path = os.path.join(source, rel)
        mode = os.lstat(path).st_mode
        if stat.S_ISDIR(mode):
            pending.append((rel + "/", _sorted_names(Path(path))))
        elif not stat.S_ISREG(mode):
            return rel
    return None


def _sorted_names(directory: Path) -> list[str]:
    """The names in `directory`, last first (popped in Go's byte-wise order)."""
    return sorted(os.listdir(directory), key=os.fsencode, reverse=True)


def _link_inside(link: Path, real_root: str, *, shown: Path) -> str:
    """The target of `link` when it resolves inside `real_root`; SandboxError otherwise."""
    target = os.readlink(link)
    if os.path.isabs(target):
        raise SandboxError(
            f"symlink {shown} -> {target} is absolute; fixture symlinks must be relative"
        )
    resolved = os.path.realpath(os.path.join(os.path.dirname(link), target))
    if resolved != real_root and not resolved.startswith(real_root.rstrip(os.sep) + os.sep):
        raise SandboxError(f"symlink {shown} -> {target} points outside the fixture")
    return target
