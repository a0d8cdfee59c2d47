"""How the gate reads a run: its mode, what an inconclusive result does, how errors count.

`summarize` (report/gate/stats.py) counts and gates; this module holds the choices it gates
with and the numbers those choices need: the cases that are gated (quarantined ones are
run and reported but kept out), each case's attempt scores under `errors_count_as`, the
interval over them (report/gate/interval.py), and the regression test against a baseline
(report/gate/significance.py). See docs/statistics.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from assay.report.model import CaseResult, Report

if TYPE_CHECKING:
    from assay.options import RunSettings

__all__ = [
    "ERRORS_COUNT_AS",
    "GATE_MODES",
    "INCONCLUSIVE_POLICIES",
    "ErrorsCountAs",
    "GateMode",
    "GatePolicy",
    "InconclusivePolicy",
    "Verdict",
    "attempt_scores",
    "case_interval_note",
    "gate_facts_note",
    "gate_mode_without_baseline",
    "gate_policy",
    "gated_cases",
    "regression_problem",
    "straddles",
]

GateMode = Literal["threshold", "regression"]
InconclusivePolicy = Literal["score", "fail", "pass", "neutral"]
ErrorsCountAs = Literal["skip", "fail"]
Verdict = Literal["pass", "fail", "inconclusive"]

GATE_MODES: Final = ("threshold", "regression")
INCONCLUSIVE_POLICIES: Final = ("score", "fail", "pass", "neutral")
ERRORS_COUNT_AS: Final = ("skip", "fail")
_EPSILON = 1e-9


@dataclass(frozen=True)
class GatePolicy:
    """The gate's choices beyond threshold and max-errors (defaults: today's gate)."""

    mode: GateMode = "threshold"
    """`threshold`: the score against `--threshold`; `regression`: significantly worse than
    the baseline on the paired cases, or below `floor`."""
    inconclusive: InconclusivePolicy = "score"
    """What an interval straddling the threshold (or floor) makes the gate: `score` (the
    point score decides, as before), `fail`, `pass`, or `neutral` (passes; the Action says
    so with a notice)."""
    errors_count_as: ErrorsCountAs = "skip"
    """`skip`: errors leave the denominator (as before, bounded by --max-errors); `fail`:
    the gate's score counts every errored attempt and case as a miss."""
    floor: float | None = None
    """`--floor`: the absolute score a regression gate never goes below."""
    baseline: tuple[CaseResult, ...] | None = None
    """The baseline report's cases (regression mode)."""
    quarantine: frozenset[str] = field(default_factory=frozenset)
    """Case ids run and reported but kept out of the gate (`[tool.assay] quarantine`)."""


def gate_policy(options: RunSettings, baseline: Report | None) -> GatePolicy:
    """The gate's policy from the run's settings and its baseline (as the run read it)."""
    return GatePolicy(
        mode=options.gate,
        inconclusive=options.inconclusive,
        errors_count_as=options.errors_count_as,
        floor=options.floor,
        baseline=tuple(baseline.cases) if baseline is not None else None,
        quarantine=frozenset(options.quarantine),
    )


def gate_mode_without_baseline(
    mode: GateMode, *, baseline: object | None, floor: float | None, baseline_asked: bool
) -> GateMode:
    """The mode a run gates in when `regression` has nothing to compare with.

    The Action asks for a baseline (`baseline-report`) that may not be there: the first
    run, an expired artifact. It then gates on the threshold, so the run is still made and
    published and, on the default branch, uploads the report that becomes the next run's
    baseline. A regression gate with no baseline asked for (nor a floor) stays as it is:
    a configuration error, as for `assay run`.
    """
    if mode == "regression" and baseline is None and floor is None and baseline_asked:
        return "threshold"
    return mode


def gated_cases(cases: Sequence[CaseResult], policy: GatePolicy) -> list[CaseResult]:
    """The cases the gate reads: all but the quarantined ones."""
    return [c for c in cases if not (c.quarantined or c.id in policy.quarantine)]


def attempt_scores(case: CaseResult, errors_count_as: ErrorsCountAs) -> list[float]:
    """The case's attempt scores the interval resamples; [] when the case is not scored.

    Under `fail` an errored attempt is a 0, and a case that only errored is one 0.
    """
    scores: list[float] = []
    for attempt in case.attempts:
        if attempt.status in ("pass", "fail"):
            scores.append(
                attempt.score if attempt.score is not None else float(attempt.status == "pass")
            )
        elif attempt.status == "error" and errors_count_as == "fail":
            scores.append(0.0)
    if not scores and case.status in ("pass", "fail") and case.score is not None:
        scores = [case.score]  # a result without its attempts (hand-built, or old)
    if not scores and case.status == "error" and errors_count_as == "fail":
        scores = [0.0]
    return scores


def straddles(interval: Sequence[float] | None, limit: float) -> bool:
    """True when the 95% interval holds values on both sides of `limit`."""
    if interval is None:
        return False
    low, high = interval
    return low < limit - _EPSILON and high >= limit - _EPSILON


def regression_problem(cases: Sequence[CaseResult], policy: GatePolicy) -> tuple[str | None, str]:
    """(why the head regressed, or None; the one-line finding) against the baseline."""
    # lazy: start-up (not loaded with this module)
    from assay.report.gate.significance import explain, significance_of

    if policy.baseline is None:
        return None, "no baseline report"
    base = {(c.id, c.model): c for c in gated_cases(policy.baseline, policy)}
    pairs = [(base[key], c) for c in cases if (key := (c.id, c.model)) in base]
    significance = significance_of(pairs)
    finding = f"{significance.verdict} vs the baseline ({explain(significance)})"
    if significance.verdict == "significantly worse":
        return finding, finding
    return None, finding


def gate_facts_note(report: Report) -> str:
    """` · verdict inconclusive · score if errors failed 0.40 · 1 quarantined · selected:
    ...`: what the gate read beyond the score and why these cases ran, for summary.md's
    counts line (and so the PR comment); "" when nothing to add."""
    summary = report.summary
    parts = []
    if summary.verdict is not None and summary.verdict != summary.gate:
        parts.append(f"verdict {summary.verdict}")
    if summary.gate_mode == "regression" and summary.regression:
        parts.append(summary.regression)
    if summary.score_if_errors_failed is not None:
        parts.append(f"score if errors failed {summary.score_if_errors_failed:.2f}")
    if summary.quarantined:
        parts.append(f"{summary.quarantined} quarantined")
    if report.run.selection:
        parts.append(f"selected: {report.run.selection}")
    return "".join(f" · {part}" for part in parts)


def case_interval_note(case: CaseResult) -> str:
    """` (95% interval 0.15–0.95)` of a flaky case's pass rate; "" without one."""
    if case.score_ci is None:
        return ""
    return f" (95% interval {case.score_ci[0]:.2f}–{case.score_ci[1]:.2f})"
