"""Exact conversion of carrier amounts to integer cents."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation


def to_cents(amount: str | int) -> int:
    """Convert a decimal amount such as "12.30" (major units) to cents, rounding half up."""
    try:
        value = Decimal(str(amount))
    except InvalidOperation:
        raise ValueError(f"not a decimal amount: {amount!r}") from None
    return int((value * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))
