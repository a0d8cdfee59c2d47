"""Where the gate is decided: pass, fail or inconclusive, and the reason said for it.

`summarize` (stats.py) counts and scores a run and calls `decide` with the score, its
interval and the errors; the policy (policy.py) says which test runs (threshold or
regression against a baseline) and what an interval straddling the limit does.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.report.gate.policy import GatePolicy, regression_problem, straddles
from assay.report.model import CaseResult

__all__ = ["decide", "is_unit_score"]

_EPSILON = 1e-9
"""Means of 0/1 scores are not exact in binary; 3/4 must not fall below a 0.75 threshold."""


def decide(
    score: float | None,
    interval: tuple[float, float] | None,
    errors: int,
    *,
    threshold: float,
    max_errors: int,
    policy: GatePolicy,
    gated: Sequence[CaseResult],
) -> tuple[list[str], str, str, str | None]:
    """(problems, reason, verdict, regression finding) of the gate's own test."""
    regression: str | None = None
    if policy.mode == "regression":
        limit = policy.floor if policy.floor is not None else 0.0
        problems = _gate_problems(
            score, errors, threshold=limit, max_errors=max_errors, word="floor"
        )
        worse, regression = regression_problem(gated, policy)
        if worse is not None:
            problems.append(worse)
        reason = (
            "; ".join(problems) or f"not worse than the baseline; {_passed(score, limit, 'floor')}"
        )
        if policy.baseline is not None and worse is None and not problems:
            reason = f"{regression}; {_passed(score, limit, 'floor')}"
    else:
        limit = threshold
        problems = _gate_problems(score, errors, threshold=limit, max_errors=max_errors)
        reason = "; ".join(problems) or _passed(score, limit)
    verdict = "fail" if problems else "pass"
    point_only = [p for p in problems if p.startswith("score ")]
    # Only the point score's own test can be in doubt: errors, a regression, an
    # incomplete run fail the gate whatever the interval says.
    if interval is not None and straddles(interval, limit) and problems == point_only:
        verdict = "inconclusive"
        low, high = interval
        word = "floor" if policy.mode == "regression" else "threshold"
        note = f"inconclusive: 95% interval {low:.2f}-{high:.2f} straddles the {word} {limit:.2f}"
        if policy.inconclusive == "fail" and not problems:
            problems = [note]
            reason = f"{reason}; {note} and --inconclusive is fail"
        elif policy.inconclusive in ("pass", "neutral") and problems:
            reason = f"{reason}; {note} and --inconclusive is {policy.inconclusive}"
            problems = []
        # Under `score` the point score decides as it always did and the verdict field
        # (and summary.md) carry the doubt; the reason stays as it was.
    return problems, reason, verdict, regression


def _gate_problems(
    score: float | None, errors: int, *, threshold: float, max_errors: int, word: str = "threshold"
) -> list[str]:
    """Why the gate fails; empty when it passes.

    Every test is written to fail closed: NaN compares False with everything, so a NaN
    score or threshold must land on the failing side of each comparison.
    """
    problems = []
    if score is None:
        problems.append("nothing was scored")
    elif not is_unit_score(score):
        # Validated models cannot hold such a score; whatever slipped past them fails.
        problems.append(f"score {score} is not a number between 0 and 1")
    elif not score >= threshold - _EPSILON:
        shown, limit = _distinct(score, threshold)
        problems.append(f"score {shown} < {word} {limit}")
    if not errors <= max_errors:
        problems.append(f"errors {errors} > max-errors {max_errors}")
    return problems


def _passed(score: float | None, threshold: float, word: str = "threshold") -> str:
    assert score is not None  # no score is a gate problem
    shown, limit = _distinct(score, threshold)
    return f"score {shown} >= {word} {limit}"


def is_unit_score(value: float) -> bool:
    return 0.0 <= value <= 1.0  # False for NaN


def _distinct(score: float, threshold: float) -> tuple[str, str]:
    """Both numbers with two decimals, or four when two would make them look equal."""
    for digits in (2, 4):
        shown, limit = f"{score:.{digits}f}", f"{threshold:.{digits}f}"
        if shown != limit or abs(score - threshold) < _EPSILON:
            return shown, limit
    return f"{score:.6f}", f"{threshold:.6f}"
