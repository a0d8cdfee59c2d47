"""`assay ci`: the GitHub Action's entry point - decide, run, publish, gate.

1. Mask the model keys and the token before anything else is printed.
2. Read the inputs and the event; decide whether this job runs the evals (outputs
   `ran` and `reason`; assay.action.decide). A skip exits 0. In the Action that decision
   is its own first step, before assay is installed, and hands its reason on in
   ASSAY_RUN_REASON: then it is not taken twice.
3. Run exactly what `assay run` would with the inputs as its options (same option
   precedence, same runner, same exit codes), after checking that every model the
   selected cases need has a key.
   Before it runs, the run history gets the default branch's earlier runs from their
   `history-artifact` (assay.action.history_artifact), so the trend spans workflow runs.
4. Publish: job summary, annotations, outputs, sticky PR comment, check run; with
   input `baseline-report`, the comparison with that baseline too (a baseline that
   cannot be had is a warning, never a failure). The step output `history-dir` names the
   history for action.yml to upload.

Exit codes: 0 gate passed or evals skipped, 1 gate failed, 2 configuration error (bad
input, invalid suite, missing model key, or a $GITHUB_OUTPUT / $GITHUB_STEP_SUMMARY that
cannot be written: reported, the rest still published, and it outranks the gate), 130
interrupted. Everything printed while this runs passes through assay.action.commands, so
untrusted text cannot forge a workflow command.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.secrets import remember_secret, secret_values
from assay.action import commands
from assay.action.changed_files import foreign_checkout
from assay.action.decide import announce, decide_event
from assay.action.environment import RunnerEnvironment
from assay.action.event import load_event
from assay.action.github_api import github_client
from assay.action.inputs import ActionInputs, raw_input, read_inputs, secret_inputs
from assay.action.outputs import RunnerFileError, report_and_continue, write_outputs
from assay.action.problems import (
    annotate_config_problem,
    report_config_error,
    report_unexpected_error,
)
from assay.action.publish import PublishTarget, publish_report
from assay.core.exit_codes import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASS, EXIT_USAGE
from assay.errors import ConfigError
from assay.options import options_from_environ

if TYPE_CHECKING:
    from assay.action.baseline_report import BaselineReport
    from assay.options import RunOptions, RunSettings
    from assay.report.model import Report
    from assay.suites.case import Case

__all__ = ["command", "run_ci"]

RUN_REASON_VARIABLE = "ASSAY_RUN_REASON"
"""Set by action.yml from its decision step: the evals run, for this reason."""


def command(args: argparse.Namespace) -> int:
    with commands.guarded_output():
        try:
            return run_ci(os.environ)
        except ConfigError as exc:
            report_config_error(exc, Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd()))
            return EXIT_USAGE
        except Exception as exc:  # a bug: one annotation, not a raw traceback
            report_unexpected_error(exc)
            return EXIT_USAGE


def run_ci(environ: Mapping[str, str]) -> int:
    _mask_secrets(environ)
    env = RunnerEnvironment.from_environ(environ)
    inputs = read_inputs(environ, workflow_file=env.workflow_file)
    client = None
    if inputs.token:
        client = github_client(api_url=env.api_url, token=inputs.token)

    decided = environ.get(RUN_REASON_VARIABLE, "").strip()
    broken: list[RunnerFileError] = []
    if decided:
        # The Action's decision step said run (and wrote `ran`/`reason` itself).
        event = load_event(env.event_name, env.event_path)
    else:
        event, decision = decide_event(
            env, label=inputs.label, trigger_paths=inputs.trigger_paths, token=inputs.token
        )
        announce(event, decision)
        with report_and_continue(broken):
            outputs = {"ran": str(decision.run).lower(), "reason": decision.reason}
            write_outputs(env.output, outputs)
        if not decision.run:
            return EXIT_USAGE if broken else EXIT_PASS
    target = PublishTarget(env=env, inputs=inputs, pull_request=event.pull_request, client=client)
    with _model_environment(inputs.model_environment):
        return _run_and_publish(inputs, target, broken=broken)


def _mask_secrets(environ: Mapping[str, str]) -> None:
    inputs = ((raw_input(environ, name) or "").strip() for name in secret_inputs())
    variables = (value.strip() for value in secret_values(environ))
    # dict: each value masked once, in a stable order (the inputs first)
    values = dict.fromkeys(v for v in (*inputs, *variables) if v)
    if not commands.on_runner(environ):
        # Not read by a runner, an add-mask line would only print the secret.
        for value in values:
            remember_secret(value)
        return
    for value in values:
        commands.add_mask(value)


@contextmanager
def _model_environment(values: Mapping[str, str]) -> Iterator[None]:
    """The model inputs (anthropic-api-key, ...) as the providers' variables, for this run only."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_args(inputs: ActionInputs, env: RunnerEnvironment) -> argparse.Namespace:
    """`assay run`'s arguments from the action's inputs (the runner adds ASSAY_* variables
    under them, as for `assay run`)."""
    from assay._cli.parser import build_parser  # lazy: start-up (a command loads only what it runs)

    try:
        args = build_parser().parse_args(["run"])
    except (ValueError, SystemExit) as exc:  # a malformed ASSAY_* variable
        raise ConfigError(f"invalid ASSAY_* run option in the environment: {exc}") from None
    args.paths = list(inputs.paths)
    # An input of -0 is 0, shown as 0.00, as options.read_number reads a typed one.
    args.threshold = inputs.threshold + 0.0
    args.models = list(inputs.model) or args.models
    args.judge_model = inputs.judge_model or args.judge_model
    for name in ("concurrency", "repeat", "max_errors", "gate", "inconclusive", "hidden_changes"):
        value = getattr(inputs, name)
        if value is not None:
            setattr(args, name, value)
    if inputs.shard:
        args.shard = inputs.shard
    if inputs.report_dir:
        args.report_dir = inputs.report_dir
    elif "report_dir" not in options_from_environ(os.environ) and env.runner_temp is not None:
        args.report_dir = str(env.runner_temp / "assay-report")
    return args


def _run_and_publish(
    inputs: ActionInputs, target: PublishTarget, *, broken: list[RunnerFileError]
) -> int:
    """Run and publish; `broken` holds the runner files already found unwritable."""

    # lazy: start-up (a command loads only what it runs)
    from assay._cli.run import build_options
    from assay.report.gate.policy import gate_mode_without_baseline
    from assay.report.terminal import make_listener, print_summary
    from assay.runner.session import prepare_run, run_prepared
    from assay.runner.settings import check_settings, resolve_settings
    from assay.suites import load_suites

    # Read before the run: a baseline kept in the report directory would be overwritten.
    baseline = _baseline(inputs, target)
    # CI publishes the report itself: no JSON on stdout, and a dry run would gate nothing,
    # whatever ASSAY_JSON or ASSAY_DRY_RUN say.
    options = dataclasses.replace(
        build_options(_run_args(inputs, target.env)), json_output=False, dry_run=False
    )
    if inputs.select == "affected" and target.pull_request is not None:
        options = _select_affected(options, inputs, target)
    if baseline is not None:
        # The regression gate and `repeat: auto` read the baseline the comparison uses.
        options = dataclasses.replace(options, baseline=_kept_baseline(baseline, target.env))
    # Loaded here for the warnings' annotations and the trigger-paths check, which look
    # at every case; the run itself decides and checks its options as `assay run` does.
    early = resolve_settings(options, config=None)
    mode = gate_mode_without_baseline(
        early.gate,
        baseline=early.baseline,
        floor=early.floor,
        baseline_asked=bool(inputs.baseline_report),
    )
    if mode != early.gate:
        commands.warning(
            f"gate: regression has no baseline to compare with; gating on the threshold "
            f"({early.threshold:g}) instead",
            title="assay: regression gate",
        )
        options = dataclasses.replace(options, gate=mode)
        early = resolve_settings(options, config=None)
    check_settings(early)
    loaded = load_suites(list(early.paths), strict=early.strict, root=early.root)
    for problem in loaded.warnings:
        annotate_config_problem(problem, target.env.workspace, level="warning")
    prepared = prepare_run(
        options,
        cases=loaded.cases,
        config=loaded.config,
        baseline=baseline.report if baseline is not None else None,
    )
    settings = prepared.settings
    selected = list(prepared.cases)
    # The agent command a case runs: the run's, else its own (covered per case), else the
    # project's `[tool.assay] agent_command`.
    agent_command = settings.agent_command or (
        loaded.config.agent_command if loaded.config else None
    )
    _warn_about_trigger_paths(loaded.cases, inputs, agent_command, target.env.workspace)

    # lazy: start-up (a command loads only what it runs)
    from assay.action.preflight import find_missing_model_key

    missing = find_missing_model_key(selected, options=settings, config=loaded.config)
    if missing is not None:
        commands.error(missing.message(), title="assay: missing model key")
        return EXIT_USAGE

    history_dir = _restore_history(inputs, target, settings)
    report = asyncio.run(run_prepared(prepared, listener=make_listener(sys.stdout)))
    report_dir = settings.resume_dir or settings.report_dir
    print_summary(report, report_dir=str(report_dir), stream=sys.stdout)
    if report.run.isolation is not None and report.run.isolation.warning:
        commands.warning(report.run.isolation.warning, title="assay: no OS sandbox")
    for warning in report.run.warnings:
        commands.warning(warning, title="assay: hidden changes")
    # lazy: start-up (a command loads only what it runs)
    from assay.runner.plan import TASKS_ONE_AT_A_TIME_NOTE

    # That tasks ran one at a time is said in the summary, not as an annotation on every run.
    tasks_note = TASKS_ONE_AT_A_TIME_NOTE.partition("{")[0]
    for note in report.run.notes:
        if not note.startswith(tasks_note):
            commands.notice(note, title="assay: agent model")
    broken += publish_report(report, report_dir=Path(report_dir), target=target, baseline=baseline)
    if not report.cases and report.run.selection:
        # A pull request that touches no case's inputs: a pass with nothing run, said as
        # plainly as a skipped run says it.
        commands.notice(report.summary.gate_reason, title="assay: no cases affected")
    if history_dir is not None:
        # For action.yml's upload step: the next run restores the history from it.
        with report_and_continue(broken):
            write_outputs(target.env.output, {"history-dir": str(history_dir)})
    if report.summary.verdict == "inconclusive" and report.run.inconclusive == "neutral":
        commands.notice(report.summary.gate_reason, title="assay: inconclusive")
    return _exit_code(report, runner_files_written=not broken)


def _select_affected(
    options: RunOptions, inputs: ActionInputs, target: PublishTarget
) -> RunOptions:
    """Select the cases the PR affects, by diffing the checkout against the PR's base;
    every case when the checkout is not the PR's code (that diff would show nothing)."""

    pull = target.pull_request
    assert pull is not None
    env = target.env
    not_the_pr = foreign_checkout(env.event_name, pull, workspace=env.workspace, merge_sha=env.sha)
    if not_the_pr is not None:
        commands.notice(
            f"select: affected runs every case: {not_the_pr}, not PR #{pull.number}'s code, "
            "so a diff against its base would show none of its changes",
            title="assay: select",
        )
        return options
    return dataclasses.replace(
        options, affected_by=pull.base_sha, affects_all=(*options.affects_all, *inputs.affects_all)
    )


def _restore_history(
    inputs: ActionInputs, target: PublishTarget, settings: RunSettings
) -> Path | None:
    """The run's history directory, with the default branch's earlier runs restored into
    it; None when the history stays in this job (`keep-history: false`, or a shard, whose
    partial report would read as a run of its own)."""
    if not inputs.keep_history or settings.shard is not None:
        return None
    # lazy: start-up (a command loads only what it runs)
    from assay.action.history_artifact import restore_history
    from assay.report.history import history_dir_for, history_keep

    report_dir = Path(settings.resume_dir or settings.report_dir)
    history_dir = history_dir_for(report_dir, settings.history_dir)
    restore_history(
        target.client,
        repository=target.env.repository,
        artifact_name=inputs.history_artifact,
        history_dir=history_dir,
        keep=history_keep(),
        allow_http=target.env.api_url.startswith("http://"),
    )
    return history_dir


def _kept_baseline(baseline: BaselineReport, env: RunnerEnvironment) -> Path:
    """The baseline report as a file the run reads (an artifact exists only in memory)."""

    where = Path(tempfile.mkdtemp(prefix="assay-baseline-", dir=env.runner_temp))
    path = where / "report.json"
    path.write_text(baseline.report.model_dump_json(), encoding="utf-8")
    return path


def _warn_about_trigger_paths(
    cases: Sequence[Case],
    inputs: ActionInputs,
    agent_command: tuple[str, ...] | None,
    workspace: Path,
) -> None:
    # lazy: start-up (a command loads only what it runs)
    from assay.action.coverage import uncovered_inputs, uncovered_warning

    uncovered = uncovered_inputs(
        cases, trigger_paths=inputs.trigger_paths, workspace=workspace, agent_command=agent_command
    )
    warning = uncovered_warning(uncovered)
    if warning is not None:
        commands.warning(warning, title="assay: trigger-paths")


def _exit_code(report: Report, *, runner_files_written: bool) -> int:
    if report.run.interrupted:
        return EXIT_INTERRUPTED
    if not runner_files_written:
        # Later steps read the outputs and people read the summary: a job that silently
        # lost them must not look like a pass (nor like a mere gate failure).
        return EXIT_USAGE
    return EXIT_PASS if report.summary.gate == "pass" else EXIT_GATE_FAILED


def _baseline(inputs: ActionInputs, target: PublishTarget) -> BaselineReport | None:
    if not inputs.baseline_report:
        return None
    # lazy: start-up (a command loads only what it runs)
    from assay.action.baseline_report import load_baseline_report

    env = target.env
    return load_baseline_report(
        inputs.baseline_report,
        workspace=env.workspace,
        repository=env.repository,
        client=target.client,
        artifact_name=inputs.baseline_artifact,
        allow_http=env.api_url.startswith("http://"),
    )
