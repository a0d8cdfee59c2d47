"""One whole run: load, select, shard, plan, execute, write the report directory."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.agents import runtime_spec
from assay.core.files import CASES_DIR, JUNIT_FILE, LOCK_FILE, SUMMARY_FILE
from assay.errors import ConfigError, ConfigErrors, output_error
from assay.grading.verdict_consistency import CONTRADICTION_KEY, contradiction_note
from assay.isolation.git import tracked_files
from assay.models.names import bridge_env
from assay.report.history import history_dir_for, usable_history_dir
from assay.runner.defaults import missing_key_warnings
from assay.runner.events import NullListener, RunListener
from assay.runner.execute import Budget, Executor
from assay.runner.hidden_starts import refuse_hidden_starts
from assay.runner.lock import report_dir_lock
from assay.runner.plan import (
    PlannedRun,
    commandless_suites,
    plan_runs,
    shard_cases,
    split_fingerprint,
)
from assay.runner.reporting import build_report, now
from assay.runner.results import RESULTS_FILE, ResultsStream, read_results
from assay.runner.settings import (
    check_settings,
    check_work_root,
    read_baseline,
    resolve_settings,
)
from assay.runner.writer import prepare_report_dir, remove_earlier_reports, write_report_dir
from assay.suites import load_suites, select_cases
from assay.suites.select import nothing_selected
from assay.workspace import private_work_root

if TYPE_CHECKING:
    from assay.options import RunOptions, RunSettings
    from assay.report.model import CaseResult, Report
    from assay.suites.case import Case
    from assay.suites.config import AssayConfig

__all__ = ["PreparedRun", "prepare_run", "run", "run_async", "run_prepared"]


@dataclass(frozen=True)
class PreparedRun:
    """A run decided and checked, nothing built yet: what `run_async` goes on to do."""

    settings: RunSettings
    config: AssayConfig | None
    cases: tuple[Case, ...]
    """The selected cases of this shard."""
    runs: tuple[PlannedRun, ...]
    warnings: tuple[str, ...] = ()
    """Unknown suite keys, mistyped placeholders: for the caller to show."""
    baseline: Report | None = None
    """`--baseline` as read, once (`runner.settings.read_baseline`): the regression gate
    and `--repeat auto` both use this copy."""
    history_dir: Path | None = None
    """The run history the report is added to, checked writable (None: not kept)."""
    split: str | None = None
    """A shard's fingerprint of the whole selection (`RunInfo.split`)."""
    split_cases: tuple[str, ...] | None = None
    """A shard's plan: the case ids of the whole selection, sorted (`RunInfo.split_cases`)."""


def run(
    options: RunOptions,
    *,
    cases: Sequence[Case] | None = None,
    config: AssayConfig | None = None,
    listener: RunListener | None = None,
) -> Report:
    """Run the evals and write the report directory; see `run_async`."""
    return asyncio.run(run_async(options, cases=cases, config=config, listener=listener))


async def run_async(
    options: RunOptions,
    *,
    cases: Sequence[Case] | None = None,
    config: AssayConfig | None = None,
    listener: RunListener | None = None,
) -> Report:
    """Run the selected cases and write report.json, summary.md, junit.xml, results.jsonl.

    `cases` defaults to loading `options.paths` (whose `[tool.assay]` config then supplies
    the fallback runtime, agent command and models; pass `config` to supply it yourself).
    Options not given are decided as `assay run` decides them (`ASSAY_*`, then the config,
    then the suite, then the default: `runner/settings.py`). `-t` patterns and the shard
    are applied here either way. Raises ConfigError for bad options, an empty selection,
    an unwritable report directory or one another run is using, before running anything.
    SIGINT/SIGTERM stop the run: the report is still written, with `run.interrupted` set.

    With `dry_run` every sandbox is built and kept, no agent runs and nothing is written:
    the report's cases are `skipped` ("dry run", `workspace` set) or `error` (the sandbox
    could not be built).
    """
    prepared = prepare_run(options, cases=cases, config=config)
    if prepared.settings.dry_run:
        # lazy: start-up (not loaded with this module)
        from assay.runner.dry_run import build_dry_run, dry_run_report

        settings = prepared.settings
        built = await asyncio.to_thread(
            build_dry_run,
            prepared.cases,
            work_root=settings.work_root,
            skill_override=settings.skill,
        )
        return dry_run_report(prepared.settings, prepared.runs, built)
    return await run_prepared(prepared, listener=listener)


def prepare_run(
    options: RunOptions,
    *,
    cases: Sequence[Case] | None = None,
    config: AssayConfig | None = None,
    environ: Mapping[str, str] | None = None,
    baseline: Report | None = None,
) -> PreparedRun:
    """Decide every option, load (unless `cases` are given), select, shard and plan.

    `baseline` is the `--baseline` report when the caller has read it already (the Action
    has it in memory); else it is read here, once.

    Every check of the options happens here, the same for the library and the command
    line: a ConfigError means nothing was built.
    """
    settings = resolve_settings(options, config=config, environ=environ)
    check_settings(settings)  # bad values fail fast, before loading
    warnings: list[str] = []
    if cases is None:
        loaded = load_suites(list(settings.paths), strict=settings.strict, root=settings.root)
        cases, config = loaded.cases, config or loaded.config
        warnings += [str(warning) for warning in loaded.warnings]
        settings = resolve_settings(options, config=config, environ=environ)
        check_settings(settings)
    warnings += settings.warnings
    known_ids = {case.id for case in cases}
    warnings += [
        f"quarantine: {case_id!r} names no case (case ids are <suite>/<case>)"
        for case_id in settings.quarantine
        if case_id not in known_ids
    ]
    if baseline is None or settings.baseline is None:
        baseline = read_baseline(settings)
    selected = list(cases)
    if settings.patterns:
        selected = select_cases(selected, list(settings.patterns))
    if not selected:
        raise nothing_selected(settings.patterns)
    if settings.affected_by:
        settings, selected = _affected(settings, selected, config)
    if settings.work_root is not None:
        check_work_root(settings.work_root, selected)
    split = split_fingerprint(selected) if settings.shard else None
    split_cases = tuple(sorted(case.id for case in selected)) if settings.shard else None
    selected = shard_cases(selected, settings.shard)
    runs = plan_runs(selected, options=settings, config=config)
    if not settings.dry_run and (commandless := commandless_suites(runs)):
        raise ConfigErrors(commandless)
    warnings += missing_key_warnings(runs, options=settings, config=config)
    if settings.resume_dir is not None and not (settings.resume_dir / RESULTS_FILE).is_file():
        raise ConfigError(f"nothing to resume: {settings.resume_dir / RESULTS_FILE} not found")
    history_dir = None
    # A shard's report is a part of the run, not a run: `assay merge` records the whole one.
    if not settings.shard and not settings.dry_run:
        history_dir, why_not = usable_history_dir(
            settings.resume_dir or settings.report_dir, settings.history_dir
        )
        warnings += [why_not] if why_not else []
    return PreparedRun(
        settings,
        config,
        tuple(selected),
        tuple(runs),
        tuple(warnings),
        baseline=baseline,
        history_dir=history_dir,
        split=split,
        split_cases=split_cases,
    )


async def run_prepared(prepared: PreparedRun, *, listener: RunListener | None = None) -> Report:
    """Execute a prepared run and write its report directory (see `run_async`)."""
    bridge_env()
    # With a cache, hits never import an SDK (a replay costs no import) and a miss imports
    # it at its first call as before; without one, every call needs it: start it now.
    if prepared.settings.cache_dir is None:
        # lazy: start-up (not loaded with this module)
        from assay.models.preload import start_sdk_imports

        start_sdk_imports(_models_called(prepared.runs))
    listener = listener or NullListener()
    options = _sandboxed(prepared.settings, prepared.cases, prepared.config)
    refuse_hidden_starts(options.sandboxing, prepared.runs)
    report_dir = prepare_report_dir(options.resume_dir or options.report_dir)
    # Held until the report is written: nothing else may truncate, trim or append to
    # results.jsonl, or write the report, while this run owns the directory.
    with report_dir_lock(report_dir):
        # Until this run writes its own, no report of another run stands beside its results.
        remove_earlier_reports(report_dir)
        report = await _run_planned(
            options,
            prepared.runs,
            report_dir=report_dir,
            listener=listener,
            baseline=prepared.baseline,
            split=prepared.split,
            split_cases=prepared.split_cases,
        )
        try:
            write_report_dir(
                report,
                report_dir,
                cases=list(prepared.cases),
                pvyai=options.pvyai_report,
                cassandra=options.cassandra_report,
                inspect_log=options.inspect_log,
                history_dir=prepared.history_dir,
                baseline=prepared.baseline,
            )
        except OSError as exc:
            # Every result is in results.jsonl already: --resume writes the report.
            raise output_error(exc, what=str(report_dir), report_dir=report_dir) from None
    return report


def _models_called(runs: Sequence[PlannedRun]) -> set[str]:
    """The models the planned runs will call: judges, and the builtin agent's own model."""

    called: set[str] = set()
    for run in runs:
        if run.skip_reason is not None:
            continue
        spec = runtime_spec(run.runtime)
        if run.model and spec is not None and spec.calls_model:
            called.add(run.model)
        if run.judge_model:
            called.add(run.judge_model)
    return called


async def _run_planned(
    options: RunSettings,
    runs: Sequence[PlannedRun],
    *,
    report_dir: Path,
    listener: RunListener,
    baseline: Report | None,
    split: str | None = None,
    split_cases: Sequence[str] | None = None,
) -> Report:
    """Execute what `runs` still needs (all of it, or what --resume found unfinished)."""
    # lazy: start-up (not loaded with this module)
    from assay.runner.fingerprint import fingerprint
    from assay.runner.input_digest import ContentDigests
    from assay.runner.signing import load_key, new_key

    results_path = report_dir / RESULTS_FILE
    resumed: dict[tuple[str, str | None], CaseResult] = {}
    contents = ContentDigests()  # a fixture many cases share is read once
    fingerprints = {run.key: fingerprint(run, options, contents) for run in runs}
    key = None
    if options.resume_dir is not None:
        key = load_key(report_dir)
        resumed = read_results(
            results_path,
            plan=runs,
            repair=True,
            verify=True,
            key=key,
            fingerprints=fingerprints,
            notice=lambda message: print(f"assay: resume: {message}", file=sys.stderr),
        )
    key = key or new_key(report_dir)

    started_at, clock = now(), time.monotonic()
    budget = Budget(
        options.max_cost_usd, spent_usd=sum(r.usage.cost_usd or 0.0 for r in resumed.values())
    )
    listener.run_started(len(runs))
    for result in resumed.values():
        listener.case_finished(result)
    remaining = [run for run in runs if run.key not in resumed]
    work_root = private_work_root(options.work_root)
    try:
        # A resumed stream keeps every earlier line, including other selections' results.
        try:
            stream = ResultsStream(
                results_path,
                append=options.resume_dir is not None,
                key=key,
                fingerprints=fingerprints,
            )
        except OSError as exc:
            raise output_error(exc, what=str(results_path), report_dir=report_dir) from None
        with stream:
            executor = Executor(
                remaining,
                options=options,
                work_root=work_root,
                report_dir=report_dir,
                stream=stream,
                listener=listener,
                budget=budget,
                baseline=baseline,
            )
            with _stop_on_signals(executor.stop):
                finished = await executor.execute()
    finally:
        listener.run_finished()
        if not options.keep_workspaces:
            # Sandboxes are removed one by one; this catches those a cancellation left.
            await asyncio.to_thread(shutil.rmtree, work_root, True)

    by_key = {run.key: result for run, result in zip(remaining, finished, strict=True)}
    results = [resumed.get(run.key) or by_key[run.key] for run in runs]
    report = build_report(
        options,
        runs,
        results,
        started_at=started_at,
        duration_s=time.monotonic() - clock,
        interrupted=executor.interrupted,
        baseline=baseline,
        split=split,
        split_cases=split_cases,
    )

    contradicted = contradiction_note(
        [c.id for c in report.cases if c.judge.get(CONTRADICTION_KEY)]
    )
    if contradicted is not None:
        report.run.notes.append(contradicted)
    if options.keep_workspaces:  # said once, where the run ends: terminal, summary.md
        report.run.notes.append(KEPT_WORKSPACES_NOTE.format(work_root=work_root))
    return report


KEPT_WORKSPACES_NOTE = (
    "--keep-workspaces: every attempt's sandbox is kept under {work_root} (each case's "
    "`workspace` in report.json names its own); remove the directory when done"
)


def _sandboxed(
    options: RunSettings, cases: Sequence[Case], config: AssayConfig | None = None
) -> RunSettings:
    """`options` with the run's isolation resolved (ConfigError: bwrap asked for, not there).

    Every program the run starts must not see the suites (their expected answers, their
    fixtures to overwrite), the report directory (results to forge), the run history or
    the baseline report (past expected findings): their directories are masked, as is the
    working directory's checkout. Of the checkouts an argv may name tracked files, never a
    suite file or fixture (`isolation/exposure.py`). assay also stops being dumpable, so even
    without a sandbox a process of the same user cannot read its environment.
    """
    # lazy: start-up (not loaded with this module)
    from assay.isolation.bwrap import harden_process, project_checkouts, resolve_sandboxing
    from assay.isolation.limits import limits_from_environ
    from assay.runner.affected import case_inputs

    harden_process()
    if options.sandboxing is not None:
        return options
    # a suite file holds many cases: find each file's checkout once
    sources = project_checkouts({case.source_path for case in cases}, Path.cwd())
    report_dir = options.resume_dir or options.report_dir
    masked = {*sources, Path(os.path.realpath(report_dir))}
    # Where every case's sandbox is made: a case sees its own (bound on top), not the
    # concurrent cases' workspaces beside it.
    masked.add(Path(os.path.realpath(options.work_root or tempfile.gettempdir())))
    # Even a shard's, which records nothing: the directory holds earlier runs' reports.
    history = history_dir_for(report_dir, options.history_dir)
    if history.is_dir():
        masked.add(Path(os.path.realpath(history)))
    withheld = {path for case in cases for _, path in case_inputs(case)}
    hidden: set[Path] = set()
    if options.baseline is not None:
        withheld.add(options.baseline)
        beside = Path(os.path.realpath(options.baseline)).parent
        # A report directory holds nothing a run needs, and its results.jsonl repeats
        # the report; any other directory may (the agent, a tool): hide the file alone.
        report_files = (RESULTS_FILE, LOCK_FILE, SUMMARY_FILE, JUNIT_FILE, CASES_DIR)
        if any((beside / name).exists() for name in report_files):
            masked.add(beside)
        else:
            hidden.add(options.baseline)
    sandboxing = resolve_sandboxing(
        options.isolation,
        masked=masked,
        sources=sources,
        withheld=withheld,
        hidden=hidden,
        tracked=tracked_files,
        agent_network=options.agent_network,
        command_network=options.command_network,
        limits=limits_from_environ(os.environ, config.sandbox_limits if config else None),
    )
    if sandboxing.warning:
        print(f"assay: WARNING: {sandboxing.warning}", file=sys.stderr)
    return dataclasses.replace(options, sandboxing=sandboxing)


@contextlib.contextmanager
def _stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """SIGINT/SIGTERM call `stop` once; a second Ctrl-C falls back to KeyboardInterrupt."""
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []

    def handle(sig: signal.Signals) -> None:
        stop()
        if sig == signal.SIGINT:
            with contextlib.suppress(RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
                installed.remove(sig)

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, handle, sig)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, Windows
            continue
        installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            with contextlib.suppress(RuntimeError, ValueError):
                loop.remove_signal_handler(sig)


def _affected(
    settings: RunSettings, cases: list[Case], config: AssayConfig | None
) -> tuple[RunSettings, list[Case]]:
    """`--affected-by`: the cases whose inputs changed, and the reason for the report."""
    # lazy: start-up (not loaded with this module)
    from assay.runner.affected import affected_selection

    selection = affected_selection(settings, cases, config)
    # No case affected is a pass with nothing run (report/gate/stats.py: summarize), not an
    # error: a pull request that touches no eval input has nothing the gate could fail.
    return dataclasses.replace(settings, selection=selection.reason), list(selection.cases)
