"""`--repeat auto`: which cases get another attempt, and when the run has enough.

Every case runs once. After each round the policy looks at the aggregate score: when
its interval at the look-corrected level excludes the threshold, the decision cannot
change and the run stops; else the cases that can move it get one more attempt each,
up to `--max-repeat K`. Cases that can move it are the uncertain ones: flaky within this
run, flaky or quarantined in what the run knows (the baseline report, the quarantine
list), or with an outcome that differs from the baseline's. When none is left below K
while the interval still straddles, every case below K gets one.

The interval at each look is a normal interval over attempt noise, conditional on the
suite's cases (a rerun of the same suite varies only in its attempts, and that is what
makes a gate flip): var = (1/n²) Σ v_i / m_i, with v_i a case's pass-rate variance,
never below a floor that depends on what is known about the case (0.25 for an
uncertain case; for one the baseline saw stable and that agrees with it, the flip rate
pooled over all such cases, baseline attempts included; the smoothed estimate of its
own attempts for one nothing is known about). There are at most K
looks, each at level α/K (Bonferroni over the looks), so stopping at whichever look
first excludes the threshold keeps the chance of stopping on the wrong side under α
whatever the data do (docs/statistics.md).

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
    "DEFAULT_MAX_REPEAT",
    "CaseKnowledge",
    "aggregate_bounds",
    "max_looks",
    "next_round",
]

ALPHA = 0.05
"""The total chance, over all looks, of stopping with the threshold on the wrong side."""
DEFAULT_MAX_REPEAT = 5


@dataclass(frozen=True)
class CaseKnowledge:
    """What the run knows about a case before it starts (from the baseline, the quarantine)."""

    baseline_pass: bool | None = None
    """The baseline report's pass/fail of the case; None when it has none."""
    known_flaky: bool = False
    """Flaky in the baseline report, or quarantined."""
    baseline_attempts: int = 0
    """How many attempts the baseline's pass/fail rests on."""


@dataclass
class _Case:
    scores: list[float]
    knowledge: CaseKnowledge = field(default_factory=CaseKnowledge)

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores)

    @property
    def flipped(self) -> bool:
        return len({score >= 0.5 for score in self.scores}) > 1 or any(
            0.0 < score < 1.0 for score in self.scores
        )

    @property
    def uncertain(self) -> bool:
        known = self.knowledge
        differs = known.baseline_pass is not None and any(
            (score >= 0.5) != known.baseline_pass for score in self.scores
        )
        return self.flipped or known.known_flaky or differs

    @property
    def baseline_stable(self) -> bool:
        known = self.knowledge
        return known.baseline_pass is not None and not known.known_flaky

    def variance(self, stable_pool: float) -> float:
        """The case's pass-rate variance; `stable_pool` is the baseline-stable cases' own."""
        mean = self.mean
        observed = mean * (1.0 - mean)
        smoothed = (sum(self.scores) + 0.5) / (len(self.scores) + 1.0)
        if self.uncertain:
            return max(observed, smoothed * (1.0 - smoothed))
        if self.baseline_stable:
            return max(observed, stable_pool)
        return max(observed, smoothed * (1.0 - smoothed))


def _stable_pool_variance(states: Sequence[_Case]) -> float:
    """The variance of a case the baseline saw stable, pooled over every such case.

    The flip rate is estimated over all their attempts, the baseline's and this run's,
    counting as flips this run's attempts that disagree with the baseline (so the cases
    that turned out to differ stay in the count, and the pool does not look steadier by
    leaving them out), with Jeffreys' half a flip added so no flip seen is not zero.
    """
    pool = [state for state in states if state.baseline_stable]
    attempts = sum(len(s.scores) + s.knowledge.baseline_attempts for s in pool)
    flips = sum(
        1 for s in pool for score in s.scores if (score >= 0.5) != s.knowledge.baseline_pass
    )
    rate = (flips + 0.5) / (attempts + 1.0)
    return rate * (1.0 - rate)


def max_looks(max_repeat: int) -> int:
    """At most this many rounds end in a look: the uncertain cases reach K within K - 1
    rounds after the first, and the fallback gives every case K within K - 1 more."""
    return max(1, 2 * max_repeat - 1)


def aggregate_bounds(
    cases: Mapping[str, Sequence[float]],
    *,
    knowledge: Mapping[str, CaseKnowledge],
    max_repeat: int,
    alpha: float = ALPHA,
) -> tuple[float, float]:
    """The look-corrected interval of the mean case score (level 1 - alpha / max_looks)."""
    states = [_Case(list(s), knowledge.get(cid, CaseKnowledge())) for cid, s in cases.items() if s]
    if not states:
        return 0.0, 1.0
    n = len(states)
    mean = sum(state.mean for state in states) / n
    pool = _stable_pool_variance(states)
    variance = sum(state.variance(pool) / len(state.scores) for state in states) / (n * n)
    z = NormalDist().inv_cdf(1.0 - alpha / (2.0 * max_looks(max_repeat)))
    half = z * math.sqrt(variance)
    return max(0.0, mean - half), min(1.0, mean + half)


def next_round(
    cases: Mapping[str, Sequence[float]],
    *,
    threshold: float,
    max_repeat: int,
    knowledge: Mapping[str, CaseKnowledge],
    alpha: float = ALPHA,
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
        return []  # the decision cannot change at this level: stop
    below = {cid: s for cid, s in scored.items() if len(s) < max_repeat}
    uncertain = [
        cid for cid, s in below.items() if _Case(s, knowledge.get(cid, CaseKnowledge())).uncertain
    ]
    return sorted(uncertain) if uncertain else sorted(below)
