"""Where in a user's file something is: what every `path:line:col` message names.

Not to be confused with a finding's `Location` (`assay.core.findings`), which is a place
in the code under review.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["SourcePosition"]


@dataclass(frozen=True)
class SourcePosition:
    """Where in a user's file something is: 1-based line and column, 0 when unknown."""

    path: Path | str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        text = str(self.path)
        if self.line:
            text += f":{self.line}"
            if self.col:
                text += f":{self.col}"
        return text
