"""Paths and sizes as people read them: paths relative to the working directory when
inside it, sizes in the unit that keeps them short."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from assay.core.paths import is_inside
from assay.errors import ConfigError, SourcePosition

__all__ = ["display_location", "display_path", "displayed", "human_size"]


def human_size(size: int) -> str:
    """`512 bytes`, `3.2 KiB`, `4.0 MiB`, `1.2 GiB`."""
    if size < 1024:
        return f"{size} bytes"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


def display_path(path: Path | str) -> str:
    """`path` relative to the working directory when it is inside it, else absolute."""
    return _display_path(os.fspath(path), os.getcwd())


@lru_cache(maxsize=4096)
def _display_path(path: str, cwd: str) -> str:
    # Kept per (path, working directory): a file with 100,000 problems sorts and prints
    # them by this, once each (pathlib's `parents` walk made that 8 s).
    absolute = os.path.abspath(os.path.join(cwd, path))
    if absolute == cwd:
        return "."
    if is_inside(absolute, cwd, resolved=True):  # on the strings: no link is resolved
        return absolute[len(cwd.rstrip("/")) + 1 :]
    return absolute


def display_location(location: SourcePosition) -> SourcePosition:
    return SourcePosition(display_path(location.path), location.line, location.col)


def displayed(error: ConfigError) -> ConfigError:
    """The same error with its location's path made readable."""
    if error.location is None:
        return error
    return ConfigError(error.message, display_location(error.location))
