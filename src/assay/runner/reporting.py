"""The Report of a run: its results with the run's facts, the summary and the gate."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from assay._version import __version__
from assay.agents import runtime_spec
from assay.grading.hidden_changes import hidden_change_warning
from assay.isolation.git import repository_fact
from assay.report.gate.policy import gate_policy
from assay.report.gate.stats import summarize
from assay.report.model import IsolationInfo, Report, RunInfo
from assay.runner.plan import format_shard, run_notes

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.report.model import CaseResult
    from assay.runner.plan import PlannedRun

__all__ = ["build_report", "gate_policy", "now"]


def _isolation_info(options: RunSettings, runs: Sequence[PlannedRun]) -> IsolationInfo | None:
    sandboxing = options.sandboxing
    if sandboxing is None:
        return None
    relayed = sandboxing.mode == "bwrap" and any(
        spec.relays_to_bridge(options, run.model)
        for run in runs
        if run.skip_reason is None
        and (spec := runtime_spec(run.runtime)) is not None
        and spec.relays_to_bridge is not None
    )
    return IsolationInfo(
        mode=sandboxing.mode,
        requested=sandboxing.requested,
        agent_network=sandboxing.agent_network,
        agent_network_relay="bridge" if relayed else None,
        command_network=sandboxing.command_network,
        warning=sandboxing.warning,
    )


def build_report(
    options: RunSettings,
    runs: Sequence[PlannedRun],
    results: list[CaseResult],
    *,
    started_at: str,
    duration_s: float,
    interrupted: bool,
    baseline: Report | None = None,
    split: str | None = None,
    split_cases: Sequence[str] | None = None,
) -> Report:
    """The report of `runs` with their `results`, redacted of every secret assay knows."""

    quarantine = frozenset(options.quarantine)
    results = [
        r.model_copy(update={"quarantined": True}) if r.id in quarantine else r for r in results
    ]
    summary = summarize(
        results,
        threshold=options.threshold,
        max_errors=options.max_errors,
        duration_s=duration_s,
        shard=format_shard(options.shard),
        require_all=options.require_all,
        policy=gate_policy(options, baseline),
        nothing_selected=options.selection if not runs else None,
        pass_k=None if options.adaptive else options.repeat,
    )
    judges = {run.judge_model for run in runs if run.judge_model}
    info = RunInfo(
        id=uuid.uuid4().hex,
        started_at=started_at,
        finished_at=now(),
        assay_version=__version__,
        threshold=options.threshold,
        models=list(options.models) or list(dict.fromkeys(r.model for r in runs if r.model)),
        judge_model=options.judge_model or (judges.pop() if len(judges) == 1 else None),
        repeat=options.repeat,
        repeat_auto=options.adaptive,
        min_pass=options.min_pass,
        shard=format_shard(options.shard),
        git_sha=_git_sha(),
        max_errors=options.max_errors,
        interrupted=interrupted,
        require_all=options.require_all,
        isolation=_isolation_info(options, runs),
        gate_mode=options.gate,
        inconclusive=options.inconclusive,
        errors_count_as=options.errors_count_as,
        floor=options.floor,
        quarantine=list(options.quarantine),
        selection=options.selection,
        split=split,
        split_cases=list(split_cases) if split_cases is not None else None,
        notes=run_notes(runs, options=options),
        warnings=_hidden_change_warnings(results),
    )
    return _redacted(Report(run=info, summary=summary, cases=results))


def _hidden_change_warnings(results: Sequence[CaseResult]) -> list[str]:
    """One warning per case whose agent hid changes from git status, over all its attempts."""
    warnings = []
    for case in results:
        checks = [*case.checks, *(check for attempt in case.attempts for check in attempt.checks)]
        warning = hidden_change_warning(case.id, checks)
        if warning is not None:
            warnings.append(warning)
    return warnings


def _redacted(report: Report) -> Report:
    """`report` without any secret value assay knows: everything published (files, the
    terminal, the job summary, the PR comment, the check run) is rendered from it."""
    # lazy: start-up (not loaded with this module)
    from assay.report.redacted import redacted_report

    return redacted_report(report)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _git_sha() -> str | None:
    """HEAD of the working directory's repository, if it is one."""
    return repository_fact(["rev-parse", "--verify", "--quiet", "HEAD"])
