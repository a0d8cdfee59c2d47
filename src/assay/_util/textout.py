"""Writing large text without a second whole copy of it in memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

__all__ = ["write_in_slices"]

_SLICE = 1 << 20
"""Characters encoded at a time: a text file encodes each `write` whole, so one 20 MB
string written at once is a 20 MB bytes copy beside it."""


def write_in_slices(out: TextIO, pieces: Iterable[str]) -> None:
    """Write every piece to `out`, each in slices of at most 1 Mi characters."""
    for piece in pieces:
        if len(piece) <= _SLICE:
            out.write(piece)
            continue
        for start in range(0, len(piece), _SLICE):
            out.write(piece[start : start + _SLICE])
