"""The runtime registry: the one list of agent runtimes (`builtin`, `command`, plugins').

A runtime says how to build its agent and what the runner must know before it runs:
whether it calls the subject model (so the model's credentials are checked and the model
matrix applies) and whether it runs the case's agent command (so the program is checked
to exist before any sandbox is built). Warden's `claude` and `pi` are aliases of
`builtin`. Plugins add runtimes through the `assay.runtimes` entry point group, naming a
`RuntimeSpec` or an `AgentFactory` (`factory(options) -> Agent`). Implementations are
imported only when an attempt needs one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay._util.entrypoints import Registry, spec_or_factory

if TYPE_CHECKING:
    from assay.options import RunOptions

__all__ = [
    "BUILTIN_RUNTIMES",
    "PRESETS",
    "RUNTIMES",
    "AgentFactory",
    "RuntimeSpec",
    "canonical_runtime",
    "known_runtimes",
    "runtime_spec",
    "unknown_runtime",
]

AgentFactory = Callable[["RunOptions"], Any]
"""`factory(options) -> assay.agents.Agent`. Typed loosely on purpose: suites read this
registry, and the Agent protocol (over the attempt context, hence over suites) sits above."""


@dataclass(frozen=True)
class RuntimeSpec:
    """One agent runtime."""

    name: str
    factory: AgentFactory
    """Builds the agent for one attempt from the run's options."""
    calls_model: bool = False
    """It calls the subject model (`--model`, else the configured or default model): that
    model's credentials are checked before the run, and a case without them is skipped."""
    runs_agent_command: bool = False
    """It runs the case's agent command (`--agent-command`, `agent_command`)."""
    program: str | None = None
    """The program it runs itself (an agent CLI preset's `claude`): checked to exist before
    any sandbox is built, like an agent command's."""
    model_problem: Callable[[str], str | None] | None = None
    """Why its program is not given the subject model `model` and runs its own default model
    instead (an agent CLI preset asked for another provider's model), or None when it runs
    it: the run says it once (`runner.plan.model_notes`). None (the field): no such limit."""
    keeps_timeout: bool = False
    """Its agent stops itself at `ctx.timeout_s` and says why (the builtin agent's own timer;
    a command or preset agent kills its process then): the runner's own timer waits a few
    seconds longer, only for an agent that failed to stop. Without it the runner's timer
    stops the agent at the timeout itself."""
    relays_to_bridge: Callable[[RunOptions, str | None], bool] | None = None
    """Whether an attempt with subject model `model` runs its program, in the OS sandbox,
    with no network but the relay to its model bridge (a bridged agent CLI preset); the
    report says so (`run.isolation.agent_network_relay`). None (the field): never."""


RUNTIMES: Registry[RuntimeSpec] = Registry(
    "assay.runtimes",
    what="runtime",
    adapt=spec_or_factory(RuntimeSpec, factory_is="an agent factory"),
)


def _builtin(options: RunOptions) -> Any:
    return importlib.import_module("assay.agents.builtin").BuiltinAgent(options=options)


def _command(options: RunOptions) -> Any:
    return importlib.import_module("assay.agents.command").CommandAgent(options=options)


_BUILTIN = RuntimeSpec("builtin", _builtin, calls_model=True, keeps_timeout=True)
RUNTIMES.register("builtin", _BUILTIN)
RUNTIMES.register(
    "command",
    RuntimeSpec(
        "command", _command, calls_model=False, runs_agent_command=True, keeps_timeout=True
    ),
)
# Warden's runtime names, accepted for suites written for Warden: the same spec, so the
# canonical name of either is `builtin`.
RUNTIMES.register("claude", _BUILTIN)
RUNTIMES.register("pi", _BUILTIN)


def _preset(module: str, program: str) -> AgentFactory:
    def factory(options: RunOptions) -> Any:
        preset = importlib.import_module(f"assay.agents.presets.{module}").PRESET
        return preset.agent(program, options=options)

    return factory


def _preset_model_problem(module: str) -> Callable[[str], str | None]:
    """The preset's own answer (`Preset.cannot_run`), its module imported when first asked."""

    def problem(model: str) -> str | None:
        preset = importlib.import_module(f"assay.agents.presets.{module}").PRESET
        return preset.cannot_run(model)  # type: ignore[no-any-return]

    return problem


def _preset_relays_to_bridge(module: str, program: str) -> Callable[[RunOptions, str | None], bool]:
    """The preset's own answer (`Preset.relays_to_bridge`), its module imported when asked."""

    def relays(options: RunOptions, model: str | None) -> bool:
        preset = importlib.import_module(f"assay.agents.presets.{module}").PRESET(program)
        return preset.relays_to_bridge(options, model)  # type: ignore[no-any-return]

    return relays


# Agent CLI presets (agents/presets/): runtime name, module, the CLI's program.
PRESETS = (
    ("claude-code", "claude_code", "claude"),
    ("codex", "codex", "codex"),
    ("gemini-cli", "gemini_cli", "gemini"),
    ("opencode", "opencode", "opencode"),
    ("aider", "aider", "aider"),
)
for _name, _module, _program in PRESETS:
    RUNTIMES.register(
        _name,
        RuntimeSpec(
            _name,
            _preset(_module, _program),
            program=_program,
            model_problem=_preset_model_problem(_module),
            keeps_timeout=True,
            relays_to_bridge=_preset_relays_to_bridge(_module, _program),
        ),
    )
BUILTIN_RUNTIMES = ("builtin", "command", "claude", "pi", *(name for name, _, _ in PRESETS))
"""The runtimes assay ships (for `assay schema`, whose output must not depend on plugins)."""


def runtime_spec(name: str) -> RuntimeSpec | None:
    return RUNTIMES.get(name)


def canonical_runtime(name: str) -> str:
    """`claude`/`pi` -> `builtin`; any other name as it is."""
    spec = RUNTIMES.get(name)
    return spec.name if spec is not None else name


def known_runtimes() -> tuple[str, ...]:
    return tuple(RUNTIMES.names())


def unknown_runtime(value: object) -> str | None:
    """Why `value` names no runtime (with a did-you-mean), or None when it names one.

    The runtime registry is the one list of names; a plugin's runtime is valid in a suite
    as soon as its distribution is installed.
    """
    if isinstance(value, str) and value in RUNTIMES:
        return None
    hint = RUNTIMES.did_you_mean(value) if isinstance(value, str) else ""
    return f"unknown runtime {value!r}{hint}; known runtimes: {', '.join(known_runtimes())}"
