"""Subjects: the agents under test (command runtime, builtin reviewer/verifier).

Runtimes are registered by name and their modules imported only when a case needs them,
so listing or validating suites never loads a model SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from assay.agents.base import Agent, AgentOutput, AttemptContext
from assay.errors import ConfigError, SourcePosition

if TYPE_CHECKING:
    from assay.options import RunOptions
    from assay.suites.case import Case

__all__ = [
    "Agent",
    "AgentFactory",
    "AgentOutput",
    "AttemptContext",
    "RUNTIME_ALIASES",
    "agent_for",
    "canonical_runtime",
    "known_runtimes",
    "register_agent",
]

AgentFactory = Callable[["RunOptions"], Agent]


def _builtin(options: RunOptions) -> Agent:
    module = importlib.import_module("assay.agents.builtin")
    agent: Agent = module.BuiltinAgent(options=options)
    return agent


def _command(options: RunOptions) -> Agent:
    module = importlib.import_module("assay.agents.command")
    agent: Agent = module.CommandAgent(options=options)
    return agent


_FACTORIES: dict[str, AgentFactory] = {"builtin": _builtin, "command": _command}
RUNTIME_ALIASES = {"claude": "builtin", "pi": "builtin"}
"""Warden's runtime names, accepted for suites written for Warden."""


def canonical_runtime(name: str) -> str:
    return RUNTIME_ALIASES.get(name, name)


def register_agent(runtime: str, factory: AgentFactory) -> None:
    """Make `runtime` name an agent built by `factory(options)` (library users, tests)."""
    _FACTORIES[runtime] = factory


def known_runtimes() -> tuple[str, ...]:
    return (*_FACTORIES, *RUNTIME_ALIASES)


def agent_for(case: Case, *, runtime: str, options: RunOptions) -> Agent:
    """The agent under test for `case` in `runtime` (already resolved by the runner)."""
    factory = _FACTORIES.get(canonical_runtime(runtime))
    if factory is None:
        raise ConfigError(
            f"unknown runtime {runtime!r} (known: {', '.join(known_runtimes())})",
            SourcePosition(case.source_path, case.source_line),
        )
    return factory(options)
