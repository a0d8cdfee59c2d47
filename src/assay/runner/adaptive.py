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

What the rule assumes about a case it has seen little of comes from the other cases. For
the bound's variance floor: a case with a *reference* outcome (the baseline's, for one the
baseline saw stable; else its own first attempt, once it has a second) and no sign of
flakiness is as likely to flip as the pooled flip rate of every such case; an uncertain
case, or one with no reference, has only its own attempts (a Jeffreys prior). For the
curtailment's predictive: every case's rate is drawn from one Beta learnt from all of them
(a hierarchical model), so a case that failed its one attempt in a suite whose cases pass
4 times in 5 is not taken for a case that passes a quarter of the time (docs/statistics.md).
A quarantined case is out of the gate's score, so out of the decision: it is only watched.

Pure and deterministic: the runner (runner/execute.py) and the simulation benchmark
(bench/bench_gate.py) drive the same `next_round`.
"""

from __future__ import annotations

import math
from collections import Counter
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
    quarantined: bool = False
    """Quarantined: out of the gate's score, so out of the decision too."""
    baseline_attempts: int = 0
    """How many attempts the baseline's pass/fail rests on."""
    baseline_passes: int | None = None
    """How many of them passed; None when not recorded (then all of them agree with
    `baseline_pass` when the case was stable there)."""

    def baseline_counts(self) -> tuple[float, float]:
        """(passes, misses) of the baseline's attempts, as far as they are known."""
        attempts = self.baseline_attempts
        if self.baseline_passes is not None:
            return float(self.baseline_passes), float(attempts - self.baseline_passes)
        if self.known_flaky:  # both outcomes, at least once each
            return (1.0, 1.0) if attempts >= 2 else (0.0, 0.0)
        if self.baseline_pass is None:
            return 0.0, 0.0
        return (float(attempts), 0.0) if self.baseline_pass else (0.0, float(attempts))


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
        return flips, len(own)

    def variance(self, pool_rate: float) -> float:
        """The case's pass-rate variance, never below what is known about it."""
        mean = self.mean
        observed = mean * (1.0 - mean)
        if self.uncertain or self.reference is None:
            smoothed = (sum(self.scores) + _JEFFREYS) / (len(self.scores) + 1.0)
            return max(observed, smoothed * (1.0 - smoothed))
        return max(observed, pool_rate * (1.0 - pool_rate))

    def evidence(self) -> tuple[float, float]:
        """(passes, misses) the case's pass rate rests on: its own attempts, and the
        baseline's when this run has not contradicted them (a case flaky there stays
        flaky; one stable there has not shown another outcome here)."""
        passes = sum(self.scores)
        misses = len(self.scores) - passes
        known = self.knowledge
        if known.baseline_attempts and (known.known_flaky or not self.uncertain):
            more_passes, more_misses = known.baseline_counts()
            passes, misses = passes + more_passes, misses + more_misses
        return passes, misses


def _states(
    cases: Mapping[str, Sequence[float]], knowledge: Mapping[str, CaseKnowledge]
) -> dict[str, _Case]:
    return {
        cid: _Case(list(s), knowledge.get(cid, CaseKnowledge())) for cid, s in cases.items() if s
    }


def _gated(states: Mapping[str, _Case]) -> list[_Case]:
    """The cases the gate's score counts: every one but the quarantined."""
    return [state for state in states.values() if not state.knowledge.quarantined]


def _pool_rate(states: Sequence[_Case]) -> float:
    """The flip rate of a case that has a reference outcome, pooled over every such case.

    Flips are this run's attempts that disagree with the case's reference, over all of them
    (a case's own first attempt left out when it is the reference), counting the cases that
    turned out to differ (so the pool does not look steadier by leaving them out), with
    Jeffreys' half a flip so no flip seen is not zero. The baseline's attempts are left out
    too: a case is stable there because they all agreed, so they would count no flips by
    selection (cases passing 9 times in 10 read 0.03-0.06 instead of 0.1, and the bound
    was sure too soon).
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
    states = _gated(_states(cases, knowledge))
    if not states:
        return 0.0, 1.0
    n = len(states)
    mean = sum(state.mean for state in states) / n
    rate = _pool_rate(states)
    variance = sum(state.variance(rate) / len(state.scores) for state in states) / (n * n)
    z = NormalDist().inv_cdf(1.0 - alpha / max_looks(max_repeat))
    half = z * math.sqrt(variance)
    return max(0.0, mean - half), min(1.0, mean + half)


@dataclass(frozen=True)
class _Outlook:
    """What the predictive needs of a case; cases alike share one, so the sums run over few."""

    passes: float
    misses: float
    scored: float
    """The sum of the case's own scores so far (what its final score counts)."""
    remaining: int
    total: int


def _outlooks(states: Sequence[_Case], max_repeat: int) -> list[tuple[_Outlook, int]]:
    outlooks: Counter[_Outlook] = Counter()
    for state in states:
        total = max(max_repeat, len(state.scores))
        passes, misses = state.evidence()
        remaining = total - len(state.scores)
        outlooks[_Outlook(passes, misses, sum(state.scores), remaining, total)] += 1
    return list(outlooks.items())


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


_PRIOR_STRENGTHS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)
"""a + b of the cases' Beta(a, b), each as likely a priori: from cases that each pass or fail
almost always (0.1) to cases that all share one rate (1000)."""
_MEAN_POINTS = 13
_MEAN_REACH = 6.0
"""The Beta's mean, uniform a priori, is integrated over `_MEAN_POINTS` evenly spaced points
within this many standard errors of its estimate (beyond them the attempts leave it none)."""
_NEGLIGIBLE = 1e-9
"""A prior whose weight is under this fraction of the heaviest one's takes no part."""


def _mean_points(outlooks: Sequence[tuple[_Outlook, int]], strength: float) -> list[float]:
    """Where to integrate over the Beta's mean at one strength: around its estimate, which
    weighs a case with m attempts by m / (m + strength) (every case alike when cases differ
    a lot, every attempt alike when they share one rate), as far as its standard error says."""
    weights = weighted = 0.0
    for o, count in outlooks:
        attempts = o.passes + o.misses
        weight = count * attempts / (attempts + strength)
        weights += weight
        weighted += weight * o.passes / attempts
    centre = weighted / weights
    effective = weights * (strength + 1.0)  # what the mean rests on, in attempts
    smoothed = (centre * effective + 1.0) / (effective + 2.0)  # a suite all pass is not exact
    reach = _MEAN_REACH * math.sqrt(smoothed * (1.0 - smoothed) / effective)
    low, high = max(1e-4, centre - reach), min(1.0 - 1e-4, centre + reach)
    step = (high - low) / (_MEAN_POINTS - 1)
    return [low + i * step for i in range(_MEAN_POINTS)]


def _log_evidence(outlooks: Sequence[tuple[_Outlook, int]], a: float, b: float) -> float:
    """log P(every case's passes and misses | the cases' rates are Beta(a, b))."""
    log_beta_ab = _log_beta(a, b)
    return sum(
        count * (_log_beta(o.passes + a, o.misses + b) - log_beta_ab) for o, count in outlooks
    )


def _final_score(
    outlooks: Sequence[tuple[_Outlook, int]], a: float, b: float, n: int
) -> tuple[float, float]:
    """The mean and variance of the score once every case has its `total` attempts, each
    case's remaining ones beta-binomial under its posterior Beta(a + passes, b + misses)."""
    mean = variance = 0.0
    for o, count in outlooks:
        alpha, beta = a + o.passes, b + o.misses
        rate = alpha / (alpha + beta)
        spread = (alpha + beta + o.remaining) / (alpha + beta + 1.0)
        mean += count * (o.scored + o.remaining * rate) / o.total
        variance += count * o.remaining * rate * (1.0 - rate) * spread / (o.total * o.total)
    return mean / n, variance / (n * n)


def _chance_below(threshold: float, mean: float, variance: float) -> float:
    if variance <= 0.0:
        return 0.0 if mean >= threshold else 1.0
    return 0.5 * math.erfc((mean - threshold) / math.sqrt(2.0 * variance))


def reversal_chance(
    cases: Mapping[str, Sequence[float]],
    *,
    threshold: float,
    knowledge: Mapping[str, CaseKnowledge],
    max_repeat: int,
) -> float:
    """The predictive chance that finishing every case to `max_repeat` attempts would put
    the score on the other side of `threshold` than it is now.

    The cases' pass rates are taken as drawn from one Beta distribution, learnt from every
    case at once (a hierarchical model): what a case seen once does next is what the suite
    says its cases do, not a guess centred on one half. The Beta's strength (`_PRIOR_STRENGTHS`)
    and mean are integrated over a grid, each point weighted by how well it explains the
    attempts; given one, the final score is normal (a sum of independent beta-binomials).
    """
    states = _gated(_states(cases, knowledge))
    if not states:
        return 0.0
    n = len(states)
    passing = sum(state.mean for state in states) / n >= threshold
    outlooks = _outlooks(states, max_repeat)
    priors: list[tuple[float, float, float]] = []  # (a, b, log weight)
    for strength in _PRIOR_STRENGTHS:
        points = _mean_points(outlooks, strength)
        log_step = math.log(points[1] - points[0])  # the mean's prior mass at each point
        for mean in points:
            a, b = mean * strength, (1.0 - mean) * strength
            priors.append((a, b, _log_evidence(outlooks, a, b) + log_step))
    heaviest = max(log_weight for _, _, log_weight in priors)
    chance = total = 0.0
    for a, b, log_weight in priors:
        weight = math.exp(log_weight - heaviest)
        if weight < _NEGLIGIBLE:
            continue
        below = _chance_below(threshold, *_final_score(outlooks, a, b, n))
        chance += weight * (below if passing else 1.0 - below)
        total += weight
    return chance / total


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
    none, skipped or errored every time, gets no more). It holds every case of the run at
    every look, the ones not chosen last round too: the decision is about the whole
    score, and a case left out now may be chosen again (the fallback to every case below K).
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
    gated = [cid for cid, state in below.items() if not state.knowledge.quarantined]
    still_open = [cid for cid in gated if below[cid].open]
    # A quarantined case decides nothing, but is watched: one more in every round there is.
    watched = [cid for cid, state in below.items() if state.knowledge.quarantined]
    return sorted((still_open or gated) + watched)
