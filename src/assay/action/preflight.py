"""Before a CI run: does any selected case need a model whose key is missing?

Locally such a case is merely skipped; in CI that would turn a missing secret into a
quietly green (or puzzlingly empty) job, so `assay ci` stops with one clear error
instead. Which models a case calls is the runner's decision (assay.runner.resolve):
the subject model when the case's runtime calls one (`RuntimeSpec.calls_model`), and the
judge model for review and rubric cases. Task cases run a command and are graded by commands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.models.names import missing_credentials, provider_of
from assay.options import RunSettings
from assay.suites.case import Case

if TYPE_CHECKING:
    from assay.suites.config import AssayConfig

__all__ = ["MissingModelKey", "find_missing_model_key"]


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
        # The provider says which variable holds its key and which Action input carries it;
        # a plugin's provider without an input of its own is set through `env:`.
        spec = provider_of(self.model)
        secret = spec.keys[0] if spec.keys else "API_KEY"
        if spec.action_input is not None:
            where = (
                f"set the {spec.action_input} input from a secret "
                f"({spec.action_input}: ${{{{ secrets.{secret} }}}})"
            )
        else:
            where = f"set {secret} in the step's env from a secret"
        return (
            f"this run needs a model key: {where}, or point `paths` at "
            f"suites that need no model ({self.reason}; needed by {shown})"
        )


def find_missing_model_key(
    cases: Iterable[Case],
    *,
    options: RunSettings,
    config: AssayConfig | None,
    environ: Mapping[str, str] | None = None,
) -> MissingModelKey | None:
    """None when every model the cases need can be called; else what is missing, for whom."""
    from assay.runner.plan import models_needed  # lazy: start-up (not loaded with this module)

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
