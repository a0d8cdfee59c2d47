"""Token use and cost of model calls, and how several of them add up."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from pydantic import Field

from assay.core._contract import Amount, ContractModel

__all__ = ["Usage", "sum_usage"]

Tokens = Annotated[int, Field(ge=0, le=10**15)]
"""A token count: a million million is past any run's, and a 401-digit count an API sent
overflowed the price as a float (an internal error where it is an unusable answer)."""


class Usage(ContractModel):
    input_tokens: Tokens = 0
    output_tokens: Tokens = 0
    cache_read_tokens: Tokens = 0
    cache_write_tokens: Tokens = 0
    cost_usd: Amount | None = None
    """None when the model has no known price: assay never guesses a cost."""


def sum_usage(usages: Iterable[Usage]) -> Usage:
    """Token counts add up; the cost is known only while every part's cost is known.

    A single call without a price makes the total unknown (None): assay never guesses.
    """
    input_tokens = output_tokens = cache_read = cache_write = 0
    cost: float | None = 0.0
    for usage in usages:
        input_tokens += usage.input_tokens
        output_tokens += usage.output_tokens
        cache_read += usage.cache_read_tokens
        cache_write += usage.cache_write_tokens
        cost = None if cost is None or usage.cost_usd is None else cost + usage.cost_usd
    # Built once with every field (not a default one, then assigned field by field): each
    # pydantic assignment grows the instance's fields-set, and a run keeps several per case.
    return Usage.model_construct(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        cost_usd=cost,
    )
