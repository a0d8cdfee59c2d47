"""A count with its noun in the right number: `1 case`, `2 cases`, `1 error`, `0 errors`."""

from __future__ import annotations

__all__ = ["count_of"]


def count_of(count: int, noun: str, plural: str | None = None) -> str:
    """`count_of(1, "case")` -> `1 case`; `count_of(2, "case")` -> `2 cases`."""
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"
