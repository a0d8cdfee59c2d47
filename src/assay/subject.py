"""What one attempt of one case gives the subject under test, and what the subject answers.

`AttemptContext` is the attempt (case, sandbox, models, deadline); `AgentOutput` is the
agent's answer. The runner builds the first, an agent (assay.agents) turns it into the
second, and a grader (assay.grading) reads both: so they live here, beside neither, and
grading never needs the agents package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from assay.core.usage import Usage
from assay.upstream.go.json import go_text

if TYPE_CHECKING:
    from assay.suites.case import Case
    from assay.workspace import Sandbox

__all__ = ["AGENT_STREAM_BYTES", "AgentOutput", "AttemptContext", "read_agent_stream"]

AGENT_STREAM_BYTES = 1 << 20
"""PVYai keeps the first MiB of each of the agent's streams (its `capWriter`): a task's
trace events, a blocked task's reason and its report's `stdout` and `stderr` come from that."""


def read_agent_stream(path: Path) -> tuple[str, bool]:
    """The first AGENT_STREAM_BYTES of an agent's saved stream (`AgentOutput.stdout_path`,
    `stderr_path`), as Go's JSON holds them (each invalid UTF-8 byte a U+FFFD), and
    whether the stream went on."""
    with path.open("rb") as stream:
        data = stream.read(AGENT_STREAM_BYTES + 1)
    return go_text(data[:AGENT_STREAM_BYTES]), len(data) > AGENT_STREAM_BYTES


@dataclass(frozen=True)
class AttemptContext:
    """Everything one attempt of one case may use."""

    case: Case
    sandbox: Sandbox
    model: str | None
    """The subject model for this attempt (one entry of the model matrix), if any."""
    judge_model: str | None
    timeout_s: float
    attempt: int
    """0-based repeat index."""
    artifacts_dir: Path
    """A directory of this attempt's own (inside the report dir) for transcripts and logs."""
    agent_command: tuple[str, ...] | None = None
    skill_override: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment for the agent process (command runtime)."""


@dataclass
class AgentOutput:
    """What the agent under test produced; which fields matter depends on the case kind."""

    findings: list[dict[str, Any]] = field(default_factory=list)
    """review/rubric: findings in the Warden shape (validated by assay.core.findings.Finding)."""
    verdict: Literal["keep", "reject"] | None = None
    """verify: the agent's decision on the candidate finding."""
    verdict_reason: str = ""
    review_text: str | None = None
    """rubric: the free-text review the judge scores."""
    trace_events: list[str] = field(default_factory=list)
    """Keys like `tool:read_file` parsed from JSON lines (task cases check them)."""
    usage: Usage = field(default_factory=Usage)
    transcript: Path | None = None
    activity: dict[str, Any] | None = None
    """A CLI agent's tool calls, turns and final message, for report.json (`AgentActivity`
    in report/model.py; `agents/cli_transcript.py` makes it)."""
    exit_code: int | None = None
    stdout_path: Path | None = None
    stderr_path: Path | None = None
