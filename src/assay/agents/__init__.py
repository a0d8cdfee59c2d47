"""Subjects: the agents under test (command runtime, builtin reviewer/verifier).

Runtimes are registered by name (`runtimes.py`) and their modules imported only when a
case needs them, so listing or validating suites never loads a model SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.agents.base import Agent, AgentOutput, AttemptContext
from assay.errors import ConfigError, SourcePosition
from assay.registry.runtimes import (
    RUNTIMES,
    AgentFactory,
    RuntimeSpec,
    canonical_runtime,
    known_runtimes,
    runtime_spec,
)

if TYPE_CHECKING:
    from assay.options import RunOptions
    from assay.suites.case import Case

__all__ = [
    "Agent",
    "AgentFactory",
    "AgentOutput",
    "AttemptContext",
    "RUNTIMES",
    "RuntimeSpec",
    "agent_for",
    "canonical_runtime",
    "known_runtimes",
    "register_agent",
    "runtime_spec",
]


def register_agent(
    runtime: str,
    factory: AgentFactory,
    *,
    calls_model: bool = False,
    runs_agent_command: bool = False,
) -> None:
    """Make `runtime` name an agent built by `factory(options)` (library users, tests).

    `calls_model`: it calls the subject model, whose credentials the planner then checks.
    """
    spec = RuntimeSpec(
        runtime, factory, calls_model=calls_model, runs_agent_command=runs_agent_command
    )
    RUNTIMES.register(runtime, spec, replace=True)


def agent_for(case: Case, *, runtime: str, options: RunOptions) -> Agent:
    """The agent under test for `case` in `runtime` (already resolved by the runner)."""
    spec = RUNTIMES.get(runtime)
    if spec is None:
        raise ConfigError(
            f"unknown runtime {runtime!r}{RUNTIMES.did_you_mean(runtime)} "
            f"(known: {', '.join(known_runtimes())})",
            SourcePosition(case.source_path, case.source_line),
        )
    agent: Agent = spec.factory(options)
    return agent
