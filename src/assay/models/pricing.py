"""What a model call cost, from the list prices in `pricing.json` (package data).

A model is priced only when its name matches an entry exactly, through the entry's
aliases, or as a dated snapshot of it (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`).
Every other name has no price and its cost is None: assay never guesses a cost. An entry
that could not be compared with the provider's own page says so (`unverified`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from assay.core.usage import Usage

__all__ = ["ModelPrice", "Rates", "cost_usd", "price_for", "pricing_checked_on"]

_SNAPSHOT_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")
_PER_TOKEN = 1 / 1_000_000


class _RatesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    """Uncached input tokens."""
    output: float = Field(ge=0)
    cache_read: float = Field(ge=0)
    """Input tokens served from the prompt cache."""
    cache_write: float = Field(ge=0)
    """Input tokens written to the prompt cache (5-minute entries)."""


class _LongPromptFile(_RatesFile):
    above_tokens: int = Field(gt=0)
    """Prompts longer than this are billed at these rates instead."""


class _EntryFile(_RatesFile):
    aliases: list[str] = Field(default_factory=list)
    """Other names of the same model."""
    long_prompt: _LongPromptFile | None = None
    unverified: str | None = Field(default=None, min_length=1)
    """Why these figures were not checked against the provider's own page, and where they
    come from instead."""


class _PricingFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    checked: str
    """The day these prices were last compared with the providers' pricing pages."""
    unit: str
    sources: list[str]
    notes: list[str] = Field(default_factory=list)
    models: dict[str, _EntryFile]


@dataclass(frozen=True)
class Rates:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, usage: Usage) -> float:
        return _PER_TOKEN * (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        )


@dataclass(frozen=True)
class ModelPrice:
    model: str
    """The price list entry that matched."""
    rates: Rates
    long_prompt_above: int | None = None
    long_prompt_rates: Rates | None = None
    unverified: str | None = None
    """Set when the price list could not check this entry against the provider (why)."""

    def cost(self, usage: Usage) -> float:
        prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        rates = self.rates
        if self.long_prompt_rates is not None and self.long_prompt_above is not None:
            if prompt > self.long_prompt_above:
                rates = self.long_prompt_rates
        return round(rates.cost(usage), 10)


def _rates(entry: _RatesFile) -> Rates:
    return Rates(entry.input, entry.output, entry.cache_read, entry.cache_write)


@cache
def _load() -> tuple[str, dict[str, ModelPrice]]:
    text = resources.files("assay.models").joinpath("pricing.json").read_text(encoding="utf-8")
    data = _PricingFile.model_validate(json.loads(text))
    table: dict[str, ModelPrice] = {}
    for name, entry in data.models.items():
        price = ModelPrice(
            model=name,
            rates=_rates(entry),
            long_prompt_above=entry.long_prompt.above_tokens if entry.long_prompt else None,
            long_prompt_rates=_rates(entry.long_prompt) if entry.long_prompt else None,
            unverified=entry.unverified,
        )
        for key in (name, *entry.aliases):
            table[key] = price
    return data.checked, table


def pricing_checked_on() -> str:
    """The date (YYYY-MM-DD) the price list was last checked against the providers."""
    return _load()[0]


def _candidates(model: str) -> list[str]:
    # OpenRouter names carry the vendor (`anthropic/claude-sonnet-4.5`) and write
    # Claude versions with dots; the provider's own id uses dashes.
    name = model.strip().rsplit("/", 1)[-1]
    names = [name]
    if name.startswith("claude") and "." in name:
        names.append(name.replace(".", "-"))
    return names


@lru_cache(maxsize=256)  # asked at every call, of the run's few models
def price_for(model: str) -> ModelPrice | None:
    """The list price of `model` (a bare or `provider/` model id), or None when unknown."""
    table = _load()[1]
    for name in _candidates(model):
        if name in table:
            return table[name]
        base = _SNAPSHOT_SUFFIX.sub("", name)
        if base != name and base in table:
            return table[base]
    return None


def cost_usd(model: str, usage: Usage) -> float | None:
    """USD cost of one call's usage, or None when the model has no known price."""
    price = price_for(model)
    return None if price is None else price.cost(usage)
