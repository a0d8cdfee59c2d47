"""`assay regrade`: grade a run's saved answers again, without running any agent.

Every attempt of a run keeps the answer its grader read (`runner/answers.py`). Re-grading
loads the suites again (the files the report names, or the PATHs given), matches each of
the report's cases by id, rebuilds its sandbox from today's fixtures (what a judge is
shown of the change) and hands the saved answer to today's grader: the current judge
prompt, the judge model asked for (else the one the case was judged by) and the case's
current `should_find`, `should_not_find`, rubric or expected verdict. The result is a new
report with a run id of its own and `run.regraded_from` naming the original run, written
through the same writer as `assay run` to another directory (never the original's), with
each attempt's transcript, diff and answer copied beside it for the viewer.

What cannot be graded again is `skipped`, saying why: an attempt with no saved answer
(its agent never answered, or an assay from before answers were kept ran it), a case no
longer in the suites, and a task case whose workspace the run did not keep (its checks
run in the workspace the agent changed: with `--keep-workspaces` they run there again,
against the baseline of a sandbox built from today's fixture).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.files import REPORT_FILE, artifacts_dir
from assay.core.usage import Usage
from assay.errors import AssayError, ConfigError, JudgeError, ModelUnavailable, RunError
from assay.models.names import bridge_env
from assay.report.model import Attempt, CaseResult
from assay.report.read import read_report
from assay.runner.answers import AnswerUnavailable, load_answer
from assay.runner.attempt import _judge_failure
from assay.runner.combine import fold_attempts, graded_attempt
from assay.runner.error_source import error_source
from assay.runner.kinds import grader_for, kind_of
from assay.runner.lock import report_dir_lock
from assay.runner.outcome import AttemptOutcome, skipped_outcome
from assay.runner.plan import PlannedRun
from assay.runner.reporting import build_report, now
from assay.runner.resolve import case_timeout
from assay.runner.session import _sandboxed
from assay.runner.settings import check_settings, resolve_settings
from assay.runner.writer import prepare_report_dir, remove_earlier_reports, write_report_dir
from assay.subject import AttemptContext
from assay.suites import load_suites
from assay.suites.select import name_matches, nothing_selected
from assay.workspace import build_sandbox, private_work_root, remove_sandbox

if TYPE_CHECKING:
    from assay.options import RunOptions, RunSettings
    from assay.report.model import Report
    from assay.suites.case import Case

__all__ = ["TASK_NOT_REGRADED", "output_dir", "regrade", "regrade_async"]

TASK_NOT_REGRADED = (
    "not re-graded: a task case's checks run in the workspace its agent changed, which the "
    "run did not keep: run with --keep-workspaces to re-grade its tasks later, or run it "
    "again with `assay run`"
)


def output_dir(source: str | os.PathLike[str], report_dir: str | os.PathLike[str] | None) -> Path:
    """Where the re-graded report goes: `report_dir`, else beside the original's directory
    with `-regraded` added to its name."""
    if report_dir:
        return Path(report_dir)
    source_dir = _source_dir(source)
    return source_dir.with_name(source_dir.name + "-regraded")


def _source_dir(source: str | os.PathLike[str]) -> Path:
    """The original report's directory (`source` may name its report.json)."""
    path = Path(source)
    return path.parent if path.name == REPORT_FILE and path.is_file() else path


def regrade(source: str | os.PathLike[str], options: RunOptions) -> Report:
    """Re-grade the run in `source` (a report directory); see `regrade_async`."""
    return asyncio.run(regrade_async(source, options))


async def regrade_async(source: str | os.PathLike[str], options: RunOptions) -> Report:
    """Grade the saved answers of the run in `source` again and write a new report.

    Of `options`: `paths` (default: the suite files the report names), `root`, `patterns`,
    `judge_model`, `judge_prompt`, `threshold` (default: the original run's),
    `report_dir` (default `<source>-regraded`), `cache_dir`, `offline`, `concurrency`,
    `timeout_s`, `isolation`. ConfigError for a report that cannot be read, suites that
    cannot be loaded, an empty selection or an output directory that is the original's.
    """

    source_dir = _source_dir(source)
    original = read_report(source_dir)
    out = output_dir(source, options.report_dir)
    if out.resolve() == source_dir.resolve():
        raise ConfigError(
            f"--report-dir {out} is the original run's directory: a re-graded report never "
            "replaces the run it grades; choose another directory"
        )
    chosen = [r for r in original.cases if _selected(r.id, options.patterns)]
    if not chosen:
        raise nothing_selected(options.patterns)
    paths, missing = _suite_paths(original, options.paths)
    cases, config = _load(paths, root=options.root)
    settings = _settings(options, original, paths=paths, report_dir=out, config=config)
    by_id = {case.id: case for case in cases}
    regradable = [by_id[r.id] for r in chosen if _why_not(r, by_id, missing) is None]
    settings = _sandboxed(settings, list({c.id: c for c in regradable}.values()), config)
    report_dir = prepare_report_dir(out)
    bridge_env()  # the judge's key may be given as a run's is (ASSAY_/WARDEN_ prefixed)
    started_at, clock = now(), time.monotonic()
    with report_dir_lock(report_dir):
        remove_earlier_reports(report_dir)
        work_root = private_work_root(settings.work_root)
        limit = asyncio.Semaphore(settings.concurrency)
        try:
            results = await asyncio.gather(
                *(
                    _regrade_case(
                        result,
                        by_id.get(result.id),
                        why_not=_why_not(result, by_id, missing),
                        judge_model=settings.judge_model
                        or result.judge.get("model")
                        or original.run.judge_model,
                        settings=settings,
                        source_dir=source_dir,
                        report_dir=report_dir,
                        work_root=work_root,
                        limit=limit,
                    )
                    for result in chosen
                )
            )
        finally:
            await asyncio.to_thread(shutil.rmtree, work_root, True)
        runs = [
            PlannedRun(by_id[r.id], r.model, r.runtime or "", None, settings.judge_model or None)
            for r in chosen
            if r.id in by_id
        ]
        report = build_report(
            settings,
            runs,
            list(results),
            started_at=started_at,
            duration_s=time.monotonic() - clock,
            interrupted=False,
        )
        judges = {r.judge.get("model") for r in results if r.judge.get("model")}
        note = (
            f"re-graded from run {original.run.id}: no agent ran; each saved answer was "
            "graded again with today's grader and suites (assay regrade)"
        )
        info = report.run.model_copy(
            update={
                "regraded_from": original.run.id,
                "notes": [note, *report.run.notes],
                "models": list(original.run.models),
                "judge_model": settings.judge_model or (judges.pop() if len(judges) == 1 else None),
            }
        )
        report = report.model_copy(update={"run": info})
        write_report_dir(report, report_dir, cases=list(by_id.values()))
    return report


def _selected(case_id: str, patterns: Sequence[str]) -> bool:

    return not patterns or any(name_matches(case_id, pattern) for pattern in patterns)


def _suite_paths(original: Report, given: Sequence[str]) -> tuple[list[str], set[str]]:
    """The suites to load (the PATHs given, else the files the report's cases name, as
    the run saw them from its working directory) and those of the report's not found."""
    if given:
        return list(given), set()
    named = list(dict.fromkeys(case.source.path for case in original.cases))
    found = [path for path in named if Path(path).exists()]
    if not found:
        raise ConfigError(
            f"the report's suite files ({', '.join(named[:3])}{', ...' if len(named) > 3 else ''})"
            " are not found from here: run assay regrade in the directory the run ran in, "
            "or pass the suites' PATHs"
        )
    return found, set(named) - set(found)


def _load(paths: Sequence[str], *, root: Path | None) -> tuple[list[Case], Any]:

    loaded = load_suites(list(paths), root=root)
    return list(loaded.cases), loaded.config


def _settings(
    options: RunOptions, original: Report, *, paths: Sequence[str], report_dir: Path, config: Any
) -> RunSettings:
    """The run's settings: what was given, else the original run's gate, else as `run`."""

    run = original.run
    threshold = options.threshold if options.threshold is not None else run.threshold
    decided = dataclasses.replace(
        options,
        paths=tuple(paths),
        report_dir=report_dir,
        threshold=threshold,
        max_errors=run.max_errors if options.max_errors is None else options.max_errors,
        require_all=run.require_all if options.require_all is None else options.require_all,
        errors_count_as=options.errors_count_as or run.errors_count_as,
        inconclusive=options.inconclusive or run.inconclusive,
        repeat=run.repeat,
        gate="threshold",  # a regression gate's baseline is another run's, not this one's
        floor=None,
        resume_dir=None,
        dry_run=None,
    )
    settings = resolve_settings(decided, config=config)
    check_settings(settings)
    return settings


def _why_not(result: CaseResult, by_id: dict[str, Case], missing: set[str]) -> str | None:
    """Why the case cannot be re-graded at all; None when it can."""
    case = by_id.get(result.id)
    if case is None:
        if result.source.path in missing:
            return (
                f"not re-graded: its suite file {result.source.path} is not found from here; "
                "pass the suites' PATHs"
            )
        return (
            f"not re-graded: no case {result.id} in the suites loaded (removed or renamed); "
            "pass the PATH that holds it"
        )
    if case.kind != result.kind:
        return f"not re-graded: the case is a {case.kind} case now, and was a {result.kind} case"
    if not result.attempts:
        told = f" ({result.reason})" if result.reason else ""
        return f"not re-graded: the original run has no attempt of it{told}"
    return None


async def _regrade_case(
    result: CaseResult,
    case: Case | None,
    *,
    why_not: str | None,
    judge_model: str | None,
    settings: RunSettings,
    source_dir: Path,
    report_dir: Path,
    work_root: Path,
    limit: asyncio.Semaphore,
) -> CaseResult:
    if case is None or why_not is not None:
        return _skipped(result, why_not or "not re-graded")
    run = PlannedRun(
        case,
        result.model,
        result.runtime or "",
        None,
        judge_model,
        timeout_s=case_timeout(case, settings=settings),
    )
    outcomes = []
    for index, attempt in enumerate(result.attempts):
        async with limit:
            outcomes.append(
                await _regrade_attempt(
                    run,
                    index,
                    attempt,
                    settings=settings,
                    source=artifacts_dir(source_dir, result.id, result.model, index),
                    report_dir=report_dir,
                    work_root=work_root,
                )
            )
    return fold_attempts(case, model=result.model, runtime=result.runtime, outcomes=outcomes)


def _skipped(result: CaseResult, reason: str) -> CaseResult:
    """The report's case, not graded again, with why; its attempts `skipped` likewise."""
    attempts = [Attempt(status="skipped", reason=reason) for _ in result.attempts]
    return CaseResult(
        id=result.id,
        suite=result.suite,
        kind=result.kind,
        source=result.source,
        model=result.model,
        runtime=result.runtime,
        status="skipped",
        reason=reason,
        attempts=attempts,
    )


async def _regrade_attempt(
    run: PlannedRun,
    index: int,
    original: Attempt,
    *,
    settings: RunSettings,
    source: Path,
    report_dir: Path,
    work_root: Path,
) -> AttemptOutcome:
    """Attempt `index` of `run` graded again from its saved answer in `source`."""

    started = time.monotonic()
    artifacts = artifacts_dir(report_dir, run.case.id, run.model, index)
    await asyncio.to_thread(_copy_artifacts, source, artifacts)
    try:
        kept = load_answer(source, streams_in=artifacts)
    except AnswerUnavailable as exc:
        return skipped_outcome(_no_answer(str(exc), original))
    output = kept.output
    kind = kind_of(run.case)
    workspace = None
    if run.case.kind == "task":
        workspace, why_not = _kept_workspace(kept.workspace)
        if why_not is not None:
            return skipped_outcome(why_not)
    sandbox = None
    phase = "sandbox"
    try:
        sandbox = await asyncio.to_thread(
            build_sandbox,
            run.case,
            parent=work_root,
            skill_override=settings.skill,
            builder=kind.sandbox,
        )
        ctx = AttemptContext(
            case=run.case,
            # A task's checks read the workspace its agent changed, against the baseline
            # of the sandbox just built from today's fixture.
            sandbox=sandbox if workspace is None else dataclasses.replace(sandbox, path=workspace),
            model=run.model,
            judge_model=run.judge_model,
            timeout_s=run.timeout_s,
            attempt=index,
            artifacts_dir=artifacts,
            skill_override=settings.skill,
            env=dict(settings.extra_env),
        )
        phase = kind.grading_phase
        grader = grader_for(run.case, options=settings)
        async with asyncio.timeout(run.timeout_s if kind.timed_grading else None):
            grade = await grader.grade(ctx, output)
    except ModelUnavailable as exc:
        return skipped_outcome(str(exc))
    except TimeoutError:
        failed = Attempt(
            status="error",
            reason=f"timeout after {run.timeout_s:g}s in {phase}",
            error_source=error_source(TimeoutError(), phase=phase),
            duration_s=time.monotonic() - started,
        )
        return AttemptOutcome(failed, output.findings)
    except AssayError as exc:
        judge = _judge_failure(exc, artifacts, report_dir) if isinstance(exc, JudgeError) else {}
        usage = exc.usage if isinstance(exc, RunError) else None
        failed = Attempt(
            status="error",
            reason=str(exc),
            error_source=error_source(exc, phase=phase),
            duration_s=time.monotonic() - started,
            usage=usage or Usage(),
        )
        return AttemptOutcome(failed, output.findings, judge)
    except Exception as exc:  # a bug in assay or a user grader: this attempt's error, go on
        failed = Attempt(
            status="error",
            reason=f"internal error: {type(exc).__name__}: {exc}",
            error_source=error_source(exc, phase=phase),
            duration_s=time.monotonic() - started,
        )
        return AttemptOutcome(failed, output.findings)
    finally:
        if sandbox is not None:
            await asyncio.to_thread(remove_sandbox, sandbox)
    attempt = graded_attempt(
        grade,
        duration_s=time.monotonic() - started,
        usage=grade.usage,  # this run's cost: the judge's; the agent's was the original run's
        transcript=original.transcript,
        # What the agent did is the original run's: re-grading changes only the verdict.
        activity=original.activity.model_dump() if original.activity is not None else None,
    )
    kept_at = str(workspace) if workspace is not None else None
    return AttemptOutcome(attempt, output.findings, grade.judge, kept_at)


def _kept_workspace(recorded: Path | None) -> tuple[Path | None, str | None]:
    """The workspace a task's agent changed, kept by the run; else why there is none."""
    if recorded is None:
        return None, TASK_NOT_REGRADED
    if recorded.is_symlink() or not recorded.is_dir():
        return None, (
            f"not re-graded: the workspace the run kept, {recorded}, is gone (or is not a "
            "directory): run the task again with `assay run`"
        )
    # The task's commands run in it: only in a sandbox's work tree as assay builds one
    # (`<dir>/repo` beside `<dir>/scratch`), never a directory an edited answer names.
    box = recorded.parent
    if (
        recorded.name != "repo"
        or not box.name.startswith("assay-")
        or not (box / "scratch").is_dir()
    ):
        return None, (
            f"not re-graded: {recorded}, named as the kept workspace, is not a sandbox "
            "assay built: run the task again with `assay run`"
        )
    return recorded, None


def _no_answer(problem: str, original: Attempt) -> str:
    """Why an attempt is not graded again, and what to do about it."""
    if original.status in ("error", "skipped"):
        told = f": {original.reason}" if original.reason else ""
        return (
            f"not re-graded: {problem}; the original attempt was {original.status}{told} "
            "(nothing to grade: run the case again with `assay run`)"
        )
    return (
        f"not re-graded: {problem}; answers are kept by assay runs from this version on: "
        "run the case again with `assay run`"
    )


def _copy_artifacts(source: Path, target: Path) -> None:
    """The original attempt's files (transcripts, diff, answer) beside the new report's
    attempt, for report.html; regular files only, never through a link."""
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)  # an earlier re-grade's, into this directory
    target.mkdir(parents=True, exist_ok=True)
    root = os.path.realpath(source)
    for folder, directories, files in os.walk(source, followlinks=False):
        here = Path(folder)
        where = target / here.relative_to(source)
        where.mkdir(parents=True, exist_ok=True)
        directories[:] = [d for d in directories if not (here / d).is_symlink()]
        for name in files:
            path = here / name
            if path.is_symlink() or not path.is_file():
                continue
            if not os.path.realpath(path).startswith(root + os.sep):
                continue
            shutil.copyfile(path, where / name, follow_symlinks=False)
