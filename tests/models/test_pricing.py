"""List prices: exact names, aliases and dated snapshots are priced; nothing else is."""

from __future__ import annotations

import json
import re
from datetime import date
from importlib import resources

import pytest

from assay.core.usage import Usage
from assay.models import cost_usd, price_for
from assay.models.pricing import pricing_checked_on

MILLION = 1_000_000


def test_price_list_is_dated_and_sourced() -> None:
    raw = json.loads(resources.files("assay.models").joinpath("pricing.json").read_text())
    checked = date.fromisoformat(pricing_checked_on())
    assert checked == date.fromisoformat(raw["checked"])
    assert any("claude.com" in s for s in raw["sources"])
    assert any("openai.com" in s for s in raw["sources"])


@pytest.mark.parametrize(
    ("model", "entry"),
    [
        ("claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("anthropic/claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-opus-4-0", "claude-opus-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("claude-3-7-sonnet-20250219", "claude-3-7-sonnet"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),  # OpenRouter spelling
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),  # a snapshot with its own price
        ("openai/gpt-4.1-mini", "gpt-4.1-mini"),
        ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
    ],
)
def test_known_models_match_their_entry(model: str, entry: str) -> None:
    price = price_for(model)
    assert price is not None and price.model == entry


@pytest.mark.parametrize(
    "model",
    [
        "claude-sonnet-4-9",  # a future version is not a snapshot of claude-sonnet-4
        "claude-opus-4-5-preview",
        "claude-opus",
        "gpt-4o-realtime",
        "llama3.1:8b",
        "Qwen/Qwen2.5-Coder-32B-Instruct",
        "",
    ],
)
def test_unknown_models_have_no_price(model: str) -> None:
    assert price_for(model) is None
    assert cost_usd(model, Usage(input_tokens=1000, output_tokens=1000)) is None


def test_cost_counts_every_token_kind() -> None:
    usage = Usage(
        input_tokens=2 * MILLION,
        output_tokens=MILLION,
        cache_read_tokens=MILLION,
        cache_write_tokens=MILLION,
    )
    # claude-sonnet-4-6: input 3, output 15, cache read 0.30, cache write 3.75 USD per MTok
    assert cost_usd("claude-sonnet-4-6", usage) == pytest.approx(6 + 15 + 0.3 + 3.75)
    # claude-opus-4-1 is the older, dearer Opus tier
    assert cost_usd("claude-opus-4-1", Usage(input_tokens=MILLION)) == pytest.approx(15)
    assert cost_usd("claude-opus-4-6", Usage(input_tokens=MILLION)) == pytest.approx(5)
    assert cost_usd(
        "gpt-4.1", Usage(input_tokens=MILLION, cache_read_tokens=MILLION)
    ) == pytest.approx(2.5)


def test_long_prompts_switch_to_the_long_context_rates() -> None:
    short = Usage(input_tokens=150_000, cache_read_tokens=50_000, output_tokens=1_000)
    long = Usage(input_tokens=150_000, cache_read_tokens=50_001, output_tokens=1_000)
    assert cost_usd("claude-sonnet-4-5", short) == pytest.approx(
        (150_000 * 3 + 50_000 * 0.3 + 1_000 * 15) / MILLION
    )
    assert cost_usd("claude-sonnet-4-5", long) == pytest.approx(
        (150_000 * 6 + 50_001 * 0.6 + 1_000 * 22.5) / MILLION
    )


def test_zero_usage_costs_nothing() -> None:
    assert cost_usd("claude-haiku-4-5", Usage()) == 0.0


def test_required_families_are_priced() -> None:
    table = json.loads(resources.files("assay.models").joinpath("pricing.json").read_text())[
        "models"
    ]
    for family in (
        r"claude-opus-4",
        r"claude-sonnet-4",
        r"claude-haiku-4",
        r"claude-3-",
        r"gpt-4o",
        r"gpt-5",
    ):
        assert any(re.match(family, name) for name in table), family


def test_the_gemini_prices_say_they_are_unverified_and_the_rest_do_not() -> None:
    """Google's pricing page could not be read when the list was checked: its entries say
    where their figures come from instead (pricing.json's notes say what that means)."""
    table = json.loads(resources.files("assay.models").joinpath("pricing.json").read_text())
    unverified = {name for name, entry in table["models"].items() if "unverified" in entry}
    assert unverified == {name for name in table["models"] if name.startswith("gemini-")}
    for name in unverified:
        price = price_for(f"gemini/{name}")
        assert price is not None and "not read" in (price.unverified or ""), name
    claude = price_for("claude-sonnet-4-6")
    assert claude is not None and claude.unverified is None


@pytest.mark.parametrize(
    "model",
    [
        "gemini-2.5-flash-preview-09-2025",  # a preview is its own model, not a snapshot
        "gemini-2.5-flash-001",
        "gemini-3.8-flash",
        "gemini-2.0-flash",
        "gemini-2.5",
    ],
)
def test_a_gemini_model_without_an_entry_costs_none_not_a_neighbours_price(model: str) -> None:
    from assay.models.registry import provider_cost

    usage = Usage(input_tokens=1000, output_tokens=1000)
    assert price_for(model) is None
    assert provider_cost("gemini", model, usage) is None
