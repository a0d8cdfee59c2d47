"""Before a CI run: does any selected case need a model whose key is missing?

Locally such a case is merely skipped; in CI that would turn a missing secret into a
quietly green (or puzzlingly empty) job, so `assay ci` stops with one clear error
instead. Which models a case calls is the runner's decision (assay.runner.resolve):
the subject model when the case runs the builtin runtime, and the judge model for
review and rubric cases. Task cases run a command and are graded by commands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.models.names import missing_credentials, parse_model
from assay.options import RunSettings
from assay.suites.case import Case

if TYPE_CHECKING:
    from assay.suites.config import AssayConfig

__all__ = ["MissingModelKey", "find_missing_model_key", "models_needed"]


_KEY_INPUTS = {
    "anthropic": ("anthropic-api-key", "ANTHROPIC_API_KEY"),
    "openai": ("openai-api-key", "OPENAI_API_KEY"),
    "openrouter": ("openrouter-api-key", "OPENROUTER_API_KEY"),
}
"""The Action input (and the secret it usually comes from) for each provider's key."""


@dataclass(frozen=True)
class MissingModelKey:
    reason: str
    """What missing_credentials said for the first model that cannot be called."""
    model: str
    """That model: its provider decides which key (and which input) to ask for."""
    cases: tuple[str, ...]
    """Ids of the cases that need a model the run cannot call."""

    def message(self) -> str:
        shown = ", ".join(self.cases[:3])
        if len(self.cases) > 3:
            shown += f" and {len(self.cases) - 3} more"
        provider = parse_model(self.model).provider
        name, secret = _KEY_INPUTS.get(provider, _KEY_INPUTS["anthropic"])
        return (
            f"this run needs a model key: set the {name} input from a secret "
            f"({name}: ${{{{ secrets.{secret} }}}}), or point `paths` at "
            f"suites that need no model ({self.reason}; needed by {shown})"
        )


def models_needed(case: Case, *, options: RunSettings, config: AssayConfig | None) -> set[str]:
    """Every model `case` would call in this run (empty for a task case)."""
    from assay.runner.resolve import (
        needs_judge,
        resolve_judge_model,
        resolve_runtime,
        subject_models,
    )

    runtime = resolve_runtime(case, options=options, config=config)
    needed: set[str] = set()
    for subject in subject_models(case, runtime=runtime, options=options, config=config):
        if runtime == "builtin" and subject:
            needed.add(subject)
        if needs_judge(case):
            needed.add(resolve_judge_model(case, subject=subject, options=options, config=config))
    return needed


def find_missing_model_key(
    cases: Iterable[Case],
    *,
    options: RunSettings,
    config: AssayConfig | None,
    environ: Mapping[str, str] | None = None,
) -> MissingModelKey | None:
    """None when every model the cases need can be called; else what is missing, for whom."""
    first_reason: str | None = None
    first_model = ""
    blocked: list[str] = []
    verdicts: dict[str, str | None] = {}
    for case in cases:
        for model in sorted(models_needed(case, options=options, config=config)):
            if model not in verdicts:
                verdicts[model] = missing_credentials(model, environ)
            reason = verdicts[model]
            if reason is not None:
                if first_reason is None:
                    first_reason, first_model = reason, model
                blocked.append(case.id)
                break
    return MissingModelKey(first_reason, first_model, tuple(blocked)) if first_reason else None
