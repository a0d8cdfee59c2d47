"""Comparing two reports: what changed per case, and whether the change is more than noise.

Cases pair up by (case id, model). Each pair gets one `change` label; newly failing ones
are what a reviewer looks at first. Two paired tests say whether the head is really
better or worse than the base:

- McNemar's exact test on the cases scored (pass/fail) in both reports: under "no
  change" a case that flips is as likely to flip either way, so the flips in one
  direction follow Binomial(flips, 1/2).
- When case scores are fractions (repeats, or graded rubric scores), a seeded paired
  bootstrap of the mean per-case score delta, which uses what pass/fail throws away.
  It decides the verdict when present; McNemar decides otherwise.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Final, Literal, get_args

from pydantic import BaseModel, ConfigDict

from assay.report.model import CaseResult, CaseStatus, Report, Summary
from assay.report.stats import confidence_interval

__all__ = [
    "COMPARISON_CONTRACT",
    "CHANGE_ORDER",
    "CaseChange",
    "Change",
    "Comparison",
    "Deltas",
    "McNemarTest",
    "PairedBootstrap",
    "RunSide",
    "Significance",
    "compare_reports",
    "explain",
    "mcnemar_exact_p",
    "paired_bootstrap",
]

COMPARISON_CONTRACT: Final = "assay.comparison.v1"
ALPHA = 0.05
"""Significance level of both tests (two-sided; the bootstrap interval is 95%)."""
_EPSILON = 1e-9

Change = Literal[
    "newly_failing",
    "newly_passing",
    "still_failing",
    "now_error",
    "no_longer_error",
    "now_skipped",
    "no_longer_skipped",
    "added",
    "removed",
    "still_passing",
    "still_skipped",
]
CHANGE_ORDER: tuple[Change, ...] = get_args(Change)
"""Most urgent first: the order changes are listed in."""

Verdict = Literal[
    "significantly worse",
    "significantly better",
    "no significant change",
    "no cases scored in both",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class CaseChange(_Model):
    """One (case id, model) in either report and how it changed."""

    id: str
    model: str | None = None
    change: Change
    """newly_failing: pass -> fail/error. newly_passing: fail/error -> pass. still_failing:
    fail -> fail or error -> error. now_error / no_longer_error: fail -> error / error ->
    fail. now_skipped / no_longer_skipped: to / from skipped. added / removed: only in head
    / only in base. still_passing, still_skipped: no change."""
    base_status: CaseStatus | None = None
    """None when the case is only in head."""
    head_status: CaseStatus | None = None
    """None when the case is only in base."""
    base_score: float | None = None
    head_score: float | None = None
    score_delta: float | None = None
    """head_score - base_score, when both are scored."""
    reason: str = ""
    """Why the case ended as it did in head (in base for removed cases)."""


class RunSide(_Model):
    """The run on one side of the comparison."""

    run_id: str
    started_at: str
    git_sha: str | None = None
    summary: Summary


class Deltas(_Model):
    """Head minus base for the run totals."""

    score: float | None
    """Aggregate score delta (each side over its own cases); None when a side scored nothing."""
    paired_score: float | None
    """Mean score delta over the cases scored in both: the like-for-like number."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None when either side's cost is unknown."""
    duration_s: float


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


class Comparison(_Model):
    """`assay compare BASE HEAD --json`."""

    contract: Literal["assay.comparison.v1"] = COMPARISON_CONTRACT
    base: RunSide
    head: RunSide
    delta: Deltas
    counts: dict[Change, int]
    """How many cases got each change label (labels with no case are left out)."""
    significance: Significance
    changes: list[CaseChange]
    """Every case of either report, most urgent change first, then by id and model."""

    def of(self, *changes: Change) -> list[CaseChange]:
        """The cases whose change is one of `changes`, in listing order."""
        return [c for c in self.changes if c.change in changes]


def compare_reports(base: Report, head: Report) -> Comparison:
    """Per-case changes, totals deltas and the paired significance tests, head vs base."""
    base_cases = {(c.id, c.model): c for c in base.cases}
    head_cases = {(c.id, c.model): c for c in head.cases}
    keys = list(dict.fromkeys([*base_cases, *head_cases]))
    changes = [_case_change(base_cases.get(key), head_cases.get(key)) for key in keys]
    rank = {change: position for position, change in enumerate(CHANGE_ORDER)}
    changes.sort(key=lambda c: (rank[c.change], c.id, c.model or ""))
    pairs = [(base_cases[k], head_cases[k]) for k in keys if k in base_cases and k in head_cases]
    paired_deltas = [_delta(b, h) for b, h in pairs]
    deltas = [d for d in paired_deltas if d is not None]
    counts = Counter(c.change for c in changes)
    return Comparison(
        base=_side(base),
        head=_side(head),
        delta=_totals(base.summary, head.summary, deltas),
        counts={change: counts[change] for change in CHANGE_ORDER if counts[change]},
        significance=_significance(pairs, deltas),
        changes=changes,
    )


def _case_change(base: CaseResult | None, head: CaseResult | None) -> CaseChange:
    shown = head or base
    assert shown is not None
    return CaseChange(
        id=shown.id,
        model=shown.model,
        change=_classify(base.status if base else None, head.status if head else None),
        base_status=base.status if base else None,
        head_status=head.status if head else None,
        base_score=base.score if base else None,
        head_score=head.score if head else None,
        score_delta=_delta(base, head) if base and head else None,
        reason=shown.reason,
    )


def _classify(base: CaseStatus | None, head: CaseStatus | None) -> Change:
    if base is None:
        return "added"
    if head is None:
        return "removed"
    if base == "skipped" or head == "skipped":
        if base == head:
            return "still_skipped"
        return "now_skipped" if head == "skipped" else "no_longer_skipped"
    if base == "pass":
        return "still_passing" if head == "pass" else "newly_failing"
    if head == "pass":
        return "newly_passing"
    if base != head:
        return "now_error" if head == "error" else "no_longer_error"
    return "still_failing"


def _delta(base: CaseResult, head: CaseResult) -> float | None:
    if base.score is None or head.score is None:
        return None
    return head.score - base.score


def _side(report: Report) -> RunSide:
    run = report.run
    return RunSide(
        run_id=run.id, started_at=run.started_at, git_sha=run.git_sha, summary=report.summary
    )


def _totals(base: Summary, head: Summary, paired: Sequence[float]) -> Deltas:
    return Deltas(
        score=None if base.score is None or head.score is None else head.score - base.score,
        paired_score=sum(paired) / len(paired) if paired else None,
        input_tokens=head.tokens.input - base.tokens.input,
        output_tokens=head.tokens.output - base.tokens.output,
        cost_usd=(
            None
            if base.cost_usd is None or head.cost_usd is None
            else head.cost_usd - base.cost_usd
        ),
        duration_s=head.duration_s - base.duration_s,
    )


def mcnemar_exact_p(worse: int, better: int) -> float:
    """Two-sided exact McNemar p-value for `worse` and `better` discordant pairs."""
    flips = worse + better
    if flips == 0:
        return 1.0
    tail = sum(math.comb(flips, k) for k in range(min(worse, better) + 1))
    return min(1.0, 2 * tail / 2**flips)


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


def _significance(
    pairs: Sequence[tuple[CaseResult, CaseResult]], deltas: list[float]
) -> Significance:
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
