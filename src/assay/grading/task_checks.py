"""Deterministic checks of a PVYai task, with PVYai's verdicts, ids and fields.

The checks, in PVYai's order: one per verification command (id = the command's id), then
`changed_files`, and when the task has them `forbidden_changed_files`, `context_checks`
and `trace_events`. Each check carries PVYai's result fields (`expectedFiles`,
`missingFiles`, `unexpectedFiles`, ...), so `report/pvyai.py` renders it as PVYai would.

PVYai's rules, followed here:
- the commands run first, one after another in the suite's order, with an environment
  stripped of credentials (they run code the agent wrote); the workspace's changed files
  and context files are read **after** them, so files the commands write count;
- a command that cannot start (not found, not executable), or that hits its timeout, is
  `error`; one that exits non-zero is `fail`;
- `changed_files` fails when an expected file did not change **or any other file
  changed**; `forbidden_changed_files` fails when a forbidden file changed;
- when the agent exits non-zero, crashes or cannot start, no check runs: every check is
  `blocked` (`task_results.blocked_checks`), and so is the task.
A task's status is `blocked` if any check is, else `error` if any is, else `fail` if
any is, else `pass` (`task_results.pvyai_status`). assay's case status has no
`blocked`: a blocked or errored task is an assay `error`, never a pass.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util.limits import limit_reason
from assay._util.proc import LaunchError, run_command
from assay._util.secrets import redact, redact_file, scrubbed_environ
from assay.core.checks import Check
from assay.core.paths import PathEscape, safe_relative
from assay.errors import SandboxError
from assay.grading.base import Grade
from assay.grading.task_results import blocked_checks, check_summary, pvyai_status
from assay.grading.task_results import task_check as _check
from assay.suites.case import TaskSpec, VerificationCommand
from assay.suites.pvyai_paths import normalize_files, normalize_strings

if TYPE_CHECKING:
    from assay._util.isolation import Sandboxing
    from assay.options import RunOptions
    from assay.sandbox import Baseline
    from assay.subject import AgentOutput, AttemptContext

__all__ = ["AGENT_RESULT_FILE", "TaskGrader", "score_workspace"]

OUTPUT_TAIL_CHARS = 2000
COMMAND_LOG_CAP_BYTES = 16 * 1024 * 1024
"""A verification command's log (each stream) is cut here on disk."""
AGENT_RESULT_FILE = "agent-result.json"
"""Beside an attempt's transcripts: the agent's exit code and workspace (PVYai's `agent`)."""


async def score_workspace(
    spec: TaskSpec,
    workspace: Path,
    *,
    baseline: Baseline | str | None,
    trace_events: Sequence[str],
    log_dir: Path | None = None,
    sandboxing: Sandboxing | None = None,
    pass_env: Sequence[str] = (),
) -> Grade:
    """Run every check of `spec` against `workspace`.

    `baseline` is what the agent started from: its sandbox's Baseline, or a commit of the
    workspace's own repository (None: its root commit, see `sandbox.git_changes`; `assay
    score`). `trace_events` are the keys parsed from the agent's stdout. Command logs go
    to `log_dir/<command id>.log` (stderr: `.stderr.log`) when given. Commands run inside
    `sandboxing` (when given) with only the workspace writable, and see no credential-shaped
    variable but those `pass_env` names. Raises ConfigError when a commit baseline is asked
    of a workspace that is not a git repository.
    """
    from assay.sandbox import workspace_changes

    if not workspace.is_dir() or workspace.is_symlink():
        # PVYai's runner blocks a task whose workspace is not a directory: nothing to score.
        return _grade_of(blocked_checks(spec, "workspace is not a directory", trace_events))
    launch = _Launch(workspace, sandboxing, scrubbed_environ(pass_names=pass_env))
    if log_dir is not None:
        checks = await _command_checks(spec.commands, launch, log_dir)
    else:  # nobody keeps the logs: they only feed the checks' output
        with tempfile.TemporaryDirectory(prefix="assay-checks-") as scratch:
            checks = await _command_checks(spec.commands, launch, Path(scratch))
    changes = await workspace_changes(workspace, baseline=baseline)
    changed = list(normalize_files(changes.changed, from_disk=True))
    # PVYai normalises the task's lists again when it scores (the loader did already).
    checks.append(_changed_files_check(normalize_files(spec.expected_changed_files), changed))
    if spec.forbidden_changed_files:
        forbidden = normalize_files(spec.forbidden_changed_files)
        checks.append(_forbidden_files_check(forbidden, changed))
    if spec.context.required_files or spec.context.forbidden_files:
        checks.append(await asyncio.to_thread(_context_check, spec, workspace))
    if spec.required_trace_events:
        required = normalize_strings(spec.required_trace_events)
        checks.append(_trace_check(required, normalize_strings(trace_events)))
    return _grade_of(checks)


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
        _write_agent_result(ctx, output)
        if output.exit_code not in (0, None):
            reason = f"agent exited with code {output.exit_code}"
            sandboxing = self.options.sandboxing
            limited = limit_reason(output.exit_code, sandboxing.limits) if sandboxing else ""
            reason += f" ({limited})" if limited else ""
            return _grade_of(blocked_checks(spec, reason, output.trace_events))
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
        )


def _write_agent_result(ctx: AttemptContext, output: AgentOutput) -> None:
    """What PVYai's report says of the agent run, which assay's report.json does not keep."""
    ctx.artifacts_dir.mkdir(parents=True, exist_ok=True)
    record = {"exitCode": output.exit_code, "workspacePath": str(ctx.sandbox.path)}
    (ctx.artifacts_dir / AGENT_RESULT_FILE).write_text(json.dumps(record), encoding="utf-8")


@dataclass(frozen=True)
class _Launch:
    """Where and how verification commands run: the workspace, its sandbox, their env."""

    workspace: Path
    sandboxing: Sandboxing | None
    env: dict[str, str]


async def _command_checks(
    commands: Sequence[VerificationCommand], launch: _Launch, log_dir: Path
) -> list[Check]:
    """One check per verification command, in order; each logs to `log_dir/<id>.log`."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return [await _command_check(command, launch, log_dir) for command in commands]


def _log_name(command_id: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in command_id) or "command"


async def _command_check(command: VerificationCommand, launch: _Launch, log_dir: Path) -> Check:
    base = {"command": list(command.argv)}
    sandboxing, workspace = launch.sandboxing, launch.workspace
    name = _log_name(command.id)
    # PVYai trims each argv element before it runs the command.
    argv = [element.strip() for element in command.argv]
    try:
        result = await run_command(
            argv,
            cwd=workspace,
            env=launch.env,
            timeout_s=command.timeout_s,
            stdout_path=log_dir / f"{name}.log",
            stderr_path=log_dir / f"{name}.stderr.log",
            max_capture_bytes=COMMAND_LOG_CAP_BYTES,
            isolation=sandboxing.for_command(workspace, argv) if sandboxing else None,
        )
    except LaunchError as exc:
        return _check(command.id, command.name, "command", "error", str(exc), exitCode=-1, **base)
    for log in (log_dir / f"{name}.log", log_dir / f"{name}.stderr.log"):
        redact_file(log)  # the logs are CI artifacts: no credential value assay knows reaches them
    stdout, stderr = redact(result.stdout_tail), redact(result.stderr_tail)
    fields: dict[str, Any] = {
        **base,
        "exitCode": result.exit_code,
        "stdout": stdout,
        "stderr": stderr,
        "durationS": round(result.duration_s, 3),
        "outputTail": _tail(stdout + stderr),
    }
    if result.timed_out:
        message = f"timed out after {command.timeout_s:g}s"
        return _check(command.id, command.name, "command", "error", message, **fields)
    status = "pass" if result.exit_code == 0 else "fail"
    limited = result.stopped or (
        limit_reason(result.exit_code, sandboxing.limits) if sandboxing else ""
    )
    return _check(command.id, command.name, "command", status, limited, **fields)


def _tail(output: str) -> str:
    """The last ~2 KB of a command's output, starting at a line boundary when it can."""
    if len(output) <= OUTPUT_TAIL_CHARS:
        return output
    tail = output[-OUTPUT_TAIL_CHARS:]
    newline = tail.find("\n")
    return tail[newline + 1 :] if 0 <= newline < len(tail) - 1 else tail


def _changed_files_check(expected: Sequence[str], changed: Sequence[str]) -> Check:
    """Every expected file changed, and nothing else did (PVYai's `unexpectedFiles`)."""
    wanted = set(expected)
    missing = sorted(wanted.difference(changed))
    unexpected = sorted(set(changed) - wanted)
    return _check(
        "changed_files",
        "Expected changed files",
        "changed_files",
        "fail" if missing or unexpected else "pass",
        expectedFiles=list(expected),
        actualFiles=list(changed),
        missingFiles=missing,
        unexpectedFiles=unexpected,
    )


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


def _context_check(spec: TaskSpec, workspace: Path) -> Check:
    """Required files exist and forbidden files do not, after the commands ran.

    Existence follows symlinks (a dangling link is no file), but never out of the
    workspace: a path that would leave it counts as missing, and as present when forbidden.
    """
    required = normalize_files(spec.context.required_files)
    forbidden = normalize_files(spec.context.forbidden_files)
    missing = [path for path in required if not _exists(workspace, path)]
    present = [path for path in forbidden if _exists(workspace, path, escaped=True)]
    return _check(
        "context_checks",
        "Context quality checks",
        "context",
        "fail" if missing or present else "pass",
        expectedFiles=list(required),
        missingFiles=missing,
        unexpectedFiles=present,
    )


def _exists(workspace: Path, raw: str, *, escaped: bool = False) -> bool:
    try:
        relative = safe_relative(raw)
    except PathEscape:
        return escaped
    real_root = os.path.realpath(workspace)
    target = os.path.realpath(os.path.join(real_root, relative))
    if os.path.commonpath([real_root, target]) != real_root:
        return escaped
    return os.path.exists(target)


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
