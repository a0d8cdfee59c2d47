"""How stable and how cheap the gate is: fixed repeats 1/3/5 against `--repeat auto`.

A scripted agent with known per-case pass probabilities, judged by a deterministic fake
judge (an attempt passes exactly when the agent's seeded draw says it found the issue),
is gated at a threshold below its true score; the same agent with a 15-point regression
should fail. For each strategy, over `--runs` seeded runs:

- flip rate: runs whose decision differs from the majority decision (unchanged agent);
- false-fail rate: runs of the unchanged agent that fail the gate;
- detection rate: runs of the regressed agent that fail the gate;
- model calls: agent + judge calls per run (2 per attempt), mean over both agents.

It simulates at the policy level, in process: the scheduling decisions are
`assay.runner.adaptive.next_round`, the same function `assay run --repeat auto` calls,
and the case and aggregate scores are computed as the report computes them (a case's
score is its mean attempt score, the run's the mean over cases). `auto` is given the
baseline the Action gives it (`baseline-report`: the default branch's own earlier run,
here a `--repeat 3` run of the unchanged agent, not counted as this run's spend);
`auto (no baseline)` has nothing but the run itself.

    python bench/bench_gate.py                   # 200 runs, 20 cases, a few seconds
    python bench/bench_gate.py --scale 5         # 100 cases
    python bench/bench_gate.py --threshold 0.65  # the gate closer to the true score
    python bench/bench_gate.py --agreement       # auto against --repeat 5, a grid of suites

`--agreement` measures what docs/statistics.md promises: over suites of one pass rate and
mixes of stable and flaky cases (10, 20 and 50 cases), thresholds from 0.10 below the true
score to 0.10 above, how often `auto` decides as `--repeat 5` does from the same attempts
(each case's first attempts are the ones `auto` ran), and what share of the attempts it runs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import describe_machine  # noqa: E402
from assay.runner.adaptive import CaseKnowledge, next_round  # noqa: E402

STABLE_PASS, STABLE_FAIL, FLAKY = 0.98, 0.02, 0.5
BLOCK: tuple[float, ...] = (STABLE_PASS,) * 12 + (STABLE_FAIL,) * 4 + (FLAKY,) * 4
"""20 cases, true score 0.692; `--scale N` runs N such blocks."""
BROKEN: tuple[float, ...] = (0.0,) * 3 + BLOCK[3:]
"""Three passing cases of the block broken: true score 0.545, 14.7 points lower."""
UNCHANGED, REGRESSED = BLOCK, BROKEN
THRESHOLD = 0.62
CALLS_PER_ATTEMPT = 2  # the agent's model call and the judge's


@dataclass(frozen=True)
class Outcome:
    failed: bool
    attempts: int


def _attempt(rng: random.Random, p: float) -> float:
    """The scripted agent finds the issue with probability p; the judge says so, exactly."""
    return 1.0 if rng.random() < p else 0.0


def _decide(scores: dict[str, list[float]], threshold: float | None = None) -> bool:
    """True when the gate fails (the point score below the threshold, as the report gates)."""
    means = [sum(s) / len(s) for s in scores.values()]
    return sum(means) / len(means) < (THRESHOLD if threshold is None else threshold) - 1e-9


def _draws(
    probabilities: Sequence[float], repeat: int, rng: random.Random
) -> dict[str, list[float]]:
    """`repeat` attempts of every case, drawn up front: `auto` runs a prefix of each."""
    return {f"c{i}": [_attempt(rng, p) for _ in range(repeat)] for i, p in enumerate(probabilities)}


def run_fixed(probabilities: Sequence[float], repeat: int, rng: random.Random) -> Outcome:
    return Outcome(_decide(_draws(probabilities, repeat, rng)), repeat * len(probabilities))


def baseline_knowledge(
    rng: random.Random, probabilities: Sequence[float] | None = None
) -> dict[str, CaseKnowledge]:
    """A `--repeat 3` report of the agent (the unchanged one unless told), read as the runner
    reads a baseline."""
    knowledge = {}
    for i, p in enumerate(UNCHANGED if probabilities is None else probabilities):
        attempts = [_attempt(rng, p) for _ in range(3)]
        knowledge[f"c{i}"] = CaseKnowledge(
            baseline_pass=min(attempts) == 1.0,
            known_flaky=len(set(attempts)) > 1,
            baseline_attempts=3,
            baseline_passes=int(sum(attempts)),
        )
    return knowledge


def auto_scores(
    draws: dict[str, list[float]],
    knowledge: dict[str, CaseKnowledge],
    *,
    threshold: float,
    max_repeat: int,
) -> dict[str, list[float]]:
    """The attempts `--repeat auto` runs, each case's a prefix of its `draws`: every case's
    scores go to `next_round` at every look, as the runner gives them."""
    scores = {case_id: attempts[:1] for case_id, attempts in draws.items()}
    while chosen := next_round(
        scores, threshold=threshold, max_repeat=max_repeat, knowledge=knowledge
    ):
        for case_id in chosen:
            scores[case_id] = draws[case_id][: len(scores[case_id]) + 1]
    return scores


def run_auto(
    probabilities: Sequence[float],
    rng: random.Random,
    knowledge: dict[str, CaseKnowledge],
    *,
    max_repeat: int = 5,
) -> Outcome:
    draws = _draws(probabilities, max_repeat, rng)
    scores = auto_scores(draws, knowledge, threshold=THRESHOLD, max_repeat=max_repeat)
    return Outcome(_decide(scores), sum(len(s) for s in scores.values()))


@dataclass(frozen=True)
class Agreement:
    agree: float
    """The share of runs in which `auto` decides as `--repeat K` does from the same attempts."""
    attempts: float
    """`auto`'s mean attempts per run, as a share of `--repeat K`'s."""


def agreement(
    probabilities: Sequence[float],
    *,
    threshold: float,
    runs: int,
    seed: int,
    max_repeat: int = 5,
    with_baseline: bool = False,
) -> Agreement:
    """`--repeat auto` against `--repeat K` (K = `max_repeat`) over `runs` seeded runs, each
    deciding from the same draws (auto's attempts are the first of K's)."""
    rng = random.Random(seed)
    agree = attempts = 0
    for _ in range(runs):
        known = baseline_knowledge(rng, probabilities) if with_baseline else {}
        draws = _draws(probabilities, max_repeat, rng)
        scores = auto_scores(draws, known, threshold=threshold, max_repeat=max_repeat)
        agree += _decide(scores, threshold) == _decide(draws, threshold)
        attempts += sum(len(s) for s in scores.values())
    return Agreement(agree / runs, attempts / (runs * max_repeat * len(probabilities)))


PROFILES: dict[str, Callable[[int], list[float]]] = {
    "all 0.9": lambda n: [0.9] * n,
    "all 0.8": lambda n: [0.8] * n,
    "all 0.7": lambda n: [0.7] * n,
    "all 0.5": lambda n: [0.5] * n,
    "60% 0.98, 20% 0.02, 20% 0.5": lambda n: (
        [STABLE_PASS] * (3 * n // 5)
        + [STABLE_FAIL] * (n // 5)
        + [FLAKY] * (n - 3 * n // 5 - n // 5)
    ),
    "half 0.95, half 0.6": lambda n: [0.95] * (n // 2) + [0.6] * (n - n // 2),
    "spread 0.3-1.0": lambda n: [0.3 + 0.7 * (i + 0.5) / n for i in range(n)],
}
"""The agreement grid's suites: one rate for every case, and mixes of stable and flaky."""
OFFSETS = (-0.10, -0.06, -0.04, -0.02, 0.0, 0.02, 0.04, 0.06, 0.10)
"""The threshold minus the true score."""


def print_agreement(runs: int, sizes: Sequence[int], *, with_baseline: bool) -> None:
    """The agreement grid: a row per suite and size, a column per threshold offset."""
    known = "a `--repeat 3` baseline of the same agent" if with_baseline else "no baseline"
    print(f"{runs} seeded runs per cell, K = 5, {known}; agreement with `--repeat 5`")
    print("| suite | cases | " + " | ".join(f"{o:+.2f}" for o in OFFSETS) + " | attempts |")
    print("|---|---:|" + "---:|" * (len(OFFSETS) + 1))
    worst = dict.fromkeys(OFFSETS, 1.0)
    spent: dict[float, list[float]] = {offset: [] for offset in OFFSETS}
    for number, (name, profile) in enumerate(PROFILES.items()):
        for n in sizes:
            probabilities = profile(n)
            true_score = sum(probabilities) / n
            cells = []
            for index, offset in enumerate(OFFSETS):
                result = agreement(
                    probabilities,
                    threshold=round(true_score + offset, 6),
                    runs=runs,
                    seed=10_000 * number + 100 * n + index,
                    with_baseline=with_baseline,
                )
                worst[offset] = min(worst[offset], result.agree)
                spent[offset].append(result.attempts)
                cells.append(f"{result.agree:.1%}")
            row_spent = [spent[offset][-1] for offset in OFFSETS]
            spend = f"{min(row_spent):.0%}-{max(row_spent):.0%}"
            print(f"| {name} | {n} | " + " | ".join(cells) + f" | {spend} |")
    print("| **worst** | | " + " | ".join(f"**{worst[o]:.1%}**" for o in OFFSETS) + " | |")
    mean_spent = [sum(spent[o]) / len(spent[o]) for o in OFFSETS]
    print("| **mean attempts** | | " + " | ".join(f"{m:.0%}" for m in mean_spent) + " | |")


Strategy = Callable[[Sequence[float], random.Random, int], Outcome]


def strategies() -> dict[str, Strategy]:
    def fixed(repeat: int) -> Strategy:
        return lambda probs, rng, seed: run_fixed(probs, repeat, rng)

    def auto(with_baseline: bool) -> Strategy:
        def run(probs: Sequence[float], rng: random.Random, seed: int) -> Outcome:
            known = baseline_knowledge(random.Random(10_000 + seed)) if with_baseline else {}
            return run_auto(probs, rng, known)

        return run

    return {
        "--repeat 1": fixed(1),
        "--repeat 3": fixed(3),
        "--repeat 5": fixed(5),
        "--repeat auto": auto(True),
        "--repeat auto (no baseline)": auto(False),
    }


def main() -> None:
    global UNCHANGED, REGRESSED, THRESHOLD
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--scale", type=int, default=1, help="blocks of 20 cases (default 1)")
    parser.add_argument(
        "--threshold", type=float, default=THRESHOLD, help=f"the gate (default {THRESHOLD})"
    )
    parser.add_argument(
        "--agreement",
        action="store_true",
        help="instead: how often auto decides as --repeat 5 does, over a grid of suites",
    )
    parser.add_argument("--sizes", default="10,20,50", help="--agreement's case counts")
    parser.add_argument("--baseline", action="store_true", help="--agreement with a baseline")
    args = parser.parse_args()
    if args.agreement:
        started = time.perf_counter()
        sizes = [int(size) for size in args.sizes.split(",")]
        print_agreement(args.runs, sizes, with_baseline=args.baseline)
        print(f"({time.perf_counter() - started:.0f} s; {describe_machine()})")
        return
    UNCHANGED, REGRESSED = BLOCK * args.scale, BROKEN * args.scale
    THRESHOLD = args.threshold
    started = time.perf_counter()
    rows = []
    for name, strategy in strategies().items():
        unchanged = [strategy(UNCHANGED, random.Random(seed), seed) for seed in range(args.runs)]
        regressed = [strategy(REGRESSED, random.Random(seed), seed) for seed in range(args.runs)]
        fails = sum(o.failed for o in unchanged)
        flips = min(fails, args.runs - fails)
        calls = sum(o.attempts for o in unchanged + regressed) * CALLS_PER_ATTEMPT / (2 * args.runs)
        detected = sum(o.failed for o in regressed)
        rows.append((name, flips / args.runs, fails / args.runs, detected / args.runs, calls))
    base_calls = next(r[4] for r in rows if r[0] == "--repeat 5")
    print(
        f"{args.runs} seeded runs per agent; {len(UNCHANGED)} cases, true score 0.692 "
        f"(regressed 0.545), threshold {THRESHOLD}"
    )
    print("| strategy | flip rate | false-fail | detection (−15 pts) | calls/run | vs repeat 5 |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, flip, false_fail, detection, calls in rows:
        print(
            f"| `{name}` | {flip:.1%} | {false_fail:.1%} | {detection:.1%} | {calls:.1f} | "
            f"{calls / base_calls:.0%} |"
        )
    print(f"({time.perf_counter() - started:.1f} s; {describe_machine()})")


if __name__ == "__main__":
    main()
