"""Putting untrusted text (diffs, file contents, JSON) into a model prompt safely and briefly."""

from __future__ import annotations

import re

__all__ = ["MAX_DIFF_CHARS", "cap_diff", "fenced"]

_BACKTICK_RUNS = re.compile("`+")

MAX_DIFF_CHARS = 120_000
"""About 30k tokens: the most of a diff the reviewer or a judge is shown."""


def cap_diff(diff: str, *, hint: str = "") -> str:
    """`diff` cut at MAX_DIFF_CHARS with a note saying so (and `hint`, what to do instead)."""
    if len(diff) <= MAX_DIFF_CHARS:
        return diff
    note = f"[diff truncated: the first {MAX_DIFF_CHARS} of {len(diff)} characters are shown"
    return f"{diff[:MAX_DIFF_CHARS]}\n{note}{'; ' + hint if hint else ''}]"


def fenced(text: str, language: str = "") -> str:
    """A markdown code block whose fence is longer than any backtick run inside `text`.

    Untrusted text therefore cannot close the block early and pass itself off as prompt.
    """
    # In C: a Python loop over the characters took 36-81 ms for a capped diff (2-4 ms now),
    # once in the reviewer's prompt and once in the judge's, at every case.
    longest = max(map(len, _BACKTICK_RUNS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"
