"""bench/bench_gate.py's target, kept: `--repeat auto` flips under 5% of seeded runs and
spends at most half of `--repeat 5`'s calls (issue 18's done-when, at 20 and 100 cases)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_gate  # noqa: E402


@pytest.mark.parametrize("scale", [1, 5])
def test_repeat_auto_is_stable_and_costs_at_most_half_of_repeat_five(scale: int) -> None:
    runs = 100
    probabilities = bench_gate.BLOCK * scale
    broken = bench_gate.BROKEN * scale
    auto = bench_gate.strategies()["--repeat auto"]
    unchanged = [auto(probabilities, random.Random(seed), seed) for seed in range(runs)]
    regressed = [auto(broken, random.Random(seed), seed) for seed in range(runs)]
    fails = sum(o.failed for o in unchanged)
    assert min(fails, runs - fails) / runs < 0.05
    assert sum(o.failed for o in regressed) / runs > 0.95
    attempts = sum(o.attempts for o in unchanged + regressed) / (2 * runs)
    assert attempts <= 0.5 * 5 * len(probabilities)
