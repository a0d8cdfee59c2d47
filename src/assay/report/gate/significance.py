"""Whether two runs differ by more than chance: paired tests over the cases in both.

- McNemar's exact test on the cases scored (pass/fail) in both reports: under "no
  change" a case that flips is as likely to flip either way, so the flips in one
  direction follow Binomial(flips, 1/2).
- When case scores are fractions (repeats, or graded rubric scores), a seeded paired
  bootstrap of the mean per-case score delta, which uses what pass/fail throws away.
  It decides the verdict when present; McNemar decides otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from assay.report.gate.interval import confidence_interval
from assay.report.model import CaseResult

__all__ = [
    "ALPHA",
    "McNemarTest",
    "PairedBootstrap",
    "Significance",
    "Verdict",
    "explain",
    "mcnemar_exact_p",
    "paired_bootstrap",
    "score_deltas",
    "significance_of",
]

ALPHA = 0.05
"""Significance level of both tests (two-sided; the bootstrap interval is 95%)."""
_EPSILON = 1e-9
_LN2 = math.log(2.0)
_EXACT_FLIPS = 20_000
"""Up to this many discordant pairs the binomial tail is summed in exact integers (~0.1 s)."""

Verdict = Literal[
    "significantly worse",
    "significantly better",
    "no significant change",
    "no cases scored in both",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class McNemarTest(_Model):
    """McNemar's exact test on the cases scored pass/fail in both reports."""

    cases: int
    """Cases scored in both reports."""
    worse: int
    """Cases that went pass -> fail."""
    better: int
    """Cases that went fail -> pass."""
    p_value: float
    """Two-sided exact p: 2 * P(X <= min(worse, better)), X ~ Binomial(worse + better, 1/2)."""


class PairedBootstrap(_Model):
    """A 95% interval of the mean per-case score delta (seeded, so reproducible)."""

    cases: int
    """Cases with a score in both reports."""
    mean_delta: float
    interval: list[float]
    """[lo, hi]; the change is significant when the interval excludes 0."""


class Significance(_Model):
    """Whether the head differs from the base by more than chance."""

    verdict: Verdict
    method: Literal["mcnemar", "bootstrap"] | None = None
    """The test the verdict rests on: the bootstrap when scores are fractions, else McNemar."""
    alpha: float = ALPHA
    mcnemar: McNemarTest | None = None
    bootstrap: PairedBootstrap | None = None
    """Present when some case score in both reports is a fraction (repeats or graded scores)."""


def mcnemar_exact_p(worse: int, better: int) -> float:
    """Two-sided exact McNemar p-value for `worse` and `better` discordant pairs."""
    flips = worse + better
    if flips == 0:
        return 1.0
    fewer = min(worse, better)
    if flips <= _EXACT_FLIPS:
        term = tail = 1  # C(flips, k) in exact integers, k = 0..fewer
        for k in range(1, fewer + 1):
            term = term * (flips - k + 1) // k
            tail += term
        return min(1.0, 2 * tail / 2**flips)
    # Far past any real suite; summed in log space, where 2**-flips cannot underflow.
    log_terms = [
        math.lgamma(flips + 1) - math.lgamma(k + 1) - math.lgamma(flips - k + 1) - flips * _LN2
        for k in range(fewer + 1)
    ]
    largest = max(log_terms)
    total = math.exp(largest) * math.fsum(math.exp(term - largest) for term in log_terms)
    return min(1.0, 2.0 * total)


def paired_bootstrap(deltas: Sequence[float]) -> PairedBootstrap | None:
    """A 95% interval of the mean of `deltas` (each in [-1, 1]); None when there are none.

    Reuses the report's interval: `(d + 1) / 2` maps the deltas onto [0, 1], where
    `confidence_interval` bootstraps with its fixed seed (or, when every delta is -1 or
    +1, uses the Wilson interval of that proportion); the interval maps back linearly.
    """
    interval = confidence_interval([(delta + 1.0) / 2.0 for delta in deltas])
    if interval is None:
        return None
    low, high = interval
    return PairedBootstrap(
        cases=len(deltas),
        mean_delta=sum(deltas) / len(deltas),
        interval=[2.0 * low - 1.0, 2.0 * high - 1.0],
    )


def score_deltas(pairs: Sequence[tuple[CaseResult, CaseResult]]) -> list[float]:
    """head score - base score of each (base, head) pair scored on both sides."""
    return [
        head.score - base.score
        for base, head in pairs
        if base.score is not None and head.score is not None
    ]


def significance_of(pairs: Sequence[tuple[CaseResult, CaseResult]]) -> Significance:
    """The tests over (base, head) pairs of the same case, and the verdict they support."""
    scored = [
        (b, h) for b, h in pairs if b.status in ("pass", "fail") and h.status in ("pass", "fail")
    ]
    if not scored:
        return Significance(verdict="no cases scored in both")
    worse = sum(1 for b, h in scored if b.status == "pass" and h.status == "fail")
    better = sum(1 for b, h in scored if b.status == "fail" and h.status == "pass")
    mcnemar = McNemarTest(
        cases=len(scored), worse=worse, better=better, p_value=mcnemar_exact_p(worse, better)
    )
    deltas = score_deltas(scored)
    fractional = any(_fractional(case) for pair in scored for case in pair)
    bootstrap = paired_bootstrap(deltas) if fractional else None
    verdict: Verdict = "no significant change"
    if bootstrap is not None:
        low, high = bootstrap.interval
        if low > _EPSILON:
            verdict = "significantly better"
        elif high < -_EPSILON:
            verdict = "significantly worse"
    elif mcnemar.p_value < ALPHA:
        verdict = "significantly worse" if worse > better else "significantly better"
    return Significance(
        verdict=verdict,
        method="bootstrap" if bootstrap is not None else "mcnemar",
        mcnemar=mcnemar,
        bootstrap=bootstrap,
    )


def _fractional(case: CaseResult) -> bool:
    """Scores that carry more than pass/fail: several attempts, or a graded score."""
    return case.score is not None and (len(case.attempts) > 1 or case.score not in (0.0, 1.0))


def explain(significance: Significance) -> str:
    """The numbers behind the verdict, as one plain sentence."""
    parts = []
    if significance.bootstrap is not None:
        boot = significance.bootstrap
        low, high = boot.interval
        parts.append(
            f"mean per-case score change {boot.mean_delta:+.2f}, 95% interval {low:+.2f} to "
            f"{high:+.2f} (paired bootstrap over {boot.cases} cases)"
        )
    if significance.mcnemar is not None:
        test = significance.mcnemar
        parts.append(
            f"McNemar exact p = {_p_value(test.p_value)} ({test.worse} pass → fail, "
            f"{test.better} fail → pass, of {test.cases} cases scored in both)"
        )
    return "; ".join(parts) or "no case has a score in both reports"


def _p_value(p: float) -> str:
    return "< 0.0001" if p < 0.0001 else f"{p:.4f}".rstrip("0").rstrip(".")
