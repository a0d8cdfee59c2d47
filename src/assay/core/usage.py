"""Token use and cost of model calls, and how several of them add up."""

from __future__ import annotations

from collections.abc import Iterable

from assay.core._contract import Amount, ContractModel, Count

__all__ = ["Usage", "sum_usage"]


class Usage(ContractModel):
    input_tokens: Count = 0
    output_tokens: Count = 0
    cache_read_tokens: Count = 0
    cache_write_tokens: Count = 0
    cost_usd: Amount | None = None
    """None when the model has no known price: assay never guesses a cost."""


def sum_usage(usages: Iterable[Usage]) -> Usage:
    """Token counts add up; the cost is known only while every part's cost is known.

    A single call without a price makes the total unknown (None): assay never guesses.
    """
    total = Usage()
    cost: float | None = 0.0
    for usage in usages:
        total.input_tokens += usage.input_tokens
        total.output_tokens += usage.output_tokens
        total.cache_read_tokens += usage.cache_read_tokens
        total.cache_write_tokens += usage.cache_write_tokens
        cost = None if cost is None or usage.cost_usd is None else cost + usage.cost_usd
    total.cost_usd = cost
    return total
