"""Comparing two reports: what changed per case, the totals, and whether it is more than noise.

Cases pair up by (case id, model). Each pair gets one `change` label; newly failing ones
are what a reviewer looks at first. `assay.report.gate.significance` judges the pairs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final, Literal, get_args

from pydantic import BaseModel, ConfigDict

from assay._util.arguments import expect
from assay.report.gate.significance import Significance, score_deltas, significance_of
from assay.report.model import CaseResult, CaseStatus, Report, Summary

__all__ = [
    "COMPARED",
    "COMPARISON_CONTRACT",
    "CHANGE_ORDER",
    "CaseChange",
    "Change",
    "Comparison",
    "Deltas",
    "RunSide",
    "compare_reports",
]

COMPARISON_CONTRACT: Final = "assay.comparison.v1"

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
COMPARED: tuple[Change, ...] = (
    "newly_failing",
    "newly_passing",
    "still_failing",
    "now_error",
    "no_longer_error",
    "still_passing",
)
"""The changes of a case with a result (pass, fail or error) in both reports: what there is
to compare. Without one, a score change only says how two different sets of cases did."""
_A_REPORT = "a Report (read one with assay.read_report(path))"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


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

    def nothing_compared(self) -> str | None:
        """Why there is nothing to compare (no case has a result in both reports), or None."""
        if self.of(*COMPARED):
            return None
        in_base = sum(1 for c in self.changes if c.base_status is not None)
        in_head = sum(1 for c in self.changes if c.head_status is not None)
        in_both = in_base + in_head - len(self.changes)
        if not self.changes:
            return "neither report has any case"
        if not in_both:
            return f"no case is in both reports (base has {in_base}, head {in_head})"
        return f"the {in_both} case(s) in both reports are skipped in one of them"

    def warnings(self) -> list[str]:
        """What a reader of this comparison should be told before its numbers."""
        found = []
        if reason := self.nothing_compared():
            found.append(f"nothing to compare: {reason}")
        if self.base.run_id == self.head.run_id:
            found.append(
                f"base and head are the same run ({self.base.run_id}): "
                "every case is compared with itself"
            )
        return found


def compare_reports(base: Report, head: Report) -> Comparison:
    """Per-case changes, totals deltas and the paired significance tests, head vs base."""
    for name, report in (("base", base), ("head", head)):
        expect(name, report, Report, _A_REPORT)
    base_cases = {(c.id, c.model): c for c in base.cases}
    head_cases = {(c.id, c.model): c for c in head.cases}
    keys = list(dict.fromkeys([*base_cases, *head_cases]))
    changes = [_case_change(base_cases.get(key), head_cases.get(key)) for key in keys]
    rank = {change: position for position, change in enumerate(CHANGE_ORDER)}
    changes.sort(key=lambda c: (rank[c.change], c.id, c.model or ""))
    pairs = [(base_cases[k], head_cases[k]) for k in keys if k in base_cases and k in head_cases]
    deltas = score_deltas(pairs)
    counts = Counter(c.change for c in changes)
    return Comparison(
        base=_side(base),
        head=_side(head),
        delta=_totals(base.summary, head.summary, deltas),
        counts={change: counts[change] for change in CHANGE_ORDER if counts[change]},
        significance=significance_of(pairs),
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
