"""Paths as people read them: relative to the working directory when inside it."""

from __future__ import annotations

import os
from pathlib import Path

from assay.errors import ConfigError, Location

__all__ = ["display_location", "display_path", "displayed"]


def display_path(path: Path | str) -> str:
    """`path` relative to the working directory when it is inside it, else absolute."""
    absolute = Path(os.path.abspath(path))
    cwd = Path(os.getcwd())
    if absolute == cwd:
        return "."
    if cwd in absolute.parents:
        return absolute.relative_to(cwd).as_posix()
    return str(absolute)


def display_location(location: Location) -> Location:
    return Location(display_path(location.path), location.line, location.col)


def displayed(error: ConfigError) -> ConfigError:
    """The same error with its location's path made readable."""
    if error.location is None:
        return error
    return ConfigError(error.message, display_location(error.location))
