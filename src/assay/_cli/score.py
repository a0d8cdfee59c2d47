"""`assay score`: check a workspace the agent already changed (PVYai's `eval run` mode).

No agent and no copy of the fixture: the user copied the task's fixture, committed it (the
baseline, as PVYai expects), ran their agent, and now asks whether the result passes.
The verification commands still come from a suite someone else may have written, so they
run in the OS sandbox as in `assay run` (`--isolation`, default auto, with
`--command-network` and `--pass-env`): the workspace is the one directory they may write,
and the suite's checkout and HOME are hidden. Unconfined, assay says so on stderr.
The baseline is the repository's root commit (PVYai's workspace has no other) unless
`--baseline` names one, so an agent that committed its work is judged on all of it, as in
`assay run`. What hides a change from `git status` (index flags, `.git/info/exclude`, an
ignore rule the agent wrote) is a warning on stderr naming the files, and fails the task
with `--hidden-changes fail`. `--json` prints PVYai's per-task report. Exit 0 when the
task passes, 1 when it does not (PVYai's own `eval run` exits 3 then), 2 for a usage or
configuration error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import ConfigError, SourcePosition
from assay.grading.base import Grade
from assay.isolation.git import tracked_files
from assay.report.model import CaseResult, Check
from assay.report.terminal import printable
from assay.runner.combine import fold_attempts, graded_attempt
from assay.runner.outcome import AttemptOutcome
from assay.suites import load_suites
from assay.suites.case import Case, TaskSpec
from assay.upstream.go.fmt import go_json_indent

if TYPE_CHECKING:
    from assay.isolation.bwrap import Sandboxing

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    # lazy: start-up (a command loads only what it runs)
    from assay.agents.trace import read_trace_file
    from assay.grading.hidden_changes import hidden_change_warning
    from assay.grading.task_checks import score_workspace

    suite = Path(args.suite)
    if not suite.is_file():
        raise ConfigError("task suite not found", SourcePosition(suite))
    loaded = load_suites([suite])
    case = _find_task(loaded.cases, args.task, suite)
    assert isinstance(case.spec, TaskSpec)
    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise ConfigError("workspace is not a directory", SourcePosition(workspace))
    required = case.required_trace_events
    trace_events = read_trace_file(Path(args.trace), required) if args.trace else []
    baseline = _baseline(args.baseline)
    limits = loaded.config.sandbox_limits if loaded.config else None
    sandboxing = _sandboxing(args, case=case, limits=limits)

    started = time.monotonic()
    grade = asyncio.run(
        score_workspace(
            case.spec,
            workspace,
            baseline=baseline,
            trace_events=trace_events,
            sandboxing=sandboxing,
            pass_env=tuple(args.pass_env),
            hidden_changes=args.hidden_changes,
        )
    )
    result = _case_result(case, grade, duration_s=time.monotonic() - started)
    warning = hidden_change_warning(result.id, grade.checks)
    if warning is not None:
        print(f"assay: WARNING: {printable(warning)}", file=sys.stderr)
    if args.json:
        # lazy: start-up (a command loads only what it runs)
        from assay.report.pvyai import task_report

        print(go_json_indent(task_report(case.suite, case.local_id, grade.checks)))
    else:
        _print_table(result)
    return 0 if result.status == "pass" else 1


def _sandboxing(
    args: argparse.Namespace, *, case: Case, limits: Mapping[str, int] | None
) -> Sandboxing:
    """The verification commands' sandbox: what `assay run` hides, but the workspace is the
    user's own checkout (bound writable on top of whatever hides it). A command may name a
    tracked file of the suite's checkout (a test helper), never the suite or its fixture."""
    # lazy: start-up (a command loads only what it runs)
    from assay.isolation.bwrap import (
        checkout_root,
        harden_process,
        project_checkouts,
        resolve_sandboxing,
    )
    from assay.isolation.limits import limits_from_environ
    from assay.runner.affected import case_inputs

    harden_process()
    masked = project_checkouts([case.source_path], Path.cwd())
    # The workspace's repository is the agent's: masked around the workspace, but never a
    # checkout whose files a command may name, so git is never asked what it tracks
    # (its config, which the agent wrote, can name programs).
    agents = checkout_root(Path(args.workspace))
    sandboxing = resolve_sandboxing(
        args.isolation or "auto",
        masked=masked,
        sources={checkout for checkout in masked if checkout != agents},
        withheld={path for _, path in case_inputs(case)},
        tracked=tracked_files,
        command_network=args.command_network != "off",
        limits=limits_from_environ(os.environ, limits),
    )
    if sandboxing.warning:
        print(f"assay: WARNING: {sandboxing.warning}", file=sys.stderr)
    return sandboxing


def _baseline(raw: str | None) -> str | None:
    if raw is None:
        return None
    if not raw.strip() or raw.startswith("-"):
        raise ConfigError(f"--baseline {raw!r} is not a commit")
    return raw.strip()


def _find_task(cases: Sequence[Case], task: str, suite: Path) -> Case:
    tasks = [case for case in cases if case.kind == "task"]
    for case in tasks:
        if task in (case.local_id, case.id):
            return case
    known = ", ".join(case.local_id for case in tasks) or "none"
    raise ConfigError(f"no task {task!r} in this suite; tasks: {known}", SourcePosition(suite))


def _case_result(case: Case, grade: Grade, *, duration_s: float) -> CaseResult:
    attempt = graded_attempt(grade, duration_s=duration_s, usage=grade.usage)
    outcome = AttemptOutcome(attempt, judge=grade.judge)
    return fold_attempts(case, model=None, runtime=None, outcomes=[outcome])


def _print_table(result: CaseResult) -> None:
    out = sys.stdout
    out.write(f"{result.status.upper():5} {printable(result.id)}  score {result.score:.2f}\n")
    rows = [_row(check) for check in result.checks]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(3)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)]
        out.write(("  " + "  ".join([*cells, row[3]])).rstrip() + "\n")
    if result.reason:
        out.write(f"failed: {printable(result.reason)}\n")


def _row(check: Check) -> tuple[str, str, str, str]:
    # lazy: start-up (a command loads only what it runs)
    from assay.grading.task_results import check_summary

    message = printable(check.message if check.status == "pass" else check_summary(check))
    duration = (check.model_extra or {}).get("durationS")
    if isinstance(duration, int | float):
        message += f" ({duration:.1f}s)"
    return check.status.upper(), check.kind, printable(check.id), message
