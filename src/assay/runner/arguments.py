"""A run's raw values read into their types: `--shard I/N` and `--model a,b`.

Below the settings (runner/settings.py), which read every source through these, and the
plan and resolution that use the settings.
"""

from __future__ import annotations

from assay.core import shards as core_shards
from assay.errors import ConfigError

__all__ = ["parse_models", "parse_shard"]


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` (1-based) -> (I, N); anything else is a usage error."""
    try:
        return core_shards.parse_shard(text)
    except core_shards.ShardSyntaxError as exc:
        raise ConfigError(str(exc)) from None


def parse_models(values: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """`--model a --model b,c` -> (a, b, c): flattened, de-duplicated, order kept."""
    seen: dict[str, None] = {}
    for value in values:
        for part in value.split(","):
            name = part.strip()
            if name.endswith("/"):
                raise ConfigError(f"--model {name!r}: no model name after the provider")
            if name:
                seen.setdefault(name, None)
    return tuple(seen)
