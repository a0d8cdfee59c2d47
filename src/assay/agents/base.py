"""The seam between the runner and the agent under test.

An `Agent` runs one attempt of one case in its sandbox and returns an `AgentOutput`
(both types live in assay.subject, so graders need not import agents);
a `Grader` (see assay.grading.base) turns that output into a `Grade`. The runner owns
scheduling, timeouts at the case level, repeats and reporting; agents and graders
own nothing but their attempt.
"""

from __future__ import annotations

from typing import Protocol

from assay.subject import AgentOutput, AttemptContext

__all__ = ["Agent", "AgentOutput", "AttemptContext"]


class Agent(Protocol):
    """The agent under test for one runtime."""

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        """Run one attempt. Raise AgentError when the agent itself broke (the case is `error`)."""
        ...
