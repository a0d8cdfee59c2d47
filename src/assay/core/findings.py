"""A finding the agent under test reports, and the place in the repository it points at.

`Location` is Warden's wire name for a finding's place in the code (repo-relative path and
lines). Where in a *user's file* (a suite, a config) something is, is a different thing:
`assay.core.positions.SourcePosition`.
"""

from __future__ import annotations

from pydantic import ConfigDict

from assay.core._contract import ContractModel
from assay.core.severities import Severity

__all__ = ["Finding", "Location"]


class Location(ContractModel):
    path: str
    """Repo-relative path of the file the finding is about."""
    startLine: int | None = None  # noqa: N815 - Warden's wire name
    endLine: int | None = None  # noqa: N815


class Finding(ContractModel):
    """One issue reported by the agent under test (Warden's finding shape)."""

    model_config = ConfigDict(extra="allow")
    severity: Severity
    confidence: str | float | None = None
    """`high|medium|low` or a number in [0, 1]; as the agent gave it."""
    title: str
    description: str = ""
    location: Location | None = None
