"""`--shard I/N`: which slice of the selected cases a run takes."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from assay.core.numbers import read_number

__all__ = [
    "ShardSyntaxError",
    "format_shard",
    "parse_shard",
    "shard_part",
    "split_fingerprint_of",
]


class ShardSyntaxError(ValueError):
    """The text is not `I/N` with 1 <= I <= N; the message says so for the user."""


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` (1-based) -> (I, N). Raises ShardSyntaxError (callers make it a usage error)."""
    index_text, sep, count_text = text.strip().partition("/")
    try:
        if not sep:
            raise ValueError
        index, count = int(read_number(index_text, int)), int(read_number(count_text, int))
    except ValueError:
        raise ShardSyntaxError(f"--shard must look like I/N (e.g. 2/4), got {text!r}") from None
    if count < 1 or not 1 <= index <= count:
        raise ShardSyntaxError(f"--shard {text}: need 1 <= I <= N, got I={index}, N={count}")
    return index, count


def format_shard(shard: tuple[int, int] | None) -> str | None:
    return f"{shard[0]}/{shard[1]}" if shard else None


def shard_part(case_ids: Iterable[str], shard: tuple[int, int]) -> set[str]:
    """The case ids shard I/N takes of a selection: every N-th id in sorted order from I-1.

    Sorting makes the split independent of discovery order, machine and file system;
    striding (rather than slicing) balances suites across shards.
    """
    index, count = shard
    return set(sorted(case_ids)[index - 1 :: count])


def split_fingerprint_of(case_ids: Iterable[str]) -> str:
    """What every shard of one split shares: a hash of the case ids it was cut from."""
    ids = "\n".join(sorted(case_ids))
    return hashlib.sha256(ids.encode()).hexdigest()[:16]
