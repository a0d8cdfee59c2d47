"""The `assay.report.v1` contract: report.json, one line of results.jsonl per case.

These models are the boundary other tools read, so they forbid unknown keys and every
field carries a docstring that ends up in `assay schema report`. The value types the
rest of assay shares (`Usage`, `Check`, `Finding`, `Location`, the statuses and kinds) live
in `assay.core`; the contract is a rendering of them and re-exports them for readers of
reports. Nothing outside `report/` and `_cli/` needs this module for those types.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from assay.core._contract import Amount, ContractModel, Count, UnitScore
from assay.core.checks import Check
from assay.core.findings import Finding, Location
from assay.core.kinds import CaseKind
from assay.core.statuses import CaseStatus, ErrorSource, GateStatus
from assay.core.usage import Usage

__all__ = [
    "REPORT_CONTRACT",
    "AgentActivity",
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

# The core's value types are the contract's own: a report is a rendering of them.
_Model = ContractModel


class _OmitsUnset(_Model):
    """A model whose fields named in `_omitted_when_unset` are written only when set: a
    report that does not use them is the same text as before they were added (the golden
    corpus compares it whole, and readers of older reports see nothing new)."""

    _omitted_when_unset: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _without_unset_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self._omitted_when_unset:
                if name in data and data[name] is None:
                    del data[name]
        return data


class AgentActivity(_Model):
    """What a command agent or preset CLI did in the attempt, read from its stream; the
    whole record (messages, tool calls and results) is the attempt's `transcript`."""

    runtime: str
    """The runtime that ran it: `command`, or a preset (`claude-code`, ...)."""
    turns: Count | None = None
    """The model turns it took, when the CLI counts them."""
    tool_calls: Count = 0
    """The tool calls it made (for a command agent: its trace events)."""
    final_message: str | None = None
    """The start of its final message (its answer), at most 500 characters."""


class Attempt(_OmitsUnset):
    """One run of the case (there are `repeat` of them)."""

    _omitted_when_unset: ClassVar[frozenset[str]] = frozenset({"error_source", "activity"})

    status: CaseStatus
    score: UnitScore | None = None
    reason: str = ""
    error_source: ErrorSource | None = None
    """For an `error`: whose call failed (agent, judge, grader, sandbox, harness)."""
    duration_s: Amount = 0.0
    usage: Usage = Field(default_factory=Usage)
    checks: list[Check] = Field(default_factory=list)
    transcript: str | None = None
    """Path of the transcript file of this attempt, relative to the report directory."""
    activity: AgentActivity | None = None
    """A command agent's or preset CLI's tool calls, turns and final message (absent for
    the builtin agent, whose transcript is the whole conversation)."""


class Source(_Model):
    path: str
    """The suite file the case is written in, relative to the working directory when possible."""
    line: int


class CaseResult(_OmitsUnset):
    """The outcome of one case for one model, over all its repeats."""

    _omitted_when_unset: ClassVar[frozenset[str]] = frozenset(
        {"error_source", "attempts_passed", "attempts_total"}
    )

    id: str
    suite: str
    kind: CaseKind
    source: Source
    model: str | None = None
    runtime: str | None = None
    status: CaseStatus
    score: UnitScore | None = None
    """In [0, 1], the mean over scored attempts; None when nothing was scored. Under
    `--min-pass` 1 or 0: whether at least that many attempts passed."""
    reason: str = ""
    error_source: ErrorSource | None = None
    """For an `error`: whose call failed, of the attempt `reason` is from: the agent under
    test, the judge model, the grader (verification commands, user graders), the sandbox,
    or the harness (assay itself)."""
    attempts_passed: Count | None = None
    """How many of the scored attempts passed; set when the case had more than one attempt."""
    attempts_total: Count | None = None
    """How many attempts were scored (pass or fail; errored and skipped ones are not)."""
    checks: list[Check] = Field(default_factory=list)
    findings: list[dict[str, Any]] = Field(default_factory=list)
    judge: dict[str, Any] = Field(default_factory=dict)
    """The judge's verdict (findings judge or rubric judge), as validated."""
    usage: Usage = Field(default_factory=Usage)
    duration_s: Amount = 0.0
    attempts: list[Attempt] = Field(default_factory=list)
    flaky: bool = False
    """True when the repeats disagree on pass/fail."""
    score_ci: Annotated[list[UnitScore], Field(min_length=2, max_length=2)] | None = None
    """95% interval [lo, hi] of the case's pass rate over its attempts; set for flaky cases."""
    quarantined: bool = False
    """Run and reported, but kept out of the gate (`[tool.assay] quarantine`)."""
    workspace: str | None = None
    """Where the sandbox was kept (only with --keep-workspaces)."""


class IsolationInfo(_OmitsUnset):
    """How agents and verification commands were sandboxed in this run."""

    _omitted_when_unset: ClassVar[frozenset[str]] = frozenset({"agent_network_relay"})

    mode: Literal["bwrap", "none"]
    """`bwrap`: an OS sandbox (own PID namespace, host read-only); `none`: no sandbox."""
    requested: Literal["auto", "bwrap", "none"] = "auto"
    """The `--isolation` asked for (`auto` falls back to `none` where bwrap does not work)."""
    agent_network: bool = True
    """Whether agents share the host's network (`--agent-network`); but see
    `agent_network_relay`."""
    agent_network_relay: Literal["bridge"] | None = None
    """`bridge`: the run's agent CLIs whose model calls went through assay's model bridge
    ran in the sandbox with no network but a relay to their own bridge, whatever
    `agent_network` says (it holds for the other agents). Absent: no agent ran so."""
    command_network: bool = True
    warning: str | None = None
    """Set when nothing was sandboxed, saying why."""


class RunInfo(_OmitsUnset):
    _omitted_when_unset: ClassVar[frozenset[str]] = frozenset({"min_pass", "regraded_from"})

    id: str
    started_at: str
    finished_at: str | None = None
    assay_version: str
    threshold: UnitScore
    models: list[str] = Field(default_factory=list)
    judge_model: str | None = None
    repeat: Annotated[int, Field(ge=1)] = 1
    repeat_auto: bool = False
    """`--repeat auto`: `repeat` is then the most attempts a case could get."""
    min_pass: Annotated[int, Field(ge=1)] | None = None
    """`--min-pass N`: a case passes only when at least N of its attempts passed."""
    shard: str | None = None
    """`I/N` when the run was a shard."""
    git_sha: str | None = None
    max_errors: Count = 0
    interrupted: bool = False
    require_all: bool = False
    """`--require-all`: a skipped case fails the gate."""
    isolation: IsolationInfo | None = None
    """The run's OS sandbox (absent in reports of assay versions before it)."""
    gate_mode: Literal["threshold", "regression"] = "threshold"
    """`--gate`: against the threshold, or against a baseline report (and `floor`)."""
    inconclusive: Literal["score", "fail", "pass", "neutral"] = "score"
    """`--inconclusive`: what an interval straddling the threshold makes the gate."""
    errors_count_as: Literal["skip", "fail"] = "skip"
    """`--errors-count-as`: whether the gate's score counts errors as misses."""
    floor: UnitScore | None = None
    """`--floor`: the regression gate's absolute lowest score."""
    quarantine: list[str] = Field(default_factory=list)
    """Case ids kept out of the gate (`[tool.assay] quarantine`)."""
    selection: str | None = None
    """Why these cases ran (`--affected-by`: the ref, the counts and what changed); None: all."""
    split: str | None = None
    """A shard's fingerprint of the selection it was cut from (the case ids before
    sharding): `assay merge` refuses shards of different selections or suites."""
    split_cases: list[str] | None = None
    """A shard's plan: the ids of every case of the selection it was cut from, sorted (the
    split's fingerprint is their hash). `assay merge` refuses a shard whose cases are not
    exactly its part of them (`core.shards.shard_part`). None: not a shard, or an older
    assay."""
    notes: list[str] = Field(default_factory=list)
    """What the run says once about how its cases ran: an agent CLI preset that could not
    run the subject model and ran with its own default model instead."""
    warnings: list[str] = Field(default_factory=list)
    """What every output shows as a warning: a task whose agent hid changes from git
    status, naming the files (`grading.hidden_changes`)."""
    regraded_from: str | None = None
    """`assay regrade`: the id of the run whose saved answers this run graded again (no
    agent ran in it). Absent for a run that ran its agents."""


class Tokens(_Model):
    input: Count = 0
    output: Count = 0


class Summary(_OmitsUnset):
    _omitted_when_unset: ClassVar[frozenset[str]] = frozenset(
        {"k", "pass_at_1", "pass_at_k", "pass_hat_k"}
    )

    total: Count
    passed: Count
    failed: Count
    errors: Count
    skipped: Count
    score: UnitScore | None
    """Mean case score over scored (pass/fail) cases; None when nothing was scored."""
    score_ci: Annotated[list[UnitScore], Field(min_length=2, max_length=2)] | None = None
    """95% interval [lo, hi] of `score`."""
    gate: GateStatus
    gate_reason: str = ""
    verdict: Literal["pass", "fail", "inconclusive"] | None = None
    """What the numbers say: `inconclusive` when the 95% interval straddles the threshold
    (the floor, in regression mode); `gate` is what `--inconclusive` made of it."""
    gate_mode: Literal["threshold", "regression"] | None = None
    score_if_errors_failed: UnitScore | None = None
    """The score with every errored attempt and case counted as a miss; set when any errored."""
    quarantined: Count = 0
    """Cases kept out of the gate."""
    regression: str | None = None
    """Regression mode: the paired comparison with the baseline, in one line."""
    k: Annotated[int, Field(ge=2)] | None = None
    """The k of `pass_at_k` and `pass_hat_k`: the run's `--repeat`; set when it is over 1."""
    pass_at_1: UnitScore | None = None
    """The mean per-attempt pass rate over the scored cases (with repeats)."""
    pass_at_k: UnitScore | None = None
    """The mean over cases of the chance that k attempts hold at least one pass (unbiased
    estimator over the case's attempts; cases with fewer than k scored attempts left out)."""
    pass_hat_k: UnitScore | None = None
    """pass^k: the mean over cases of the chance that k attempts all pass (tau-bench's)."""
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: Amount | None = None
    duration_s: Amount = 0.0


class Report(_Model):
    """The whole `report.json`."""

    contract: Literal["assay.report.v1"] = REPORT_CONTRACT
    run: RunInfo
    summary: Summary
    cases: list[CaseResult]
