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
from assay.options import RunOptions
from assay.suites.case import Case

if TYPE_CHECKING:
    from assay.suites.config import AssayConfig

__all__ = ["MissingModelKey", "find_missing_model_key", "models_needed"]


@dataclass(frozen=True)
class MissingModelKey:
    reason: str
    """What missing_credentials said for the first model that cannot be called."""
    model: str
    """That model: its provider decides which key to ask for."""
    cases: tuple[str, ...]
    """Ids of the cases that need a model the run cannot call."""

    def message(self) -> str:
        shown = ", ".join(self.cases[:3])
        if len(self.cases) > 3:
            shown += f" and {len(self.cases) - 3} more"
        if parse_model(self.model).provider == "anthropic":
            where = (
                "set the anthropic-api-key input from a secret "
                "(anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }})"
            )
        else:  # the anthropic-api-key input cannot help: name the provider's own variable
            variable = self.reason.rsplit("set ", 1)[-1]
            where = f"set {variable} in the step's env from a secret"
        return (
            f"this run needs a model key: {where}, or point `paths` at suites that need "
            f"no model ({self.reason}; needed by {shown})"
        )


def models_needed(case: Case, *, options: RunOptions, config: AssayConfig | None) -> set[str]:
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
    options: RunOptions,
    config: AssayConfig | None,
    environ: Mapping[str, str] | None = None,
) -> MissingModelKey | None:
    """None when every model the cases need can be called; else what is missing, for whom."""
    first: tuple[str, str] | None = None
    blocked: list[str] = []
    verdicts: dict[str, str | None] = {}
    for case in cases:
        for model in sorted(models_needed(case, options=options, config=config)):
            if model not in verdicts:
                verdicts[model] = missing_credentials(model, environ)
            reason = verdicts[model]
            if reason is not None:
                first = first or (reason, model)
                blocked.append(case.id)
                break
    return MissingModelKey(first[0], first[1], tuple(blocked)) if first else None
