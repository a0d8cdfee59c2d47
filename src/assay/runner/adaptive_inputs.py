"""What `--repeat auto` knows before its first attempt, read from the run's settings.

The baseline report (`--baseline`) says which cases passed and which were flaky there;
the quarantine list names cases known to be flaky. Keyed by case id and model, as a
report pairs cases.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from assay.runner.adaptive import CaseKnowledge

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.report.model import Report

__all__ = ["case_key", "gate_limit", "knowledge_of"]


def case_key(case_id: str, model: str | None) -> str:
    return f"{case_id}\x00{model or ''}"


def gate_limit(options: RunSettings, *, baseline: Report | None) -> float:
    """The score the decision turns on: the threshold; for a regression gate its floor,
    or without one the baseline's score (the head is judged against it, and the
    threshold takes no part in that gate)."""
    if options.gate == "regression":
        if options.floor is not None:
            return options.floor
        if baseline is not None and baseline.summary.score is not None:
            return baseline.summary.score
    return options.threshold


def knowledge_of(
    options: RunSettings, runs: Sequence[tuple[str, str | None]], *, baseline: Report | None
) -> dict[str, CaseKnowledge]:
    """Per case key of `runs` ((case id, model) pairs), what the baseline and quarantine say."""
    known_before: dict[str, CaseKnowledge] = {}
    if baseline is not None:
        for case in baseline.cases:
            if case.status in ("pass", "fail"):
                known_before[case_key(case.id, case.model)] = CaseKnowledge(
                    baseline_pass=case.status == "pass",
                    known_flaky=case.flaky or case.quarantined,
                    baseline_attempts=sum(1 for a in case.attempts if a.status in ("pass", "fail")),
                    baseline_passes=sum(1 for a in case.attempts if a.status == "pass"),
                )
    quarantined = frozenset(options.quarantine)
    knowledge: dict[str, CaseKnowledge] = {}
    for case_id, model in runs:
        key = case_key(case_id, model)
        known = known_before.get(key, CaseKnowledge())
        if case_id in quarantined:
            known = dataclasses.replace(known, known_flaky=True, quarantined=True)
        knowledge[key] = known
    return knowledge
