"""Folding the attempts of one (case, model) into its CaseResult."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.statuses import CaseStatus
from assay.core.usage import Usage, sum_usage
from assay.report.gate.interval import case_interval
from assay.report.gate.pass_k import pass_counts
from assay.report.gate.stats import combine_attempts
from assay.report.model import AgentActivity, Attempt, CaseResult, Source
from assay.runner.outcome import AttemptOutcome

if TYPE_CHECKING:
    from assay.grading.base import Grade
    from assay.runner.plan import PlannedRun
    from assay.suites.case import Case

__all__ = ["case_result", "fold_attempts", "graded_attempt", "source_of", "total_usage"]


def total_usage(usages: Iterable[Usage]) -> Usage:
    """Sum what was actually used; a part with no tokens and no cost made no model call
    (a deterministic grader, a skipped attempt), so it must not make the cost unknown."""
    billable = [u for u in usages if u.cost_usd is not None or _tokens(u)]
    if len(billable) == 1:  # its own total: shared (a Usage is never changed once made)
        return billable[0]
    return sum_usage(billable) if billable else Usage()


def _tokens(usage: Usage) -> int:
    return (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_read_tokens
        + usage.cache_write_tokens
    )


def source_of(path: Path, line: int) -> Source:
    """The suite file relative to the working directory when it is below it."""
    return Source(path=_shown_path(path, os.getcwd()), line=line)


@functools.lru_cache(maxsize=256)
def _shown_path(path: Path, cwd: str) -> str:
    # Cached: every case of a suite shares its file, and relpath is not free per case.
    try:
        shown = Path(os.path.relpath(path, cwd))
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if shown.parts[:1] == ("..",) else shown.as_posix()


def graded_attempt(
    grade: Grade,
    *,
    duration_s: float,
    usage: Usage,
    transcript: str | None = None,
    activity: dict[str, Any] | None = None,
) -> Attempt:
    """An attempt that ran to grading, as the report records it (an `error` has no score)."""
    return Attempt(
        status=grade.status,
        score=grade.score if grade.status != "error" else None,
        reason=grade.reason,
        error_source=(grade.error_source or "grader") if grade.status == "error" else None,
        duration_s=duration_s,
        usage=usage,
        checks=grade.checks,
        transcript=transcript,
        activity=AgentActivity.model_validate(activity) if activity else None,
    )


def case_result(
    run: PlannedRun, outcomes: Sequence[AttemptOutcome], *, forced_reason: str | None = None
) -> CaseResult:
    """Combine `outcomes` (every attempt of `run`) with the report's statistics rules."""
    return fold_attempts(
        run.case,
        model=run.model,
        runtime=run.runtime,
        outcomes=outcomes,
        forced_reason=forced_reason,
        min_pass=run.min_pass,
    )


def fold_attempts(
    case: Case,
    *,
    model: str | None,
    runtime: str | None,
    outcomes: Sequence[AttemptOutcome],
    forced_reason: str | None = None,
    min_pass: int | None = None,
) -> CaseResult:
    """The one way attempts become a CaseResult (`assay run` and `assay score` alike).

    Checks, findings and the judge's verdict come from the last scored attempt, so the
    report shows one coherent attempt rather than a mix. `forced_reason` marks a case the
    run itself cut short (interrupted, budget): it is `skipped` whatever ran before.
    `min_pass` (`--min-pass N`, `combine_attempts`'s rule): a failing case's reason says
    how many attempts passed.
    """

    attempts = [outcome.attempt for outcome in outcomes]
    scored = [o for o in outcomes if o.attempt.status in ("pass", "fail")]
    shown = scored[-1] if scored else (outcomes[-1] if outcomes else None)
    status: CaseStatus
    if forced_reason is not None:
        status, score, flaky, reason = "skipped", None, False, forced_reason
        error_source = None
    else:
        status, score, flaky = combine_attempts(attempts, min_pass=min_pass)
        told = next((o.attempt for o in reversed(outcomes) if o.attempt.status == status), None)
        reason = told.reason if told else ""
        error_source = told.error_source if told and status == "error" else None
    counts = pass_counts(attempts)
    if forced_reason is None and min_pass is not None and status == "fail":
        rule = f"{counts.passed} of {len(attempts)} attempts passed, --min-pass {min_pass}"
        reason = f"{rule}: {reason}" if reason else rule
    return CaseResult(
        id=case.id,
        suite=case.suite,
        kind=case.kind,
        source=source_of(case.source_path, case.source_line),
        model=model,
        runtime=runtime,
        status=status,
        score=score,
        reason=reason,
        error_source=error_source,
        checks=list(shown.attempt.checks) if shown else [],
        findings=list(shown.findings) if shown else [],
        judge=dict(shown.judge) if shown else {},
        usage=total_usage(a.usage for a in attempts),
        duration_s=sum(a.duration_s for a in attempts),
        attempts=attempts,
        attempts_passed=counts.passed if len(attempts) > 1 else None,
        attempts_total=counts.total if len(attempts) > 1 else None,
        flaky=flaky,
        score_ci=_flaky_interval(attempts) if flaky else None,
        workspace=next((o.workspace for o in reversed(outcomes) if o.workspace), None),
    )


def _flaky_interval(attempts: Sequence[Attempt]) -> list[float] | None:
    """The 95% interval of a flaky case's pass rate over its scored attempts."""

    scores = [
        a.score if a.score is not None else float(a.status == "pass")
        for a in attempts
        if a.status in ("pass", "fail")
    ]
    interval = case_interval(scores)
    return list(interval) if interval is not None else None
