"""The cases `assay merge` refuses to gate: ones whose status contradicts their own record.

A shard report is JSON anyone can edit, and the merge gates whatever its cases say. A case
whose status contradicts its score, its attempts or its checks, by the rules assay scores
with, is not what a run wrote (a hand edit, a damaged download) and may pass the gate
for a run that failed. Each rule below holds for every case `runner/combine.py` makes:

- a pass or fail case has a score, an error or skipped one has none (`combine_attempts`);
  a failing case without its score would drop out of the gate's mean;
- a review, verify or task attempt scores its status, 1 for pass and 0 for fail
  (`grading.base.Grade.score`), so such a case passes only with score 1 and fails below
  it; a rubric's score is the judge's `(score-1)/4` whatever `met_rubric` says, so any
  score goes with either status there;
- status and score are what the case's attempts combine to (`combine_attempts`), unless
  the run stopped before it (interrupted, `--max-cost`: `skipped` whatever had run);
- a passing attempt, and so a passing case, holds no failed, errored or blocked check
  but an optional one (`required: false`: an optional should_find or its severity).

A case without attempts (hand-built, or from an old report) is checked by what it holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from assay.core.checks import Check
from assay.core.kinds import CaseKind
from assay.core.statuses import FAILING_CHECKS
from assay.report.gate.stats import combine_attempts, not_run_counts
from assay.report.model import Attempt, CaseResult

__all__ = ["case_contradictions"]

SCORED_BY_STATUS: Final[frozenset[CaseKind]] = frozenset({"review", "verify", "task"})
"""The kinds whose attempt score is its status (1 pass, 0 fail); rubric is the other one."""

_OPTIONAL_KINDS: Final = frozenset({"should_find", "severity"})


def case_contradictions(case: CaseResult) -> list[str]:
    """What in `case` contradicts its status by assay's own rules; [] for a case a run made."""
    attempts = list(enumerate(case.attempts, start=1))
    problems = _score_presence(case)
    if case.kind in SCORED_BY_STATUS:
        problems += _first(
            _status_scores(case.kind, case.status, case.score, what="it"),
            *(
                _status_scores(case.kind, a.status, a.score, what=f"attempt {n}")
                for n, a in attempts
            ),
        )
    problems += _attempts_disagree(case)
    problems += _first(
        _failed_checks(case, case.checks, what="it") if case.status == "pass" else [],
        *(
            _failed_checks(case, a.checks, what=f"attempt {n}")
            for n, a in attempts
            if a.status == "pass"
        ),
    )
    return problems


def _first(*found: list[str]) -> list[str]:
    """The first rule's problems only: an attempt repeats what its case already said."""
    return next((problems for problems in found if problems), [])


def _score_presence(case: CaseResult) -> list[str]:
    if case.status in ("pass", "fail") and case.score is None:
        return [f"it is {case.status} without a score"]
    if case.status in ("error", "skipped") and case.score is not None:
        return [f"it is {case.status} with score {case.score:g}, which only a scored case has"]
    return []


def _status_scores(kind: CaseKind, status: str, score: float | None, *, what: str) -> list[str]:
    """A review, verify or task result: pass scores 1, fail below 1 (0 for one attempt)."""
    if score is None or status not in ("pass", "fail"):
        return []
    if status == "pass" and score != 1.0:
        return [f"{what} is pass with score {score:g}, where a {kind} pass scores 1"]
    if status == "fail" and score == 1.0:
        return [f"{what} is fail with score 1, where a {kind} fail scores less"]
    return []


def _attempts_disagree(case: CaseResult) -> list[str]:
    if not case.attempts:
        return []
    status, score, _ = combine_attempts(case.attempts)
    if case.status == "skipped":
        if status in ("pass", "fail") and not not_run_counts([case]):
            return [f"it is skipped ({case.reason or 'no reason'}) but its attempts were scored"]
        return []  # a case the run stopped before is skipped whatever had run
    if status != case.status:
        return [f"it is {case.status} but its attempts make it {status} ({_attempts(case)})"]
    if score is not None and case.score is not None and not _same(score, case.score):
        return [f"its score is {case.score:g} but its attempts average {score:g}"]
    return []


def _failed_checks(case: CaseResult, checks: Sequence[Check], *, what: str) -> list[str]:
    failed = [c for c in checks if c.status in FAILING_CHECKS and not _optional(case, c)]
    if not failed:
        return []
    shown = ", ".join(f"{c.id} ({c.status})" for c in failed[:3])
    more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
    return [f"{what} is pass but check {shown}{more} did not pass"]


def _optional(case: CaseResult, check: Check) -> bool:
    """An optional should_find, or its severity: the one check whose failure fails nothing
    (grading/findings_judge.py). A user grader's failing check fails any case."""
    return (
        case.kind == "review"
        and check.kind in _OPTIONAL_KINDS
        and (check.model_extra or {}).get("required") is False
    )


def _attempts(case: CaseResult) -> str:
    return ", ".join(_attempt(a) for a in case.attempts)


def _attempt(attempt: Attempt) -> str:
    return attempt.status if attempt.score is None else f"{attempt.status} {attempt.score:g}"


def _same(a: float, b: float) -> bool:
    # Both were computed as the same mean of the same scores; JSON keeps floats exactly.
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
