"""Whether a path stays inside its root: the one rule, symlinks resolved.

Every check of "is this path inside that directory" goes through `is_inside`; a bare
`startswith(root)` is wrong twice over (`/a/bc` is not inside `/a/b`, and a symlink inside
the root may lead anywhere), so nothing does it by hand.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

__all__ = [
    "PathEscape",
    "is_inside",
    "names_under",
    "real_path",
    "relative_inside",
    "safe_relative",
]


class PathEscape(ValueError):
    """A path leaves the directory it must stay in."""


def real_path(path: str | os.PathLike[str]) -> Path:
    """`path` absolute, with every symlink on the way resolved (the target need not exist)."""
    return Path(os.path.realpath(path))


def is_inside(
    path: str | os.PathLike[str], root: str | os.PathLike[str], *, resolved: bool = False
) -> bool:
    """True when `path` is `root` or below it, after resolving symlinks in both.

    `resolved=True` says both are already real paths (from `real_path`), so a walk over
    many files does not resolve the root again for each one.
    """
    if resolved:
        real, real_root = os.path.normpath(path), os.path.normpath(root)
    else:
        real, real_root = os.path.realpath(path), os.path.realpath(root)
    # On the strings: both are absolute and normalised, and a Path's `parents` walk built
    # an object per level for every file of a sandbox or report.
    real, real_root = os.path.normcase(real), os.path.normcase(real_root)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def relative_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str | None:
    """`path` relative to `root` as a POSIX string (symlinks resolved), None when outside."""
    real, real_root = real_path(path), real_path(root)
    if not is_inside(real, real_root, resolved=True):
        return None
    return real.relative_to(real_root).as_posix()


def safe_relative(raw: str) -> PurePosixPath:
    """Check a relative, forward-slash path for absolute parts and `..`; return it normalised.

    Raises PathEscape. Used for names that never touch the disk as given (repo paths,
    tar members) as well as for paths joined onto a root.
    """
    if not raw or "\x00" in raw:
        raise PathEscape(f"invalid path {raw!r}")
    text = raw.replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise PathEscape(f"{raw!r} is absolute; use a path relative to its root")
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise PathEscape(f"{raw!r} contains '..'; paths must stay inside their root")
    if not parts:
        raise PathEscape(f"invalid path {raw!r}")
    return PurePosixPath(*parts)


def names_under(sorted_names: Sequence[str], directory: str) -> Iterator[str]:
    """The names of `sorted_names` (sorted, relative, `/`-separated: git's listings) that
    lie under `directory`, in order; found by bisection, not by a scan of them all."""
    prefix = directory.rstrip("/") + "/"
    index = bisect.bisect_left(sorted_names, prefix)
    while index < len(sorted_names) and sorted_names[index].startswith(prefix):
        yield sorted_names[index]
        index += 1
