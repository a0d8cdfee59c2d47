"""Numbers a person typed: on the command line, in an `ASSAY_*` variable, in an Action input."""

from __future__ import annotations

__all__ = ["read_number"]


def read_number(text: str, kind: type[int] | type[float]) -> int | float:
    """`text`, typed on the command line or in an `ASSAY_*` variable, as a whole number
    (`int`) or a number (`float`); ValueError saying what it is not.

    Stricter than int() and float(), which read digit separators: `1_0` is 10 to Python,
    but someone typing a threshold or a concurrency made a typo. A negative zero is zero,
    so `--threshold -0` is never shown as `-0.00`.
    """
    what = "a whole number" if kind is int else "a number"
    if "_" in text:
        raise ValueError(f"not {what}: digit separators (_) are not accepted")
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"not {what}") from None
    return value + 0.0 if kind is float else value  # -0.0 + 0.0 is 0.0
