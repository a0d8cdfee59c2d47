"""What one attempt leaves for its case's result: the Attempt and its last findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.report.model import Attempt

__all__ = ["AttemptOutcome", "skipped_outcome"]


@dataclass(frozen=True)
class AttemptOutcome:
    """An Attempt plus what the CaseResult takes from its last scored attempt."""

    attempt: Attempt
    findings: list[dict[str, Any]] = field(default_factory=list)
    judge: dict[str, Any] = field(default_factory=dict)
    workspace: str | None = None


def skipped_outcome(reason: str) -> AttemptOutcome:
    return AttemptOutcome(Attempt(status="skipped", reason=reason))
