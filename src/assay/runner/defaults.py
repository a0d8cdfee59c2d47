"""Default models follow the keys the user has.

A case whose model is a default nobody chose (Warden's `openrouter/anthropic/...`, assay's
`anthropic/...`) and whose provider has no key here runs the same model through another
provider that has one (`models.fallback`), and the run says so once (`run.notes`). A model
the user named (`--model`, the suite, `_suite.yaml`, WARDEN_MODEL, `[tool.assay]`) is never
moved: without its key the case is skipped, and `missing_key_warnings` says up front which
variable would run it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from assay.agents import runtime_spec
from assay.models.fallback import equivalents, same_model_elsewhere
from assay.models.names import missing_credentials, provider_of
from assay.runner.planned import ModelCalls, PlannedRun, model_calls
from assay.runner.resolve import default_judge, default_subject

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.suites.case import Case
    from assay.suites.config import AssayConfig

__all__ = ["missing_key_warnings", "moved_notes", "serve_defaults"]


def serve_defaults(
    case: Case,
    subject: str | None,
    calls: ModelCalls,
    *,
    runtime: str,
    options: RunSettings,
    config: AssayConfig | None,
) -> tuple[str | None, ModelCalls, tuple[tuple[str, str], ...]]:
    """The subject model and calls with each keyless default moved to a provider that has
    a key, and the moves made."""
    moved: list[tuple[str, str]] = []
    called = subject is not None and subject in (calls.subject, calls.judge)
    if called and default_subject(case, options=options, config=config):
        assert subject is not None
        other = _elsewhere(subject)
        if other is not None:
            moved.append((subject, other))
            subject = other
            calls = model_calls(
                case, subject=subject, runtime=runtime, options=options, config=config
            )
    judge = calls.judge
    if judge is not None and judge != subject:
        if default_judge(case, subject=subject, options=options, config=config):
            other = _elsewhere(judge)
            if other is not None:
                moved.append((judge, other))
                calls = ModelCalls(calls.subject, other)
    return subject, calls, tuple(moved)


def _elsewhere(model: str) -> str | None:
    if missing_credentials(model) is None:
        return None
    return same_model_elsewhere(model)


def moved_notes(runs: Sequence[PlannedRun]) -> list[str]:
    """One note per default model the run served elsewhere, with how many cases."""
    counts: Counter[tuple[str, str]] = Counter()
    for run in runs:
        for move in dict.fromkeys(run.moved):
            counts[move] += 1
    notes = []
    for (default, other), count in counts.items():
        needed = provider_of(default).keys[0]
        used = provider_of(other).keys[0]
        notes.append(
            f"{_cases(count)} ran the default model {default} as {other}: {needed} is not "
            f"set and {used} is; name a model (--model, or model: in the suite) to choose"
        )
    return notes


def missing_key_warnings(
    runs: Sequence[PlannedRun], *, options: RunSettings, config: AssayConfig | None
) -> list[str]:
    """What would let the skipped runs run, said before anything runs: `3 cases need
    OPENROUTER_API_KEY (or ANTHROPIC_API_KEY for the same model)`."""

    counts: Counter[str] = Counter()
    for run in runs:
        if run.skip_reason is None:
            continue
        spec = runtime_spec(run.runtime)
        needs: dict[str | None, None] = {}
        if run.model is not None and spec is not None and spec.calls_model:
            default = default_subject(run.case, options=options, config=config)
            needs.setdefault(_need(run.model, default=default), None)
        if run.judge_model is not None:
            default = default_judge(run.case, subject=run.model, options=options, config=config)
            needs.setdefault(_need(run.judge_model, default=default), None)
        counts.update(need for need in needs if need)
    return [f"{_cases(count)} {_verb(count)} {need}" for need, count in counts.items()]


def _need(model: str, *, default: bool) -> str | None:
    """The variable that would run `model` (None: it has a key), and for a default the
    variables that would run the same model elsewhere."""
    if missing_credentials(model) is None:
        return None
    need = provider_of(model).keys[0]
    others = [provider_of(other).keys[0] for other in equivalents(model)] if default else []
    if others:
        return f"{need} (or {' or '.join(others)} for the same model)"
    return f"{need} (for {model})"


def _cases(count: int) -> str:
    return f"{count} case{'' if count == 1 else 's'}"


def _verb(count: int) -> str:
    return "needs" if count == 1 else "need"
