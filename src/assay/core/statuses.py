"""The outcomes a case, an attempt, a check and the gate can have."""

from __future__ import annotations

from typing import Literal

__all__ = ["CaseStatus", "CheckStatus", "GateStatus", "GradeStatus"]

CaseStatus = Literal["pass", "fail", "error", "skipped"]
"""A case's (and an attempt's) status in the report."""

GradeStatus = Literal["pass", "fail", "error"]
"""What grading can make of an attempt that ran (a skip is decided before it runs)."""

CheckStatus = Literal["pass", "fail", "error", "skipped", "blocked"]
"""`blocked`: a task check that never ran because the agent failed (PVYai's word)."""

GateStatus = Literal["pass", "fail"]
