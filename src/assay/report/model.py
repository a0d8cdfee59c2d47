"""The `assay.report.v1` contract: report.json, one line of results.jsonl per case.

These models are the boundary other tools read, so they forbid unknown keys and every
field carries a docstring that ends up in `assay schema report`.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "REPORT_CONTRACT",
    "Attempt",
    "CaseResult",
    "CaseStatus",
    "Check",
    "Finding",
    "IsolationInfo",
    "Location",
    "Report",
    "RunInfo",
    "Source",
    "Summary",
    "Tokens",
    "Usage",
]

REPORT_CONTRACT: Final = "assay.report.v1"

CaseStatus = Literal["pass", "fail", "error", "skipped"]

# The numbers a report holds. The gate compares them, so a NaN (which every comparison
# calls False) or a score of 7.5 in a report.json or results.jsonl line written by hand
# or by an agent must be refused when it is read, not averaged into a passing gate.
UnitScore = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
"""A score: a finite number in [0, 1]."""
Amount = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
"""Seconds or dollars: finite and never negative."""
Count = Annotated[int, Field(ge=0)]


class _Model(BaseModel):
    # Built on first use: a run never validates some of them (Finding, Location), and
    # building the rest as they are needed spares start-up about 8 ms.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Location(_Model):
    path: str
    """Repo-relative path of the file the finding is about."""
    startLine: int | None = None  # noqa: N815 - Warden's wire name
    endLine: int | None = None  # noqa: N815


class Finding(_Model):
    """One issue reported by the agent under test (Warden's finding shape)."""

    model_config = ConfigDict(extra="allow")
    severity: Literal["critical", "high", "medium", "low", "info"]
    confidence: str | float | None = None
    """`high|medium|low` or a number in [0, 1]; as the agent gave it."""
    title: str
    description: str = ""
    location: Location | None = None


class Check(_Model):
    """One graded assertion of a case: a command, a judge assertion, a file rule, a trace event."""

    model_config = ConfigDict(extra="allow")
    id: str
    kind: str
    """command | changed_files | context | trace | should_find | should_not_find |
    severity | verdict | rubric"""
    status: Literal["pass", "fail", "error", "skipped", "blocked"]
    """`blocked`: a task check that never ran because the agent failed (PVYai's word)."""
    message: str = ""


class Usage(_Model):
    input_tokens: Count = 0
    output_tokens: Count = 0
    cache_read_tokens: Count = 0
    cache_write_tokens: Count = 0
    cost_usd: Amount | None = None
    """None when the model has no known price: assay never guesses a cost."""


class Attempt(_Model):
    """One run of the case (there are `repeat` of them)."""

    status: CaseStatus
    score: UnitScore | None = None
    reason: str = ""
    duration_s: Amount = 0.0
    usage: Usage = Field(default_factory=Usage)
    checks: list[Check] = Field(default_factory=list)
    transcript: str | None = None
    """Path of the transcript file of this attempt, relative to the report directory."""


class Source(_Model):
    path: str
    """The suite file the case is written in, relative to the working directory when possible."""
    line: int


class CaseResult(_Model):
    """The outcome of one case for one model, over all its repeats."""

    id: str
    suite: str
    kind: Literal["review", "verify", "rubric", "task"]
    source: Source
    model: str | None = None
    runtime: str | None = None
    status: CaseStatus
    score: UnitScore | None = None
    """In [0, 1], the mean over scored attempts; None when nothing was scored."""
    reason: str = ""
    checks: list[Check] = Field(default_factory=list)
    findings: list[dict[str, Any]] = Field(default_factory=list)
    judge: dict[str, Any] = Field(default_factory=dict)
    """The judge's verdict (findings judge or rubric judge), as validated."""
    usage: Usage = Field(default_factory=Usage)
    duration_s: Amount = 0.0
    attempts: list[Attempt] = Field(default_factory=list)
    flaky: bool = False
    """True when the repeats disagree on pass/fail."""
    workspace: str | None = None
    """Where the sandbox was kept (only with --keep-workspaces)."""


class IsolationInfo(_Model):
    """How agents and verification commands were sandboxed in this run."""

    mode: Literal["bwrap", "none"]
    """`bwrap`: an OS sandbox (own PID namespace, host read-only); `none`: no sandbox."""
    requested: Literal["auto", "bwrap", "none"] = "auto"
    """The `--isolation` asked for (`auto` falls back to `none` where bwrap does not work)."""
    agent_network: bool = True
    command_network: bool = True
    warning: str | None = None
    """Set when nothing was sandboxed, saying why."""


class RunInfo(_Model):
    id: str
    started_at: str
    finished_at: str | None = None
    assay_version: str
    threshold: UnitScore
    models: list[str] = Field(default_factory=list)
    judge_model: str | None = None
    repeat: Annotated[int, Field(ge=1)] = 1
    shard: str | None = None
    """`I/N` when the run was a shard."""
    git_sha: str | None = None
    max_errors: Count = 0
    interrupted: bool = False
    require_all: bool = False
    """`--require-all`: a skipped case fails the gate."""
    isolation: IsolationInfo | None = None
    """The run's OS sandbox (absent in reports of assay versions before it)."""


class Tokens(_Model):
    input: Count = 0
    output: Count = 0


class Summary(_Model):
    total: Count
    passed: Count
    failed: Count
    errors: Count
    skipped: Count
    score: UnitScore | None
    """Mean case score over scored (pass/fail) cases; None when nothing was scored."""
    score_ci: Annotated[list[UnitScore], Field(min_length=2, max_length=2)] | None = None
    """95% interval [lo, hi] of `score`."""
    gate: Literal["pass", "fail"]
    gate_reason: str = ""
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: Amount | None = None
    duration_s: Amount = 0.0


class Report(_Model):
    """The whole `report.json`."""

    contract: Literal["assay.report.v1"] = REPORT_CONTRACT
    run: RunInfo
    summary: Summary
    cases: list[CaseResult]
