"""The seam between an agent's output and a case result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from assay.core.checks import Check
from assay.core.statuses import ErrorSource
from assay.core.usage import Usage

if TYPE_CHECKING:
    from assay.subject import AgentOutput, AttemptContext

__all__ = ["Grade", "Grader"]


@dataclass
class Grade:
    """The graded outcome of one attempt."""

    status: Literal["pass", "fail", "error"]
    score: float
    """In [0, 1]: 1/0 for review, verify and task cases; (score-1)/4 for rubric cases."""
    reason: str = ""
    checks: list[Check] = field(default_factory=list)
    judge: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    """The judge's own token use (the agent's is in AgentOutput.usage)."""
    error_source: ErrorSource | None = None
    """For an `error`: whose failure it is, when not the grader's own (a verify case's
    agent that gave no verdict: `agent`). None: the grader's."""


class Grader(Protocol):
    async def grade(self, ctx: AttemptContext, output: AgentOutput) -> Grade:
        """Grade one attempt. Raise JudgeError when the judge could not give a valid verdict."""
        ...
