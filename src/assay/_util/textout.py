"""Writing text: large text without a second whole copy of it in memory, and a stream
whose text cannot start a GitHub workflow command."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TextIO

from assay.core.text import defuse_workflow_commands

__all__ = ["DefusedStream", "write_in_slices"]

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


class DefusedStream:
    """`raw`, except that nothing written to it can start a workflow command: for stderr,
    where assay's warnings and errors quote suite files, reports and agents (a CI log
    reads commands there too). `assay ci` guards its streams itself (action/commands.py).

    Each write is defused on its own: `print` writes a message whole, and a write that
    starts mid-line gains at most a harmless space.
    """

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(defuse_workflow_commands(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding...
        return getattr(self.raw, name)
