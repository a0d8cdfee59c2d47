"""`assay cache stats|prune --cache DIR [--older-than DAYS]`."""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path

from assay.core.exit_codes import EXIT_PASS
from assay.errors import ConfigError
from assay.models.cache import PURPOSES, ResponseCache, cache_dir_problem

SECONDS_PER_DAY = 86_400


def command(args: argparse.Namespace) -> int:
    root = Path(args.cache).expanduser()
    if problem := cache_dir_problem(root, must_exist=True):
        raise ConfigError(f"--cache {args.cache}: {problem}")
    cache = ResponseCache(root)
    if args.action == "stats":
        print(_stats(cache))
        return EXIT_PASS
    older_than = args.older_than
    # Written so NaN fails too: `nan < 0` is False, and a NaN cutoff would remove nothing.
    if older_than is not None and not (math.isfinite(older_than) and older_than >= 0):
        raise ConfigError(f"--older-than must be a number of days >= 0, got {older_than:g}")
    removed = cache.prune(
        older_than_s=None if older_than is None else older_than * SECONDS_PER_DAY,
        on_warning=_warn,
    )
    size = sum(e.size for e in removed)
    which = "" if older_than is None else f" unused for {older_than:g} day(s)"
    print(
        f"removed {len(removed)} entr{'y' if len(removed) == 1 else 'ies'}{which} ({_bytes(size)})"
    )
    return EXIT_PASS


def _stats(cache: ResponseCache) -> str:
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for entry in cache.entries(on_warning=_warn):
        counts[entry.purpose] += 1
        sizes[entry.purpose] += entry.size
    lines = [f"cache {cache.root}"]
    for purpose in PURPOSES:
        lines.append(f"  {purpose:<6} {counts[purpose]:>7} entries  {_bytes(sizes[purpose]):>10}")
    total, total_size = sum(counts.values()), sum(sizes.values())
    lines.append(f"  {'total':<6} {total:>7} entries  {_bytes(total_size):>10}")
    return "\n".join(lines)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover
