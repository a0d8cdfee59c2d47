"""`assay check`: prove that every selected case can pass and can fail.

Each case is graded with answers made up from the case itself (`check_probes.py`): one
that must pass, and ones that must fail. Every answer goes through `run_attempt` as an
agent's would in `assay run` (the same sandbox, grader, judge prompt, record/replay cache,
timeout and error handling); only the agent is replaced by the made-up answer, or for a
task by its reference solution. Nothing is written but the cache: the attempts' artifacts
go to a temporary directory, removed at the end.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay._version import __version__
from assay.models.names import bridge_env, missing_credentials
from assay.report.model import Source
from assay.runner.affected import affected_selection
from assay.runner.attempt import AttemptOutcome, run_attempt
from assay.runner.check_probes import Probe, probes_for
from assay.runner.check_report import (
    CaseCheck,
    CaseCheckStatus,
    CheckReport,
    ProbeResult,
    summarize,
)
from assay.runner.combine import total_usage
from assay.runner.hidden_starts import refuse_hidden_starts
from assay.runner.kinds import kind_of
from assay.runner.plan import PlannedRun, shard_cases
from assay.runner.resolve import (
    case_timeout,
    needs_judge,
    resolve_judge_model,
    resolve_runtime,
    subject_models,
)
from assay.runner.session import _sandboxed
from assay.runner.settings import check_settings, resolve_settings, tasks_one_at_a_time
from assay.suites import load_suites, select_cases
from assay.suites.select import nothing_selected
from assay.workspace import private_work_root

if TYPE_CHECKING:
    from assay.options import RunOptions, RunSettings
    from assay.suites.case import Case
    from assay.suites.config import AssayConfig

__all__ = ["NO_REFERENCE", "check", "check_async"]

NO_REFERENCE = (
    "no reference solution: add reference/<task id>.patch (or an executable "
    "reference/<task id>) beside the suite file"
)


def check(options: RunOptions) -> CheckReport:
    """Check the cases `options` selects (paths, `-t`, judge model, cache, concurrency,
    timeout); see `check_async`."""
    return asyncio.run(check_async(options))


async def check_async(options: RunOptions) -> CheckReport:
    """Grade every selected case with answers that must pass and answers that must fail.

    Options are decided as `assay run` decides them (`runner/settings.py`). Raises
    ConfigError for bad options or an empty selection, before anything runs.
    """

    settings, cases, config, warnings = _selected(options)
    bridge_env()
    settings = _sandboxed(settings, cases, config)
    _refuse_hidden_references(cases, settings=settings, config=config)
    started = time.monotonic()
    work_root = private_work_root(settings.work_root)
    scratch = Path(tempfile.mkdtemp(prefix="assay-check-"))
    limit = asyncio.Semaphore(settings.concurrency)
    # PVYai's rule, as in a run: tasks one at a time unless a concurrency was chosen.
    tasks = asyncio.Semaphore(1 if tasks_one_at_a_time(settings) else settings.concurrency)
    try:
        checked = await asyncio.gather(
            *(
                _check_case(
                    case,
                    settings=settings,
                    config=config,
                    work_root=work_root,
                    scratch=scratch,
                    limit=tasks if case.kind == "task" else limit,
                )
                for case in cases
            )
        )
    finally:
        await asyncio.to_thread(shutil.rmtree, work_root, True)
        await asyncio.to_thread(shutil.rmtree, scratch, True)
    return CheckReport(
        assay_version=__version__,
        summary=summarize(list(checked), duration_s=time.monotonic() - started),
        cases=list(checked),
        warnings=warnings,
    )


def _refuse_hidden_references(
    cases: Sequence[Case], *, settings: RunSettings, config: AssayConfig | None
) -> None:
    """An executable reference (or a verification command) the OS sandbox hides is exit 2
    before anything runs, as an agent command is in `assay run`: else every answer of the
    task would end in "No such file"."""

    runs = []
    for case in cases:
        if case.kind != "task":
            continue
        commands = [probe.command for probe in probes_for(case).probes if probe.command]
        probe = Probe("reference", "pass", None, command=commands[0] if commands else None)
        runs.append(_planned(case, probe, judge=None, settings=settings, config=config))
    refuse_hidden_starts(settings.sandboxing, runs)


def _selected(options: RunOptions) -> tuple[RunSettings, list[Case], AssayConfig | None, list[str]]:
    """The run's settings and the selected cases, as `assay run` decides them."""

    settings = resolve_settings(options, config=None)
    check_settings(settings)
    loaded = load_suites(list(settings.paths), strict=settings.strict, root=settings.root)
    settings = resolve_settings(options, config=loaded.config)
    check_settings(settings)
    cases = list(loaded.cases)
    if settings.patterns:
        cases = select_cases(cases, list(settings.patterns))
    if not cases:
        raise nothing_selected(settings.patterns)
    # `run`'s selection: a pull request that touches no case's inputs checks none.
    if settings.affected_by:
        cases = list(affected_selection(settings, cases, loaded.config).cases)
    cases = shard_cases(cases, settings.shard)
    warnings = [str(warning) for warning in loaded.warnings] + list(settings.warnings)
    return settings, cases, loaded.config, warnings


async def _check_case(
    case: Case,
    *,
    settings: RunSettings,
    config: AssayConfig | None,
    work_root: Path,
    scratch: Path,
    limit: asyncio.Semaphore,
) -> CaseCheck:
    judge, skip = _judge_of(case, settings=settings, config=config)
    made = probes_for(case)
    source = Source(path=str(case.source_path), line=case.source_line)
    base = CaseCheck(
        id=case.id, suite=case.suite, kind=case.kind, source=source, status="ok", judge_model=judge
    )
    if made.problem is not None:
        return base.model_copy(update={"status": "error", "reason": made.problem})
    if skip is not None:
        return base.model_copy(update={"status": "skipped", "reason": skip})
    results: list[ProbeResult] = []
    for index, probe in enumerate(made.probes):
        run = _planned(case, probe, judge=judge, settings=settings, config=config)
        async with limit:
            outcome = await run_attempt(
                run,
                index,
                options=settings,
                work_root=work_root,
                report_dir=scratch,
                agent=probe.agent,
            )
        results.append(_probe_result(probe, outcome))
    status, reason = _verdict(results, no_reference=made.no_reference)
    return base.model_copy(
        update={
            "status": status,
            "reason": reason,
            "probes": results,
            "usage": total_usage(result.usage for result in results),
        }
    )


def _judge_of(
    case: Case, *, settings: RunSettings, config: AssayConfig | None
) -> tuple[str | None, str | None]:
    """The judge model the case's grading calls in `assay run` (None: graded in code), and
    why it cannot be called (no key; with a cache the provider decides per call)."""

    if not needs_judge(case):
        return None, None
    runtime = resolve_runtime(case, options=settings, config=config)
    subject = subject_models(case, runtime=runtime, options=settings, config=config)[0]
    judge = resolve_judge_model(case, subject=subject, options=settings, config=config)
    missing = missing_credentials(judge) if settings.cache_dir is None else None
    return judge, f"judge: {missing}" if missing else None


def _planned(
    case: Case,
    probe: Probe,
    *,
    judge: str | None,
    settings: RunSettings,
    config: AssayConfig | None,
) -> PlannedRun:

    # A made-up answer runs nothing; a task's reference command runs as its agent would.
    runtime = kind_of(case).runtime or "builtin"
    return PlannedRun(
        case,
        None,
        runtime,
        probe.command,
        judge,
        None,
        case_timeout(case, settings=settings),
    )


def _probe_result(probe: Probe, outcome: AttemptOutcome) -> ProbeResult:
    attempt = outcome.attempt
    scored = probe.min_score is not None or probe.max_score is not None
    score = _judge_score(outcome) if scored else None
    held: bool | None
    if attempt.status == "skipped":
        held = None
    elif attempt.status == "error":
        # A reference that failed to run or apply is the reference failing, not the harness.
        held = False if probe.answer == "reference" and attempt.error_source == "agent" else None
    elif probe.must == "pass":
        held = attempt.status == "pass" and (
            probe.min_score is None or (score is not None and score >= probe.min_score)
        )
    else:
        held = attempt.status == "fail" and (
            probe.max_score is None or (score is not None and score <= probe.max_score)
        )
    return ProbeResult(
        answer=probe.answer,
        must=probe.must,
        status=attempt.status,
        held=held,
        score=attempt.score,
        judge_score=score,
        reason=attempt.reason,
        checks=attempt.checks,
        usage=attempt.usage,
    )


def _judge_score(outcome: AttemptOutcome) -> float | None:
    """The rubric judge's own 1-5 score."""
    verdict = outcome.judge.get("verdict")
    score = verdict.get("score") if isinstance(verdict, dict) else None
    if isinstance(score, int | float):
        return float(score)
    attempt_score = outcome.attempt.score
    return attempt_score * 4 + 1 if attempt_score is not None else None


def _verdict(results: Sequence[ProbeResult], *, no_reference: bool) -> tuple[CaseCheckStatus, str]:
    """The case's status from its answers' grades, and why."""
    unknown = [r for r in results if r.held is None]
    if any(r.status == "error" for r in unknown):
        return "error", "; ".join(f"{r.answer}: {r.reason}" for r in unknown)
    if unknown:
        return "skipped", unknown[0].reason
    failed_pass = [r for r in results if r.must == "pass" and not r.held]
    passed_fail = [r for r in results if r.must == "fail" and not r.held]
    fail_probes = [r for r in results if r.must == "fail"]
    reasons = [f"the {r.answer} answer {_grade(r)}: {r.reason or r.status}" for r in failed_pass]
    reasons += [f"the {r.answer} answer {_grade(r)}" for r in passed_fail]
    if not fail_probes:
        reasons.append("nothing can fail it: no required should_find and no should_not_find")
    if failed_pass:
        return "cannot pass", "; ".join(reasons)
    if passed_fail or not fail_probes:
        return "cannot fail", "; ".join(reasons)
    if no_reference:
        return "no reference", NO_REFERENCE
    return "ok", ""


def _grade(result: ProbeResult) -> str:
    """What the answer got, in words: `passes`, `fails`, `scores 3/5 (fail)`, ..."""
    if result.judge_score is not None:
        return f"scores {result.judge_score:g}/5 ({result.status})"
    return {"pass": "passes", "fail": "fails"}.get(result.status, "could not run")
