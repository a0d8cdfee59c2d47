"""Which runtime, agent command, subject models and judge model each case runs with.

The precedence rules live here and nowhere else (the command line wins, then the case,
then the `[tool.assay]` config, then built-in defaults):

- runtime: task cases always `command`. Others: `--runtime` > `command` when
  `--agent-command` (or ASSAY_AGENT_COMMAND) was given > the case's runtime > the
  config's runtime > `builtin`. Warden's `claude` and `pi` mean `builtin`: a suite's
  `runtime: pi` is its default, and an agent named on the command line beats it.
- agent command: `--agent-command` > the case's > the config's.
- subject models: the `--model` matrix > the case's model > (builtin only) the config's
  model > DEFAULT_MODEL. A command-runtime case without any of them gets no model.
- judge model: `--judge-model` > the config's > the subject model > the case's model >
  DEFAULT_MODEL.
- timeout: `--timeout` > ASSAY_TIMEOUT > the config's (all decided in `settings.py`) > the
  case's own (Warden's harness `timeoutMs`) > DEFAULT_TIMEOUT_S.

Run-wide options (threshold, concurrency, report dir, ...) are decided in `settings.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.agents import canonical_runtime, runtime_spec
from assay.models.names import DEFAULT_MODEL
from assay.runner.kinds import kind_of
from assay.runner.settings import DEFAULT

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.suites.case import Case
    from assay.suites.config import AssayConfig

__all__ = [
    "case_timeout",
    "default_judge",
    "default_subject",
    "needs_judge",
    "resolve_agent_command",
    "resolve_judge_model",
    "resolve_runtime",
    "subject_models",
]


def resolve_runtime(case: Case, *, options: RunSettings, config: AssayConfig | None) -> str:
    forced = kind_of(case).runtime
    if forced is not None:  # a task runs its agent command, whatever runtime is asked,
        asked = options.runtime or (config.runtime if config else None)
        spec = runtime_spec(asked) if asked else None
        # ... unless the runtime asked for is an agent CLI preset: that CLI is the agent.
        return spec.name if spec is not None and spec.program is not None else forced
    if options.runtime:
        return canonical_runtime(options.runtime)
    # An agent named on the command line is the agent under test, whatever runtime the
    # suite defaults to. A config-level agent command does not switch review cases: it
    # usually exists for the task suites alone.
    if options.agent_command:
        return "command"
    chosen = case.runtime or (config.runtime if config else None)
    return canonical_runtime(chosen) if chosen else "builtin"


def resolve_agent_command(
    case: Case, *, options: RunSettings, config: AssayConfig | None
) -> tuple[str, ...] | None:
    if options.agent_command:
        return tuple(options.agent_command)
    if case.agent_command:
        return tuple(case.agent_command)
    if config is not None and config.agent_command:
        return tuple(config.agent_command)
    return None


def subject_models(
    case: Case, *, runtime: str, options: RunSettings, config: AssayConfig | None
) -> tuple[str | None, ...]:
    """The models this case runs against: one CaseResult per entry."""
    if options.models:
        return tuple(options.models)
    if case.model:
        return (case.model,)
    spec = runtime_spec(runtime)
    if spec is None or not spec.calls_model:
        return (None,)
    if config is not None and config.model:
        return (config.model,)
    return (DEFAULT_MODEL,)


def default_subject(case: Case, *, options: RunSettings, config: AssayConfig | None) -> bool:
    """Whether `subject_models` answers a default nobody chose (the suite format's or
    assay's), which the planner may serve through another provider (`models.fallback`)."""
    if options.models:
        return False
    if case.model:
        return case.model_is_default
    return not (config is not None and config.model)


def default_judge(
    case: Case, *, subject: str | None, options: RunSettings, config: AssayConfig | None
) -> bool:
    """Whether `resolve_judge_model` answers a default nobody chose."""
    if options.judge_model or (config is not None and config.judge_model):
        return False
    if subject is not None:
        return default_subject(case, options=options, config=config)
    return case.model_is_default if case.model else True


def needs_judge(case: Case) -> bool:
    """Review and rubric cases are graded by a model; verify and task cases in code."""
    return kind_of(case).needs_judge


def resolve_judge_model(
    case: Case, *, subject: str | None, options: RunSettings, config: AssayConfig | None
) -> str:
    return (
        options.judge_model
        or (config.judge_model if config else None)
        or subject
        or case.model
        or DEFAULT_MODEL
    )


def case_timeout(case: Case, *, settings: RunSettings) -> float:
    """The per-attempt limit of `case`: the run's, unless only its default is known."""
    if case.timeout_s is not None and settings.sources.get("timeout_s", DEFAULT) == DEFAULT:
        return case.timeout_s
    return settings.timeout_s
