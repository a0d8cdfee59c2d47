"""`--repeat auto`: which cases get another attempt, and when the run has enough.

Every case runs once. After each round the policy looks, and the run stops at the first
look where either

- **the decision is sure**: the aggregate score's look-corrected bound excludes the
  threshold (one-sided, level α/L at each of at most L = 2K - 1 looks; by the union bound
  the chance of ever stopping sure of the wrong side is under α, however the stopping
  depends on the data), or
- **more attempts cannot change it**: the predictive chance that giving every case its
  full `--max-repeat K` attempts would land the score on the other side of the threshold
  is under `CURTAIL` (stochastic curtailment: the run stops where `--repeat K` would, with
  these first attempts, decide the same).

Else the cases that are still open get one more attempt each: uncertain cases (flaky
within this run, flaky or quarantined in what the run knows, or with an outcome that
differs from the baseline's) and cases nothing is known about yet (one attempt, no
baseline). When none is left below K, every case below K gets one.

What the rule assumes about a case it has seen little of comes from the other cases: a
case with a *reference* outcome (the baseline's, for one the baseline saw stable; else its
own first attempt, once it has a second) and no sign of flakiness is as likely to flip as
the pooled flip rate of every such case (docs/statistics.md). An uncertain case, or one
with no reference, has only its own attempts (a Jeffreys prior).

Pure and deterministic: the runner (runner/execute.py) and the simulation benchmark
(bench/bench_gate.py) drive the same `next_round`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

__all__ = [
    "ALPHA",
    "CURTAIL",
    "DEFAULT_MAX_REPEAT",
    "CaseKnowledge",
    "aggregate_bounds",
    "max_looks",
    "next_round",
    "reversal_chance",
]

ALPHA = 0.05
"""The total chance, over all looks, of stopping sure of the wrong side of the threshold."""
CURTAIL = 0.01
"""Stop when finishing every case to K would reverse the decision with less than this chance."""
DEFAULT_MAX_REPEAT = 5
_JEFFREYS = 0.5


@dataclass(frozen=True)
class CaseKnowledge:
    """What the run knows about a case before it starts (from the baseline, the quarantine)."""

    baseline_pass: bool | None = None
    """The baseline report's pass/fail of the case; None when it has none."""
    known_flaky: bool = False
    """Flaky in the baseline report, or quarantined."""
    baseline_attempts: int = 0
    """How many attempts the baseline's pass/fail rests on."""


def _passed(score: float) -> bool:
    return score >= 0.5


@dataclass
class _Case:
    scores: list[float]
    knowledge: CaseKnowledge = field(default_factory=CaseKnowledge)

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores)

    @property
    def flipped(self) -> bool:
        return len({_passed(score) for score in self.scores}) > 1 or any(
            0.0 < score < 1.0 for score in self.scores
        )

    @property
    def uncertain(self) -> bool:
        known = self.knowledge
        differs = known.baseline_pass is not None and any(
            _passed(score) != known.baseline_pass for score in self.scores
        )
        return self.flipped or known.known_flaky or differs

    @property
    def baseline_stable(self) -> bool:
        known = self.knowledge
        return known.baseline_pass is not None and not known.known_flaky

    @property
    def reference(self) -> bool | None:
        """The outcome the case is expected to repeat, when it has shown one to expect."""
        if self.knowledge.known_flaky:
            return None
        if self.knowledge.baseline_pass is not None:
            return self.knowledge.baseline_pass
        return _passed(self.scores[0]) if len(self.scores) > 1 else None

    @property
    def open(self) -> bool:
        """More attempts here can tell the run something it does not know yet."""
        return self.uncertain or self.reference is None

    def pool_counts(self) -> tuple[int, int]:
        """(flips, attempts) this case adds to the pooled flip rate (reference cases only)."""
        reference = self.reference
        if reference is None:
            return 0, 0
        own = self.scores if self.baseline_stable else self.scores[1:]
        flips = sum(1 for score in own if _passed(score) != reference)
        return flips, len(own) + self.knowledge.baseline_attempts

    def variance(self, pool_rate: float) -> float:
        """The case's pass-rate variance, never below what is known about it."""
        mean = self.mean
        observed = mean * (1.0 - mean)
        if self.uncertain or self.reference is None:
            smoothed = (sum(self.scores) + _JEFFREYS) / (len(self.scores) + 1.0)
            return max(observed, smoothed * (1.0 - smoothed))
        return max(observed, pool_rate * (1.0 - pool_rate))

    def future(self, remaining: int, pool_rate: float) -> tuple[float, float]:
        """The predictive mean and variance of the sum of the next `remaining` scores."""
        if remaining <= 0:
            return 0.0, 0.0
        reference = self.reference
        if self.uncertain or reference is None:
            # Beta-binomial under the case's own Jeffreys posterior.
            a = sum(self.scores) + _JEFFREYS
            b = len(self.scores) - sum(self.scores) + _JEFFREYS
            p = a / (a + b)
            spread = (a + b + remaining) / (a + b + 1.0)
            return remaining * p, remaining * p * (1.0 - p) * spread
        p = 1.0 - pool_rate if reference else pool_rate
        return remaining * p, remaining * p * (1.0 - p)


def _states(
    cases: Mapping[str, Sequence[float]], knowledge: Mapping[str, CaseKnowledge]
) -> dict[str, _Case]:
    return {
        cid: _Case(list(s), knowledge.get(cid, CaseKnowledge())) for cid, s in cases.items() if s
    }


def _pool_rate(states: Sequence[_Case]) -> float:
    """The flip rate of a case that has a reference outcome, pooled over every such case.

    Flips are attempts that disagree with the case's reference, over all their attempts
    (the baseline's included; a case's own first attempt left out when it is the
    reference), counting the cases that turned out to differ (so the pool does not look
    steadier by leaving them out), with Jeffreys' half a flip so no flip seen is not zero.
    """
    counts = [state.pool_counts() for state in states]
    flips = sum(f for f, _ in counts)
    attempts = sum(a for _, a in counts)
    return (flips + _JEFFREYS) / (attempts + 1.0)


def max_looks(max_repeat: int) -> int:
    """At most this many rounds end in a look: the open cases reach K within K - 1
    rounds after the first, and the fallback gives every case K within K - 1 more."""
    return max(1, 2 * max_repeat - 1)


def aggregate_bounds(
    cases: Mapping[str, Sequence[float]],
    *,
    knowledge: Mapping[str, CaseKnowledge],
    max_repeat: int,
    alpha: float = ALPHA,
) -> tuple[float, float]:
    """The look-corrected bounds of the mean case score, each one-sided at alpha / looks.

    Only one side can be wrong for a given true score (below the threshold when it is at
    or above, above when it is below), so each bound spends the whole alpha / looks.
    """
    states = list(_states(cases, knowledge).values())
    if not states:
        return 0.0, 1.0
    n = len(states)
    mean = sum(state.mean for state in states) / n
    rate = _pool_rate(states)
    variance = sum(state.variance(rate) / len(state.scores) for state in states) / (n * n)
    z = NormalDist().inv_cdf(1.0 - alpha / max_looks(max_repeat))
    half = z * math.sqrt(variance)
    return max(0.0, mean - half), min(1.0, mean + half)


def reversal_chance(
    cases: Mapping[str, Sequence[float]],
    *,
    threshold: float,
    knowledge: Mapping[str, CaseKnowledge],
    max_repeat: int,
) -> float:
    """The predictive chance that finishing every case to `max_repeat` attempts would put
    the score on the other side of `threshold` than it is now (a normal approximation
    of the sum of independent per-case predictive distributions)."""
    states = list(_states(cases, knowledge).values())
    if not states:
        return 0.0
    n = len(states)
    rate = _pool_rate(states)
    passing = sum(state.mean for state in states) / n >= threshold
    mean = variance = 0.0
    for state in states:
        total = max(max_repeat, len(state.scores))
        more, spread = state.future(total - len(state.scores), rate)
        mean += (sum(state.scores) + more) / total / n
        variance += spread / (total * total * n * n)
    if variance <= 0.0:
        return 0.0 if (mean >= threshold) == passing else 1.0
    below = NormalDist(mean, math.sqrt(variance)).cdf(threshold)
    return below if passing else 1.0 - below


def next_round(
    cases: Mapping[str, Sequence[float]],
    *,
    threshold: float,
    max_repeat: int,
    knowledge: Mapping[str, CaseKnowledge],
    alpha: float = ALPHA,
    curtail: float = CURTAIL,
) -> list[str]:
    """The case ids to give one more attempt; [] when the run has enough.

    `cases` maps each case id to its scores so far (one per scored attempt; a case with
    none, skipped or errored every time, gets no more).
    """
    scored = {cid: list(s) for cid, s in cases.items() if s}
    if not scored:
        return []
    low, high = aggregate_bounds(scored, knowledge=knowledge, max_repeat=max_repeat, alpha=alpha)
    if not (low < threshold <= high):
        return []  # the decision is sure at the look-corrected level: stop
    chance = reversal_chance(
        scored, threshold=threshold, knowledge=knowledge, max_repeat=max_repeat
    )
    if chance < curtail:
        return []  # finishing to K would almost surely decide the same: stop
    states = _states(scored, knowledge)
    below = {cid: state for cid, state in states.items() if len(state.scores) < max_repeat}
    still_open = [cid for cid, state in below.items() if state.open]
    return sorted(still_open) if still_open else sorted(below)
