"""bench/bench_gate.py's targets, kept: `--repeat auto` flips under 5% of seeded runs and
spends at most half of `--repeat 5`'s calls (issue 18's done-when, at 20 and 100 cases), and
decides as `--repeat 5` does from the same attempts in at least 95% of runs at a threshold
0.04 under the true score (docs/statistics.md)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_gate  # noqa: E402


@pytest.mark.parametrize("scale", [1, 5])
@pytest.mark.slow
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


@pytest.mark.parametrize(
    ("suite", "with_baseline"),
    [("all 0.8", False), ("half 0.95, half 0.6", False), ("60% 0.98, 20% 0.02, 20% 0.5", True)],
)
@pytest.mark.slow
def test_repeat_auto_decides_as_repeat_five_does_at_the_documented_margin(
    suite: str, with_baseline: bool
) -> None:
    # "all 0.8" is the probe's suite: a per-case prior centred on one half made a first
    # round of 14/20 stop at FAIL, agreeing with `--repeat 5` in about 80% of runs.
    probabilities = bench_gate.PROFILES[suite](20)
    threshold = sum(probabilities) / len(probabilities) - 0.04
    result = bench_gate.agreement(
        probabilities, threshold=threshold, runs=200, seed=5, with_baseline=with_baseline
    )
    assert result.agree >= 0.95
    assert result.attempts < 0.9  # and it still saves
