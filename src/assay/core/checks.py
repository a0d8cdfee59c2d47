"""One graded assertion of a case."""

from __future__ import annotations

from pydantic import ConfigDict

from assay.core._contract import ContractModel
from assay.core.statuses import CheckStatus

__all__ = ["Check"]


class Check(ContractModel):
    """One graded assertion of a case: a command, a judge assertion, a file rule, a trace event."""

    model_config = ConfigDict(extra="allow")
    id: str
    kind: str
    """command | changed_files | context | trace | should_find | should_not_find |
    severity | verdict | rubric"""
    status: CheckStatus
    """`blocked`: a task check that never ran because the agent failed (PVYai's word)."""
    message: str = ""
