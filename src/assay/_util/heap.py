"""Garbage-collector settings and the exit, for when assay is the program, not a library."""

from __future__ import annotations

import atexit
import gc
import os
import sys
from typing import NoReturn

__all__ = ["exit_without_teardown", "settle_after_startup"]

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


def exit_without_teardown(code: int) -> NoReturn:
    """End the process with `code`, skipping the interpreter's teardown.

    A run has imported some 3,600 modules (most of them the model SDK's types) and built
    what it needed from them; taking all of that apart one object at a time took 0.4 s of
    every run's wall time, for a process that is ending anyway. What a program relies on
    at exit still happens: the exit functions (`atexit`, `weakref.finalize`, logging's
    flush) run and the standard streams are flushed. Only for the console script.
    """
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone, or a stream closed: nothing to say
            pass
    os._exit(code)
