"""`--max-cost` seen from inside an attempt: the run's spend so far, plus the bridges' live spend.

The executor counts an attempt's cost when the attempt ends; a preset's CLI may spend the
whole budget before that. So the run's `Budget` is made visible to the bridges of the
attempts in flight (a context variable the executor sets, inherited by its workers), and
each bridge adds what its attempt has spent so far: the bridge refuses further calls once
the sum reaches the limit.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Protocol

__all__ = ["LIVE", "RUN_BUDGET", "LiveSpend", "SpendLimit", "over_budget"]


class SpendLimit(Protocol):
    limit_usd: float | None
    spent_usd: float
    """What finished attempts spent."""

    @property
    def reason(self) -> str: ...


RUN_BUDGET: ContextVar[SpendLimit | None] = ContextVar("assay_run_budget", default=None)


class LiveSpend:
    """What each open bridge has spent, by session, until its attempt's cost is counted."""

    def __init__(self) -> None:
        self._spent: dict[int, float] = {}

    def set(self, session_id: int, usd: float) -> None:
        self._spent[session_id] = usd

    def close(self, session_id: int) -> None:
        self._spent.pop(session_id, None)

    def total(self) -> float:
        return sum(self._spent.values())


LIVE = LiveSpend()


def over_budget(budget: SpendLimit | None) -> str | None:
    """The budget's reason when the run's spend (finished and live) reached it, else None."""
    if budget is None or budget.limit_usd is None:
        return None
    if budget.spent_usd + LIVE.total() >= budget.limit_usd:
        return budget.reason
    return None
