"""The seam between the runner and the agent under test.

An `Agent` runs one attempt of one case in its sandbox and returns an `AgentOutput`;
a `Grader` (see assay.grading.base) turns that output into a `Grade`. The runner owns
scheduling, timeouts at the case level, repeats and reporting; agents and graders
own nothing but their attempt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from assay.report.model import Usage

if TYPE_CHECKING:
    from assay.sandbox import Sandbox
    from assay.suites.case import Case

__all__ = ["Agent", "AgentOutput", "AttemptContext"]


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
    """review/rubric: findings in the Warden shape (validated by assay.report.model.Finding)."""
    verdict: Literal["keep", "reject"] | None = None
    """verify: the agent's decision on the candidate finding."""
    verdict_reason: str = ""
    review_text: str | None = None
    """rubric: the free-text review the judge scores."""
    trace_events: list[str] = field(default_factory=list)
    """Keys like `tool:read_file` parsed from JSON lines (task cases check them)."""
    usage: Usage = field(default_factory=Usage)
    transcript: Path | None = None
    exit_code: int | None = None
    stdout_path: Path | None = None
    stderr_path: Path | None = None


class Agent(Protocol):
    """The agent under test for one runtime."""

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        """Run one attempt. Raise AgentError when the agent itself broke (the case is `error`)."""
        ...
