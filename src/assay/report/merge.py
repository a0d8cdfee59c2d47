"""Merging the shard reports of one run into one report.

`assay run --shard I/N` writes a report per shard. `merge_reports` turns them back into
the report the unsharded run would have written: the same cases in the same order, the
summary and gate recomputed over all of them. It refuses what cannot be one run - two
reports holding the same case, a missing or repeated shard, shards of different splits,
one case id meaning different cases - and what no run wrote: a summary that does not
count the report's own cases, a case whose status contradicts its score, attempts or
checks (merge_consistency.py). It warns about settings that differ but still
leave the cases comparable (threshold, models, repeat, versions).
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from assay._util.arguments import expect, is_number, items
from assay._version import __version__
from assay.core.shards import ShardSyntaxError, parse_shard
from assay.errors import ConfigError, ConfigErrors, SourcePosition
from assay.report.gate.policy import GatePolicy
from assay.report.gate.stats import gate_option_problems, summarize
from assay.report.merge_consistency import case_contradictions
from assay.report.merge_plan import check_shard_plans
from assay.report.model import CaseResult, IsolationInfo, Report, RunInfo

__all__ = ["merge_reports"]


CaseKey = tuple[str, str | None]
Warn = Callable[[str], None]


@dataclass(frozen=True)
class _Input:
    label: str
    report: Report
    shard: tuple[int, int] | None


def merge_reports(
    reports: Sequence[Report],
    *,
    threshold: float | None = None,
    max_errors: int | None = None,
    labels: Sequence[str] | None = None,
    on_warning: Warn | None = None,
) -> Report:
    """One report from the shard reports of a run (or from reports of disjoint cases).

    Cases keep the runner's order (suite file, position in it, then the model matrix),
    so the result equals the unsharded run's report apart from ids and timings. The gate
    is re-applied with `threshold` / `max_errors`, else with the reports' own (the
    strictest, with a warning, when they differ). `labels` name the reports in messages
    (file paths in the CLI); `on_warning` receives each warning. Raises ConfigError when
    the reports cannot be one run.
    """
    for index, report in enumerate(items("reports", reports, "a list of Report")):
        expect(f"reports[{index}]", report, Report, "a Report (read one with assay.read_report)")
    if threshold is not None:
        expect("threshold", threshold, is_number, "a number (int or float)")
    if max_errors is not None:
        expect("max_errors", max_errors, int, "an int")
    if not reports:
        raise ConfigError("nothing to merge: no reports given")
    names = (
        list(labels) if labels is not None else [f"report {n}" for n in range(1, 1 + len(reports))]
    )
    if len(names) != len(reports):
        raise ValueError("labels must name every report")
    warn: Warn = on_warning or (lambda _message: None)
    _check_gate_options(threshold, max_errors)
    inputs = sorted(
        (
            _Input(name, report, _shard_of(report, name))
            for name, report in zip(names, reports, strict=True)
        ),
        key=lambda i: i.shard or (0, 0),
    )
    _check_shards(inputs)
    check_shard_plans([(i.label, i.report, i.shard) for i in inputs if i.shard is not None])
    _check_counts(inputs)
    _check_cases(inputs)
    models = list(dict.fromkeys(model for i in inputs for model in i.report.run.models))
    cases = _in_runner_order(_combine_cases(inputs, warn), models)
    _warn_about_differences(
        inputs, warn, gate_given=(threshold is not None, max_errors is not None)
    )
    runs = [i.report.run for i in inputs]
    started_at, finished_at = _time_span(inputs)
    info = RunInfo(
        id=uuid.uuid4().hex,
        started_at=started_at,
        finished_at=finished_at,
        assay_version=_common([r.assay_version for r in runs]) or __version__,
        # + 0.0: a -0.0 in a report (edited, or written by an older assay) is 0.
        threshold=threshold if threshold is not None else max(r.threshold for r in runs) + 0.0,
        models=models,
        judge_model=_common([r.judge_model for r in runs]),
        repeat=max(r.repeat for r in runs),
        repeat_auto=any(r.repeat_auto for r in runs),
        min_pass=runs[0].min_pass,
        shard=None,
        git_sha=_common([r.git_sha for r in runs]),
        max_errors=max_errors if max_errors is not None else min(r.max_errors for r in runs),
        interrupted=any(r.interrupted for r in runs),
        require_all=any(r.require_all for r in runs),
        isolation=_weakest_isolation([r.isolation for r in runs]),
        inconclusive=runs[0].inconclusive,
        errors_count_as=runs[0].errors_count_as,
        quarantine=sorted({case_id for r in runs for case_id in r.quarantine}),
        selection=_common([r.selection for r in runs]),
        notes=list(dict.fromkeys(note for r in runs for note in r.notes)),
        warnings=list(dict.fromkeys(warning for r in runs for warning in r.warnings)),
    )
    # The shards' own choices of inconclusive and errors carry over; a regression gate
    # needs its baseline, which a report does not hold, so the merge gates by threshold.
    summary = summarize(
        cases,
        threshold=info.threshold,
        max_errors=info.max_errors,
        duration_s=sum(i.report.summary.duration_s for i in inputs),
        require_all=info.require_all,
        policy=GatePolicy(
            inconclusive=info.inconclusive,
            errors_count_as=info.errors_count_as,
            quarantine=frozenset(info.quarantine),
            min_pass=info.min_pass,
        ),
        nothing_selected=info.selection if not cases else None,
        pass_k=None if info.repeat_auto else info.repeat,
    )
    return Report(run=info, summary=summary, cases=cases)


def _check_gate_options(threshold: float | None, max_errors: int | None) -> None:
    if problems := gate_option_problems(threshold=threshold, max_errors=max_errors):
        raise ConfigError("; ".join(problems))


def _shard_of(report: Report, label: str) -> tuple[int, int] | None:
    if report.run.shard is None:
        return None
    try:
        return parse_shard(report.run.shard)
    except ShardSyntaxError:
        message = f"run.shard must look like I/N with 1 <= I <= N, got {report.run.shard!r}"
        raise ConfigError(message, SourcePosition(label)) from None


_AS_WRITTEN = "merge the reports as the runs wrote them"


def _check_counts(inputs: Sequence[_Input]) -> None:
    """A report's summary counts its own cases, by status: one holding fewer was cut short
    or edited, and merging it would gate a run without the cases it lost; a case whose
    status was edited (fail to pass) no longer matches the count the run made."""
    for item in inputs:
        held, counted = len(item.report.cases), item.report.summary.total
        if held != counted:
            raise ConfigError(
                f"{item.label} holds {held} case(s) but its summary counts {counted}: "
                f"it was cut short or edited; {_AS_WRITTEN}"
            )
        summary = item.report.summary
        held_by: Counter[str] = Counter(case.status for case in item.report.cases)
        for status, word, count in (
            ("pass", "passed", summary.passed),
            ("fail", "failed", summary.failed),
            ("error", "errors", summary.errors),
            ("skipped", "skipped", summary.skipped),
        ):
            if held_by[status] != count:
                raise ConfigError(
                    f"{item.label} holds {held_by[status]} {status} case(s) but its summary "
                    f"counts {count} ({word}): it was edited; {_AS_WRITTEN}"
                )


def _check_cases(inputs: Sequence[_Input]) -> None:
    """Every case must be one a run could have written (report/merge_consistency.py):
    every contradiction, in every report, at once."""
    problems = [
        ConfigError(
            f"cases[{index}] {_show((case.id, case.model))}: {'; '.join(found)}: edited or "
            f"damaged after the run; {_AS_WRITTEN}",
            SourcePosition(item.label),
        )
        for item in inputs
        for index, case in enumerate(item.report.cases)
        if (found := case_contradictions(case, min_pass=item.report.run.min_pass))
    ]
    if problems:
        raise ConfigErrors(problems)


def _check_shards(inputs: Sequence[_Input]) -> None:
    """Sharded reports must be the shards 1..N of one N-way split, each exactly once."""
    sharded = [(i, i.shard) for i in inputs if i.shard is not None]
    if not sharded:
        return
    if len({count for _, (_, count) in sharded}) > 1:
        detail = ", ".join(f"{i.label} is {i.report.run.shard}" for i, _ in sharded)
        raise ConfigError(f"the reports are shards of different splits ({detail})")
    splits = {i.report.run.split for i, _ in sharded}
    if len(splits) > 1 and None not in splits:  # reports from before `split` was kept: unknown
        detail = ", ".join(f"{i.label} ({i.report.run.shard})" for i, _ in sharded)
        raise ConfigError(
            f"the shards were cut from different selections of cases (another suite, `-t` "
            f"or --affected-by): {detail}; merge the shards of one run"
        )
    count = sharded[0][1][1]
    seen: dict[int, str] = {}
    for item, (index, _) in sharded:
        if index in seen:
            raise ConfigError(
                f"shard {index}/{count} is given twice: {seen[index]} and {item.label}"
            )
        seen[index] = item.label
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in seen]
    if missing:
        raise ConfigError(
            f"missing shard {', '.join(missing)}: got {len(seen)} of {count} shards "
            f"({', '.join(f'{index}/{count} from {seen[index]}' for index in sorted(seen))})"
        )


def _combine_cases(inputs: Sequence[_Input], warn: Warn) -> list[CaseResult]:
    """Every case once. Unsharded reports may overlap (the later one wins, with a warning);
    a shard never overlaps anything, and a case id must mean the same case everywhere."""
    chosen: dict[CaseKey, tuple[_Input, CaseResult]] = {}
    defined: dict[str, tuple[str, str, str]] = {}
    replaced: dict[tuple[str, str], list[str]] = defaultdict(list)
    for item in inputs:
        keys_here: set[CaseKey] = set()
        for case in item.report.cases:
            key = (case.id, case.model)
            if key in keys_here:
                raise ConfigError(f"case {_show(key)} appears twice", SourcePosition(item.label))
            keys_here.add(key)
            kind, suite, where = defined.setdefault(case.id, (case.kind, case.suite, item.label))
            if (kind, suite) != (case.kind, case.suite):
                raise ConfigError(
                    f"case {case.id} is not the same case in {where} ({kind} case of suite "
                    f"{suite}) and {item.label} ({case.kind} case of suite {case.suite}): the "
                    "reports come from different suites and cannot be merged"
                )
            earlier = chosen.get(key)
            if earlier is not None:
                if earlier[0].shard is not None or item.shard is not None:
                    raise ConfigError(
                        f"case {_show(key)} is in both {earlier[0].label} and {item.label}: "
                        "the shards of one run never share a case"
                    )
                replaced[(earlier[0].label, item.label)].append(_show(key))
            chosen[key] = (item, case)
    for (first, second), shown in replaced.items():
        examples = ", ".join(shown[:3]) + (", …" if len(shown) > 3 else "")
        warn(
            f"{len(shown)} case(s) are in both {first} and {second} ({examples}): "
            f"keeping the results from {second}"
        )
    return [case for _, case in chosen.values()]


def _show(key: CaseKey) -> str:
    case_id, model = key
    return f"{case_id} [{model}]" if model else case_id


def _in_runner_order(cases: list[CaseResult], models: Sequence[str]) -> list[CaseResult]:
    """The order `assay run` reports cases in: discovery order of the suite files (sorted
    by path), each file's cases in document order, each case across the model matrix."""
    rank = {model: position for position, model in enumerate(models)}

    def position(case: CaseResult) -> tuple[tuple[str, ...], int, str, int, str]:
        model_rank = -1 if case.model is None else rank.get(case.model, len(rank))
        return (
            Path(case.source.path).parts,
            case.source.line,
            case.id,
            model_rank,
            case.model or "",
        )

    return sorted(cases, key=position)


def _warn_about_differences(
    inputs: Sequence[_Input], warn: Warn, *, gate_given: tuple[bool, bool]
) -> None:
    settings: dict[str, Callable[[RunInfo], object]] = {
        "models": lambda run: run.models,
        "repeat": lambda run: run.repeat,
        "min-pass": lambda run: run.min_pass,
        "judge model": lambda run: run.judge_model,
        "git commit": lambda run: run.git_sha,
        "assay version": lambda run: run.assay_version,
    }
    threshold_given, max_errors_given = gate_given
    if not threshold_given:
        settings["threshold (the merge uses the highest; pass --threshold to choose)"] = (
            lambda run: run.threshold
        )
    if not max_errors_given:
        settings["max-errors (the merge uses the lowest; pass --max-errors to choose)"] = (
            lambda run: run.max_errors
        )
    for name, read in settings.items():
        values = [read(i.report.run) for i in inputs]
        if any(value != values[0] for value in values):
            detail = "; ".join(
                f"{i.label}: {_format(v)}" for i, v in zip(inputs, values, strict=True)
            )
            warn(f"the reports differ in {name}: {detail}")


def _format(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    return "none" if value is None else str(value)


def _common(values: Sequence[str | None]) -> str | None:
    """The value every report agrees on, else None."""
    return values[0] if values and all(v == values[0] for v in values) else None


def _weakest_isolation(shards: list[IsolationInfo | None]) -> IsolationInfo | None:
    """The merged run is only as isolated as its least isolated shard (its warning kept);
    when every shard was sandboxed, its bridged CLIs' relay is said if any shard had one."""
    known = [info for info in shards if info is not None]
    if not known:
        return None
    unsandboxed = [info for info in known if info.mode == "none"]
    if unsandboxed:
        return unsandboxed[0]
    relay = next((i.agent_network_relay for i in known if i.agent_network_relay), None)
    return known[0].model_copy(update={"agent_network_relay": relay})


def _time_span(inputs: Sequence[_Input]) -> tuple[str, str | None]:
    """The earliest start and the latest finish, compared as instants (not as text)."""
    starts = [(_instant(i.report.run.started_at, i.label), i.report.run.started_at) for i in inputs]
    finishes = [
        (_instant(finished, i.label), finished)
        for i in inputs
        if (finished := i.report.run.finished_at) is not None
    ]
    return min(starts)[1], (max(finishes)[1] if finishes else None)


def _instant(text: str, label: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"run time {text!r} is not an ISO 8601 timestamp", SourcePosition(label)
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
