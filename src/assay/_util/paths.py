"""The one place that decides whether a user-supplied path stays inside its root."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from assay.errors import ConfigError, Location

__all__ = ["PathEscape", "resolve_inside", "safe_relative"]


class PathEscape(ValueError):
    """A path leaves the directory it must stay in."""


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


def resolve_inside(root: Path, raw: str, *, location: Location | None = None) -> Path:
    """Join `raw` onto `root` and resolve symlinks; the result must stay inside `root`.

    Raises ConfigError (naming `location`) when the path is absolute, uses `..`, or a
    symlink on the way leads outside. The target need not exist.
    """
    try:
        relative = safe_relative(raw)
    except PathEscape as exc:
        raise ConfigError(str(exc), location) from None
    real_root = Path(os.path.realpath(root))
    candidate = Path(os.path.realpath(real_root / relative))
    if candidate != real_root and real_root not in candidate.parents:
        raise ConfigError(
            f"{raw!r} resolves to {candidate}, outside {real_root} (a symlink escapes the root)",
            location,
        )
    return candidate
