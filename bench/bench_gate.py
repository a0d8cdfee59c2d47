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


def _decide(scores: dict[str, list[float]]) -> bool:
    """True when the gate fails (the point score below the threshold, as the report gates)."""
    means = [sum(s) / len(s) for s in scores.values()]
    return sum(means) / len(means) < THRESHOLD - 1e-9


def run_fixed(probabilities: Sequence[float], repeat: int, rng: random.Random) -> Outcome:
    scores = {
        f"c{i}": [_attempt(rng, p) for _ in range(repeat)] for i, p in enumerate(probabilities)
    }
    return Outcome(_decide(scores), repeat * len(probabilities))


def baseline_knowledge(rng: random.Random) -> dict[str, CaseKnowledge]:
    """A `--repeat 3` report of the unchanged agent, read as the runner reads a baseline."""
    knowledge = {}
    for i, p in enumerate(UNCHANGED):
        outcomes = {_attempt(rng, p) for _ in range(3)}
        knowledge[f"c{i}"] = CaseKnowledge(
            baseline_pass=outcomes == {1.0}, known_flaky=len(outcomes) > 1, baseline_attempts=3
        )
    return knowledge


def run_auto(
    probabilities: Sequence[float],
    rng: random.Random,
    knowledge: dict[str, CaseKnowledge],
    *,
    max_repeat: int = 5,
) -> Outcome:
    scores = {f"c{i}": [_attempt(rng, p)] for i, p in enumerate(probabilities)}
    attempts = len(probabilities)
    while chosen := next_round(
        scores, threshold=THRESHOLD, max_repeat=max_repeat, knowledge=knowledge
    ):
        for case_id in chosen:
            scores[case_id].append(_attempt(rng, probabilities[int(case_id[1:])]))
        attempts += len(chosen)
    return Outcome(_decide(scores), attempts)


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
    args = parser.parse_args()
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
