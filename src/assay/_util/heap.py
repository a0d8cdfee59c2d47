"""Garbage-collector settings for when assay is the program, not a library."""

from __future__ import annotations

import gc

__all__ = ["settle_after_startup"]

# Collections of the youngest generation, every this many new container objects
# (CPython's default is 700). Runs allocate briefly-lived dicts and lists by the
# thousand per model call; a larger budget collects them less often, at the cost of
# a few MiB of garbage in waiting at most.
_YOUNG_GENERATION_BUDGET = 10_000


def settle_after_startup() -> None:
    """Keep the collector from rescanning what start-up built.

    Modules, pydantic's validators and the loaded suites live until the process exits,
    yet every full collection walks them again. `gc.freeze()` moves them out of the
    collector's view. Together with the larger budget this cut the CPU cost of a model
    call at concurrency 32 by about a quarter (bench/bench_concurrency.py).
    Only for the console script: a host program calling `assay.cli.main(argv)` keeps
    its own collector settings.
    """
    gc.freeze()
    gc.set_threshold(_YOUNG_GENERATION_BUDGET, *gc.get_threshold()[1:])
