"""What the planner decides per (case, subject model): the `PlannedRun`, and which models
it calls (`model_calls`).

Below the plan (`plan.py`) and the default-model moves (`defaults.py`), which both use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.agents import runtime_spec
from assay.options import DEFAULT_TIMEOUT_S
from assay.runner.resolve import needs_judge, resolve_judge_model

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.suites.case import Case
    from assay.suites.config import AssayConfig

__all__ = ["ModelCalls", "PlannedRun", "model_calls"]


@dataclass(frozen=True)
class PlannedRun:
    """One case against one subject model, with everything decided before it runs."""

    case: Case
    model: str | None
    runtime: str
    agent_command: tuple[str, ...] | None
    judge_model: str | None
    """None when the case is graded in code (verify, task)."""
    skip_reason: str | None = None
    """Set when the run cannot happen at all (missing credentials): no sandbox is built."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """Each attempt's limit (`runner.resolve.case_timeout`)."""
    moved: tuple[tuple[str, str], ...] = ()
    """(default model, the same model elsewhere): defaults served through another provider
    because theirs has no key here (`runner.defaults.serve_defaults`)."""

    @property
    def key(self) -> tuple[str, str | None]:
        """Identity in results.jsonl, used by --resume."""
        return (self.case.id, self.model)


@dataclass(frozen=True)
class ModelCalls:
    """The models one (case, subject model) pair calls in this run."""

    subject: str | None
    """The agent's own model: only the builtin runtime calls it (a command agent brings its own)."""
    judge: str | None
    """None when the case is graded in code (verify, task)."""


def model_calls(
    case: Case,
    *,
    subject: str | None,
    runtime: str,
    options: RunSettings,
    config: AssayConfig | None,
) -> ModelCalls:
    """Which models this case calls for this subject model: the one answer the planner's
    credential check and the Action's key preflight share."""
    judge = (
        resolve_judge_model(case, subject=subject, options=options, config=config)
        if needs_judge(case)
        else None
    )
    spec = runtime_spec(runtime)
    calls_subject = spec is not None and spec.calls_model
    return ModelCalls(subject if calls_subject else None, judge)
