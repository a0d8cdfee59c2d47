"""Paths as Warden (Node) joins them."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["node_join"]


def node_join(root: Path, raw: str) -> Path:
    """Node's `path.join(root, raw)` (POSIX): a leading `/` in `raw` is relative, `.` and
    `..` are normalised without looking at the disk; a backslash reads as `/`."""
    forward = raw.replace("\\", "/")
    return Path(os.path.normpath(f"{root}/{forward}"))
