"""Deterministic checks of a PVYai task, with PVYai's verdicts, ids and fields.

The checks, in PVYai's order: one per verification command (id = the command's id), then
`changed_files`, and when the task has them `forbidden_changed_files`, `context_checks`
and `trace_events`. Each check carries PVYai's result fields (`expectedFiles`,
`missingFiles`, `unexpectedFiles`, ...), so `report/pvyai.py` renders it as PVYai would.

PVYai's rules, followed here:
- the context files are looked at first, then the commands run (`task_commands`), then
  the changed files are read: a file a command writes is a changed file, not a context
  file;
- `changed_files` fails when an expected file did not change **or any other file
  changed**; `forbidden_changed_files` fails when a forbidden file changed;
- when the agent exits non-zero, crashes or cannot start, no check runs: every check is
  `blocked` (`task_results.blocked_checks`), and so is the task; the reason is the
  agent's stderr, trimmed, else `agent exited with code N`.
assay's own rules on top: the commands' environment has no credentials (they run code the
agent wrote; `scrubbed_environ`), and git, which reads a commit baseline's repository after
them (`assay score`), starts none of the programs its config may now name, has no
credentials either and runs in the commands' sandbox.
A task's status is `blocked` if any check is, else `error` if any is, else `fail` if
any is, else `pass` (`task_results.pvyai_status`). assay's case status has no
`blocked`: a blocked or errored task is an assay `error`, never a pass.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.secrets import scrubbed_environ
from assay.core.checks import Check
from assay.errors import SandboxError
from assay.grading.base import Grade
from assay.grading.hidden_changes import HiddenChangesMode, hidden_changes_check, hidden_files_text
from assay.grading.task_commands import CommandLaunch, command_checks
from assay.grading.task_context import context_check
from assay.grading.task_record import record_agent_exit
from assay.grading.task_results import blocked_checks, check_summary, go_exit_code, pvyai_status
from assay.grading.task_results import task_check as _check
from assay.isolation.limits import limit_reason
from assay.subject import read_agent_stream
from assay.suites.case import TaskSpec
from assay.upstream.pvyai.paths import (
    changed_files,
    go_trim_space,
    normalize_files,
    normalize_strings,
    unnamed_changes,
)

if TYPE_CHECKING:
    from assay.isolation.bwrap import Confinement, Sandboxing
    from assay.options import RunOptions
    from assay.subject import AgentOutput, AttemptContext
    from assay.workspace import Baseline

__all__ = ["TaskGrader", "score_workspace"]


async def score_workspace(
    spec: TaskSpec,
    workspace: Path,
    *,
    baseline: Baseline | str | None,
    trace_events: Sequence[str],
    log_dir: Path | None = None,
    sandboxing: Sandboxing | None = None,
    pass_env: Sequence[str] = (),
    hidden_changes: HiddenChangesMode = "warn",
) -> Grade:
    """Run every check of `spec` against `workspace`.

    `baseline` is what the agent started from: its sandbox's Baseline, or a commit of the
    workspace's own repository (None: its root commit, see `sandbox.git_changes`; `assay
    score`). `trace_events` are the keys parsed from the agent's stdout. Command logs go
    to `log_dir/<command id>.log` (stderr: `.stderr.log`) when given. Commands run inside
    `sandboxing` (when given) with only the workspace writable, and see no credential-shaped
    variable but those `pass_env` names. Changes hidden from git status are named on the
    changed-files check; `hidden_changes="fail"` adds a failing check naming them
    (`grading.hidden_changes`). Raises ConfigError when a commit baseline is asked
    of a workspace that is not a git repository.
    """
    from assay.workspace import workspace_changes  # lazy: start-up (not loaded with this module)

    if not workspace.is_dir() or workspace.is_symlink():
        # PVYai's runner blocks a task whose workspace is not a directory: nothing to score.
        return _grade_of(blocked_checks(spec, "workspace is not a directory"))
    context = None
    if spec.context.required_files or spec.context.forbidden_files:
        # Before the commands, as PVYai looks: what they write or delete there does not count.
        context = await asyncio.to_thread(context_check, spec, workspace)
    launch = CommandLaunch(workspace, sandboxing, scrubbed_environ(pass_names=pass_env))
    if log_dir is not None:
        checks = await command_checks(spec.commands, launch, log_dir)
    else:  # nobody keeps the logs: they only feed the checks' output
        with tempfile.TemporaryDirectory(prefix="assay-checks-") as scratch:
            checks = await command_checks(spec.commands, launch, Path(scratch))
    # A commit baseline is read by git, in a repository the commands could have written.
    git_reads = baseline is None or isinstance(baseline, str)
    confinement = _git_confinement(sandboxing, workspace) if git_reads else None
    changes = await workspace_changes(workspace, baseline=baseline, confinement=confinement)
    changed = list(changed_files(changes.porcelain))
    unnamed = unnamed_changes(changes.porcelain)
    # PVYai normalises the task's lists again when it scores (the loader did already).
    checks.append(
        _changed_files_check(
            normalize_files(spec.expected_changed_files),
            changed,
            hidden=changes.hidden,
            unnamed=unnamed,
        )
    )
    if spec.forbidden_changed_files:
        forbidden = normalize_files(spec.forbidden_changed_files)
        checks.append(_forbidden_files_check(forbidden, changed))
    if context is not None:
        checks.append(context)
    if spec.required_trace_events:
        required = normalize_strings(spec.required_trace_events)
        checks.append(_trace_check(required, normalize_strings(trace_events)))
    hidden = sorted({*changes.hidden, *unnamed})
    if hidden and hidden_changes == "fail":
        checks.append(hidden_changes_check(hidden))
    return _grade_of(checks)


def _git_confinement(sandboxing: Sandboxing | None, workspace: Path) -> Confinement | None:
    """Where git reads a commit baseline's repository (`assay score`): the verification
    commands could write its config, so git runs in their sandbox, offline."""
    confinement = sandboxing.for_command(workspace, ["git"]) if sandboxing else None
    return dataclasses.replace(confinement, network=False) if confinement else None


def _grade_of(checks: list[Check]) -> Grade:
    """The assay grade of a task's checks: a blocked or errored task is an assay `error`."""
    status = pvyai_status(checks)
    problems = [check for check in checks if check.status != "pass"]
    if status == "blocked":
        reason = checks[0].message if checks else "run blocked"
    else:
        reason = "; ".join(f"{check.id}: {check_summary(check)}" for check in problems)
    return Grade(
        status="pass" if status == "pass" else "fail" if status == "fail" else "error",
        score=1.0 if status == "pass" else 0.0,
        reason=reason,
        checks=checks,
        # blocked: the agent failed, so no check could run; an errored check is the grader's
        error_source="agent" if status == "blocked" else None,
    )


class TaskGrader:
    """The grader of task cases: score_workspace on the attempt's sandbox."""

    def __init__(self, *, options: RunOptions) -> None:
        # Every grader takes the run's options (see assay.runner.kinds); task checks
        # depend on the case alone.
        self.options = options

    async def grade(self, ctx: AttemptContext, output: AgentOutput) -> Grade:
        spec = ctx.case.spec
        if not isinstance(spec, TaskSpec):
            raise TypeError(f"TaskGrader grades task cases, not {ctx.case.kind} case {ctx.case.id}")
        # What PVYai's report says of the agent run, which assay's report.json does not keep.
        record_agent_exit(ctx.artifacts_dir, output.exit_code, workspace=Path(ctx.sandbox.path))
        if output.exit_code not in (0, None):
            return _grade_of(blocked_checks(spec, self._agent_failure(output, output.exit_code)))
        if ctx.sandbox.baseline is None:
            raise SandboxError(f"the sandbox of task case {ctx.case.id} kept no baseline")
        return await score_workspace(
            spec,
            Path(ctx.sandbox.path),
            baseline=ctx.sandbox.baseline,
            trace_events=output.trace_events,
            log_dir=ctx.artifacts_dir / "checks",
            sandboxing=self.options.sandboxing,
            pass_env=self.options.pass_env,
            hidden_changes=self.options.hidden_changes or "warn",
        )

    def _agent_failure(self, output: AgentOutput, exit_code: int) -> str:
        """Why PVYai blocks the task: what the agent said on stderr, else its exit code (as
        Go reports it), and assay's word when one of its sandbox's limits stopped it."""
        stderr = ""
        if output.stderr_path is not None and output.stderr_path.is_file():
            stderr = go_trim_space(read_agent_stream(output.stderr_path)[0])
        reason = stderr or f"agent exited with code {go_exit_code(exit_code)}"
        sandboxing = self.options.sandboxing
        limited = limit_reason(exit_code, sandboxing.limits) if sandboxing else ""
        return f"{reason} ({limited})" if limited else reason


def _changed_files_check(
    expected: Sequence[str],
    changed: Sequence[str],
    *,
    hidden: Sequence[str] = (),
    unnamed: Sequence[str] = (),
) -> Check:
    """Every expected file changed, and nothing else did (PVYai's `unexpectedFiles`).

    `hidden`: new files that only ignore rules the agent wrote hide. They are no change,
    as to PVYai's `git status`, and the verdict stays PVYai's; the check names them
    (`hiddenFiles`, and in the message of a check that passes: a failing one's says what
    failed), so a reviewer sees a conftest.py that rigs the tests behind a `.gitignore`
    that ignores itself. `unnamed`: changed files whose name PVYai's path rule refuses
    (a `:`), no change to PVYai either, named the same way.
    """
    wanted = set(expected)
    missing = sorted(wanted.difference(changed))
    unexpected = sorted(set(changed) - wanted)
    status = "fail" if missing or unexpected else "pass"
    both = sorted({*hidden, *unnamed})
    extra = {"hiddenFiles": both} if both else {}
    return _check(
        "changed_files",
        "Expected changed files",
        "changed_files",
        status,
        _hidden_note(hidden, unnamed) if both and status == "pass" else "",
        expectedFiles=list(expected),
        actualFiles=list(changed),
        missingFiles=missing,
        unexpectedFiles=unexpected,
        **extra,
    )


def _hidden_note(hidden: Sequence[str], unnamed: Sequence[str]) -> str:
    notes = []
    if hidden:
        notes.append(
            f"ignore rules the agent wrote hide {len(hidden)} new file(s) from this check, "
            f"as from git status: {hidden_files_text(hidden)}"
        )
    if unnamed:
        notes.append(
            f"PVYai's path rule (no ':') leaves {len(unnamed)} changed file(s) out of this "
            f"check: {hidden_files_text(unnamed)}"
        )
    return "; ".join(notes)


def _forbidden_files_check(forbidden: Sequence[str], changed: Sequence[str]) -> Check:
    touched = sorted(set(forbidden).intersection(changed))
    return _check(
        "forbidden_changed_files",
        "Forbidden changed files",
        "changed_files",
        "fail" if touched else "pass",
        expectedFiles=list(forbidden),
        actualFiles=list(changed),
        unexpectedFiles=touched,
    )


def _trace_check(required: Sequence[str], events: Sequence[str]) -> Check:
    actual = sorted(set(events))
    missing = sorted(set(required).difference(actual))
    return _check(
        "trace_events",
        "Required agent trace events",
        "trace",
        "fail" if missing else "pass",
        expectedEvents=list(required),
        actualEvents=actual,
        missingEvents=missing,
    )
