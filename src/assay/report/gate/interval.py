"""The aggregate score's interval over both sources of noise: which cases, and which attempts.

A run's score is the mean over cases of each case's mean over its attempts. Treating the
case means as exact (today's Wilson over cases) ignores that 5 attempts of a p=0.5 case
could as well have given 2/5 as 3/5; treating every attempt as independent ignores that
attempts of one case are alike. The two-level (clustered) bootstrap resamples both, as
the score was produced: draw the cases with replacement, then, inside each drawn case,
its attempts with replacement, and take the mean of means (Davison & Hinkley 1997, §3.8,
"strategy 2": resampling at both stages, slightly conservative, which is the side a gate
should err on). See docs/statistics.md.

Deterministic: a fixed seed, so the same attempts always give the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

__all__ = ["case_interval", "clustered_interval", "confidence_interval"]

_RESAMPLES = 2000
_MAX_DRAWS = 500_000
"""Large runs get fewer resamples (never under 200) so the interval stays well under a second."""
_SEED = 20_240_602

_Z95 = 1.959963984540054
_BOOTSTRAP_RESAMPLES = 2000
_BOOTSTRAP_MAX_DRAWS = 500_000
"""Large runs get fewer resamples (never under 200) so the interval stays well under a second."""
_BOOTSTRAP_SEED = 20_240_601
"""Fixed, so the same scores always give the same interval (reports are diffable)."""


def clustered_interval(cases: Sequence[Sequence[float]]) -> tuple[float, float] | None:
    """A 95% interval for the mean over cases of each case's mean attempt score.

    `cases` holds each scored case's attempt scores (each in [0, 1]). None without any
    case. With one attempt per case there is no attempt level to resample and the
    interval is `confidence_interval` over the cases (Wilson for pass/fail). When every
    attempt of every case has the same score the bootstrap cannot vary, and Wilson over
    the cases keeps "5 of 5 passed" (or "0 of 5") from reading as certainty.
    """
    clusters = [list(scores) for scores in cases if scores]
    if not clusters:
        return None
    means = [sum(scores) / len(scores) for scores in clusters]
    if all(len(scores) == 1 for scores in clusters):
        return confidence_interval(means)
    values = {score for scores in clusters for score in scores}
    if len(values) == 1:
        return confidence_interval(means)
    return _two_level_bootstrap(clusters)


def case_interval(attempts: Sequence[float]) -> tuple[float, float] | None:
    """A 95% interval for one case's pass rate over its attempts (Wilson for pass/fail)."""
    return confidence_interval(list(attempts))


def _two_level_bootstrap(cases: list[list[float]]) -> tuple[float, float]:
    n = len(cases)
    draws = sum(len(scores) for scores in cases) + n
    resamples = min(_RESAMPLES, max(200, _MAX_DRAWS // draws))
    rng = random.Random(_SEED)
    choices, randrange = rng.choices, rng.randrange
    estimates: list[float] = []
    for _ in range(resamples):
        total = 0.0
        for _case in range(n):
            scores = cases[randrange(n)]
            size = len(scores)
            total += sum(choices(scores, k=size)) / size
        estimates.append(total / n)
    estimates.sort()
    low = estimates[int(0.025 * (resamples - 1))]
    high = estimates[math.ceil(0.975 * (resamples - 1))]
    return _clamp(low), _clamp(high)


def _clamp(value: float) -> float:
    # Rounding noise at the ends (1e-17 for an exact 0) is the end itself.
    if abs(value) < 1e-12:
        return 0.0
    if abs(value - 1.0) < 1e-12:
        return 1.0
    return min(1.0, max(0.0, value))


def confidence_interval(scores: Sequence[float]) -> tuple[float, float] | None:
    """A 95% interval for the mean of `scores`; None when there are none.

    Pass/fail scores get the Wilson score interval (sound for small n and for rates near
    0 or 1); graded scores a percentile bootstrap with a fixed seed.
    """
    n = len(scores)
    if n == 0:
        return None
    if all(score in (0.0, 1.0) for score in scores):
        return _wilson(sum(scores), n)
    resamples = min(_BOOTSTRAP_RESAMPLES, max(200, _BOOTSTRAP_MAX_DRAWS // n))
    rng = random.Random(_BOOTSTRAP_SEED)
    means = sorted(sum(rng.choices(scores, k=n)) / n for _ in range(resamples))
    low = means[int(0.025 * (resamples - 1))]
    high = means[math.ceil(0.975 * (resamples - 1))]
    return _clamp(low), _clamp(high)


def _wilson(successes: float, n: int) -> tuple[float, float]:
    p = successes / n
    z2 = _Z95 * _Z95
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = _Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return _clamp(centre - half), _clamp(centre + half)
