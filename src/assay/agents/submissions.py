"""The typed tools the builtin agent ends with: `submit_findings` and `submit_verdict`.

Their input schemas come from these pydantic models, and the model's tool input is
validated against the same models, so what the agent returns is always well formed.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay._util.json_schema import tool_input_schema
from assay.core.severities import Severity
from assay.models.base import ToolSpec

__all__ = [
    "MAX_FINDINGS",
    "SUBMIT_FINDINGS",
    "SUBMIT_VERDICT",
    "FindingsSubmission",
    "ReviewSubmission",
    "SubmittedFinding",
    "VerdictSubmission",
    "dump_findings",
    "submission_tool",
]

SUBMIT_FINDINGS = "submit_findings"
SUBMIT_VERDICT = "submit_verdict"
MAX_FINDINGS = 1000
"""More findings than this is not a review, from any agent: 300,000 one-line findings fit
in a command agent's answer file, and took one case to 560 MiB, a 32 MB report.json and a
judge prompt no API accepts."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FindingLocation(_Strict):
    path: str = Field(min_length=1)
    """Repository-relative path of the file, e.g. `src/handler.ts`."""
    startLine: int | None = Field(default=None, ge=1)  # noqa: N815 - Warden's wire name
    """First line of the problem, as read_file numbers it."""
    endLine: int | None = Field(default=None, ge=1)  # noqa: N815
    """Last line of the problem (omit for a single line)."""


class SubmittedFinding(_Strict):
    severity: Severity
    """How bad the issue is if it happens."""
    confidence: Literal["high", "medium", "low"]
    """How sure you are that the issue is real, after checking the code."""
    title: str = Field(min_length=1)
    """One line naming the issue."""
    description: str
    """What goes wrong, when, and why; how to fix it."""
    location: FindingLocation
    """Where the issue is."""


class FindingsSubmission(_Strict):
    """Submit the findings. Call this exactly once, at the end; [] if nothing is wrong."""

    findings: list[SubmittedFinding] = Field(max_length=MAX_FINDINGS)
    """Every distinct issue found, most severe first."""


class ReviewSubmission(FindingsSubmission):
    """Submit the review: the written review and its findings. Call exactly once, at the end."""

    review: str = Field(min_length=1)
    """The written review as you would post it on the pull request (markdown)."""


class VerdictSubmission(_Strict):
    """Submit the verdict on the candidate finding. Call this exactly once, at the end."""

    verdict: Literal["keep", "reject"]
    """`keep` when the finding is a real, reachable problem; `reject` otherwise."""
    reason: str = Field(min_length=1)
    """Why, citing the code you checked."""


@functools.cache
def submission_tool(name: str, model: type[BaseModel]) -> ToolSpec:
    """The submission tool's spec, built once per (name, model): it never differs per case."""
    return ToolSpec(
        name=name,
        description=(model.__doc__ or name).strip(),
        input_schema=tool_input_schema(model),
    )


def dump_findings(submission: FindingsSubmission) -> list[dict[str, Any]]:
    """Findings in the Warden shape the report and the judges read (unset lines omitted)."""
    return [finding.model_dump(exclude_none=True) for finding in submission.findings]
