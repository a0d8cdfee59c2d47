"""The outcomes a case, an attempt, a check and the gate can have."""

from __future__ import annotations

from typing import Literal

__all__ = [
    "FAILING_CHECKS",
    "CaseStatus",
    "CheckStatus",
    "ErrorSource",
    "GateStatus",
    "GradeStatus",
]

CaseStatus = Literal["pass", "fail", "error", "skipped"]
"""A case's (and an attempt's) status in the report."""

GradeStatus = Literal["pass", "fail", "error"]
"""What grading can make of an attempt that ran (a skip is decided before it runs)."""

CheckStatus = Literal["pass", "fail", "error", "skipped", "blocked"]
"""`blocked`: a task check that never ran because the agent failed (PVYai's word)."""

FAILING_CHECKS: frozenset[CheckStatus] = frozenset({"fail", "error", "blocked"})
"""A check in one of these keeps its case from passing (a user grader's too: one that could
not look is no pass), whatever else passed."""

GateStatus = Literal["pass", "fail"]

ErrorSource = Literal["agent", "judge", "grader", "sandbox", "harness"]
"""Whose call failed when an attempt is an `error`: the agent under test (it crashed, timed
out, gave no answer), the judge model, the grading (a verification command, a user
grader), the sandbox that could not be built, or assay itself (a bug, never the case's)."""
