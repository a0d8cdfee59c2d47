"""Putting untrusted text (diffs, file contents, JSON) into a model prompt safely and briefly."""

from __future__ import annotations

__all__ = ["MAX_DIFF_CHARS", "cap_diff", "fenced"]

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
    fence = "`" * max(3, _longest_run(text, "`") + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"


def _longest_run(text: str, char: str) -> int:
    """The length of the longest run of `char` in `text`.

    `char * n in text` holds for every n up to that length and for none beyond, so it is
    found by doubling n and then halving the gap: O(log n) substring searches, each in C.
    A capped diff takes 0.1 ms; a Python loop over its characters took 36-81 ms, and a
    regular expression's list of every run 1-3 ms, in both the reviewer's prompt and the
    judge's, at every case.
    """
    found, missing = 0, 1  # a run of `found` occurs; one of `missing` does not, once known
    while char * missing in text:
        found, missing = missing, missing * 2
    while missing - found > 1:
        middle = (found + missing) // 2
        found, missing = (middle, missing) if char * middle in text else (found, middle)
    return found
