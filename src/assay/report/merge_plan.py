"""A shard's cases against the plan it records: exactly its part, nothing lost or added.

Each shard's report.json keeps the run's plan (`run.split_cases`: every case id of the
selection the split was cut from). A shard that lost cases, or was edited consistently
(cases and summary alike, which `merge.py: _check_counts` cannot see), no longer holds
its part of that plan; a plan edited to match no longer hashes to the split every shard
shares (`run.split`), or differs from the other shards' plans. Reports of an assay that
kept no plan are merged as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.core.shards import shard_part, split_fingerprint_of
from assay.errors import ConfigError, SourcePosition
from assay.report.model import Report

__all__ = ["check_shard_plans"]

_EDITED = "it was cut short or edited; merge the reports as the runs wrote them"
_SHOWN = 10


def check_shard_plans(shards: Sequence[tuple[str, Report, tuple[int, int]]]) -> None:
    """ConfigError naming the first shard (label, report, (I, N)) whose cases are not
    exactly its part of its plan, with the case ids missing and extra."""
    planned = [(label, report, shard) for label, report, shard in shards if report.run.split_cases]
    first_plan: tuple[str, list[str]] | None = None
    for label, report, shard in planned:
        plan = report.run.split_cases or []
        where = SourcePosition(label)
        if report.run.split is not None and split_fingerprint_of(plan) != report.run.split:
            raise ConfigError(
                f"run.split_cases does not hash to run.split ({report.run.split}): {_EDITED}",
                where,
            )
        if first_plan is None:
            first_plan = (label, plan)
        elif sorted(plan) != sorted(first_plan[1]):
            raise ConfigError(
                f"its plan (run.split_cases, {len(plan)} case(s)) is not the plan of "
                f"{first_plan[0]} ({len(first_plan[1])} case(s)): the shards come from "
                f"different runs, or {_EDITED}",
                where,
            )
        part = shard_part(plan, shard)
        held = {case.id for case in report.cases}
        missing, extra = sorted(part - held), sorted(held - part)
        if missing or extra:
            found = [
                f"{what} {len(ids)} case(s) ({_listed(ids)})"
                for what, ids in (("missing", missing), ("extra", extra))
                if ids
            ]
            raise ConfigError(
                f"shard {shard[0]}/{shard[1]} is not its part of the run's plan "
                f"({len(part)} of {len(plan)} case(s)): {'; '.join(found)}; {_EDITED}",
                where,
            )


def _listed(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_SHOWN])
    return shown + (f", and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")
