"""Deterministic checks of a PVYai task: commands, changed files, context and trace.

A task passes when every check passes. The workspace's state (changed files, context
files) is read before the verification commands run, so build output they write into
the workspace is never mistaken for the agent's work; in a sandbox, changes are judged
against the baseline assay kept, never against the workspace's `.git` (the agent's).
Commands run one after another, in the suite's order (a test step may need the build
step's output), with an environment stripped of credentials: they run code the agent
wrote.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.paths import PathEscape, resolve_inside, safe_relative
from assay._util.proc import LaunchError, run_command
from assay._util.secrets import redact, redact_file, scrubbed_environ
from assay.errors import ConfigError, SandboxError
from assay.grading.base import Grade
from assay.report.model import Check
from assay.suites.case import TaskSpec, VerificationCommand

if TYPE_CHECKING:
    from assay._util.isolation import Sandboxing
    from assay.agents.base import AgentOutput, AttemptContext
    from assay.options import RunOptions
    from assay.sandbox import Baseline, WorkspaceChanges

__all__ = ["TaskGrader", "score_workspace"]

OUTPUT_TAIL_CHARS = 2000
COMMAND_LOG_CAP_BYTES = 16 * 1024 * 1024
"""A verification command's log (stdout and stderr interleaved) is cut here on disk."""


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
    workspace's own repository (None: HEAD; `assay score`). `trace_events` are the keys
    parsed from the agent's stdout. Command logs go to `log_dir/<command id>.log` when
    given. Commands run inside `sandboxing` (when given) with only the workspace writable,
    and see no credential-shaped variable but those `pass_env` names. Raises ConfigError
    when a commit baseline is asked of a workspace that is not
    a git repository.
    """
    from assay.sandbox import workspace_changes

    changes = await workspace_changes(workspace, baseline=baseline)
    changed = _changed_view(changes, spec)
    state_checks = []
    if spec.expected_changed_files:
        state_checks.append(_changed_files_check(spec.expected_changed_files, changed))
    if spec.forbidden_changed_files:
        state_checks.append(_forbidden_files_check(spec.forbidden_changed_files, changed))
    if spec.context.required_files or spec.context.forbidden_files:
        state_checks.append(await asyncio.to_thread(_context_check, spec, workspace))
    if spec.required_trace_events:
        state_checks.append(_trace_check(spec.required_trace_events, trace_events))

    command_checks: list[Check] = []
    launch = _Launch(workspace, sandboxing, scrubbed_environ(pass_names=pass_env))
    if spec.commands and log_dir is not None:
        command_checks = await _command_checks(spec.commands, launch, log_dir)
    elif spec.commands:  # nobody keeps the logs: they only feed the checks' output tails
        with tempfile.TemporaryDirectory(prefix="assay-checks-") as scratch:
            command_checks = await _command_checks(spec.commands, launch, Path(scratch))

    checks = command_checks + state_checks
    failed = [check for check in checks if check.status != "pass"]
    return Grade(
        status="fail" if failed else "pass",
        score=0.0 if failed else 1.0,
        reason="; ".join(f"{check.id}: {check.message}" for check in failed),
        checks=checks,
    )


class TaskGrader:
    """The grader of task cases: score_workspace on the attempt's sandbox."""

    def __init__(self, *, options: RunOptions) -> None:
        # Every grader takes the run's options (see assay.grading.grader_for); task checks
        # depend on the case alone.
        self.options = options

    async def grade(self, ctx: AttemptContext, output: AgentOutput) -> Grade:
        spec = ctx.case.spec
        if not isinstance(spec, TaskSpec):
            raise TypeError(f"TaskGrader grades task cases, not {ctx.case.kind} case {ctx.case.id}")
        if ctx.sandbox.baseline is None:
            raise SandboxError(f"the sandbox of task case {ctx.case.id} kept no baseline")
        grade = await score_workspace(
            spec,
            Path(ctx.sandbox.path),
            baseline=ctx.sandbox.baseline,
            trace_events=output.trace_events,
            log_dir=ctx.artifacts_dir / "checks",
            sandboxing=self.options.sandboxing,
            pass_env=self.options.pass_env,
        )
        if grade.status == "fail" and output.exit_code not in (0, None):
            # Not a check (the workspace decides), but the first thing to look at.
            grade.reason += f" (the agent exited with code {output.exit_code})"
        return grade


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
    return [
        await _command_check(command, launch, log_dir / f"{_log_name(command.id)}.log")
        for command in commands
    ]


def _log_name(command_id: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in command_id) or "command"


async def _command_check(command: VerificationCommand, launch: _Launch, log: Path) -> Check:
    base = {"id": command.id, "name": command.name, "kind": "command"}
    sandboxing, workspace = launch.sandboxing, launch.workspace
    try:
        result = await run_command(
            command.argv,
            cwd=workspace,
            env=launch.env,
            timeout_s=command.timeout_s,
            stdout_path=log,
            stderr_path=None,
            max_capture_bytes=COMMAND_LOG_CAP_BYTES,
            isolation=sandboxing.for_command(workspace, command.argv) if sandboxing else None,
        )
    except LaunchError as exc:
        return Check.model_validate({**base, "status": "fail", "message": str(exc)})
    redact_file(log)  # the log is a CI artifact: no credential value assay knows reaches it
    if result.timed_out:
        message = f"timed out after {command.timeout_s:g}s"
    elif result.exit_code != 0:
        message = f"exit code {result.exit_code}"
    else:
        message = "exit code 0"
    return Check.model_validate(
        {
            **base,
            "status": "pass" if message == "exit code 0" else "fail",
            "message": message,
            "exitCode": result.exit_code,
            "durationS": round(result.duration_s, 3),
            "outputTail": redact(_tail(result.stdout_tail)),
        }
    )


def _tail(output: str) -> str:
    """The last ~2 KB of a command's output, starting at a line boundary when it can."""
    if len(output) <= OUTPUT_TAIL_CHARS:
        return output
    tail = output[-OUTPUT_TAIL_CHARS:]
    newline = tail.find("\n")
    return tail[newline + 1 :] if 0 <= newline < len(tail) - 1 else tail


def _changed_view(changes: WorkspaceChanges, spec: TaskSpec) -> list[str]:
    """PVYai's changed files, plus every file the suite names that changed although ignored.

    Like `git status`, the view leaves out new files ignore rules match (build output,
    caches); but no ignore rule, least of all one the agent wrote, may hide a file the
    suite expects or forbids.
    """
    named = {
        _normalise(path) for path in (*spec.expected_changed_files, *spec.forbidden_changed_files)
    }
    return sorted({*changes.changed, *named.intersection(changes.ignored)})


def _changed_files_check(expected: Sequence[str], changed: Sequence[str]) -> Check:
    """PVYai semantics: every expected file changed; other changes are reported, not failed."""
    wanted = sorted({_normalise(path) for path in expected})
    missing = [path for path in wanted if path not in changed]
    unexpected = [path for path in changed if path not in wanted]
    return Check.model_validate(
        {
            "id": "changed-files",
            "name": "Changed files",
            "kind": "changed_files",
            "status": "fail" if missing else "pass",
            "message": f"not changed: {', '.join(missing)}" if missing else "all expected changed",
            "expectedFiles": wanted,
            "actualFiles": list(changed),
            "missingFiles": missing,
            "unexpectedFiles": unexpected,
        }
    )


def _forbidden_files_check(forbidden: Sequence[str], changed: Sequence[str]) -> Check:
    rules = sorted({_normalise(path) for path in forbidden})
    touched = [path for path in rules if path in changed]
    return Check.model_validate(
        {
            "id": "forbidden-files",
            "name": "Forbidden files",
            "kind": "forbidden_files",
            "status": "fail" if touched else "pass",
            "message": f"changed: {', '.join(touched)}" if touched else "none changed",
            "forbiddenFiles": rules,
            "actualFiles": list(changed),
            "touchedFiles": touched,
        }
    )


def _context_check(spec: TaskSpec, workspace: Path) -> Check:
    missing: list[str] = []
    present: list[str] = []
    escaping: list[str] = []
    for raw in spec.context.required_files:
        path = _inside(workspace, raw)
        if path is None:
            escaping.append(raw)
        elif not path.exists():
            missing.append(raw)
    for raw in spec.context.forbidden_files:
        path = _inside(workspace, raw)
        if path is None:
            escaping.append(raw)
        elif os.path.lexists(workspace / _normalise(raw)):
            present.append(raw)
    problems = []
    if missing:
        problems.append(f"missing required: {', '.join(missing)}")
    if present:
        problems.append(f"forbidden present: {', '.join(present)}")
    if escaping:
        problems.append(f"outside the workspace: {', '.join(escaping)}")
    return Check.model_validate(
        {
            "id": "context",
            "name": "Context files",
            "kind": "context",
            "status": "fail" if problems else "pass",
            "message": "; ".join(problems) if problems else "required present, forbidden absent",
            "requiredFiles": list(spec.context.required_files),
            "forbiddenFiles": list(spec.context.forbidden_files),
            "missingFiles": missing,
            "presentForbiddenFiles": present,
        }
    )


def _trace_check(required: Sequence[str], events: Sequence[str]) -> Check:
    seen = set(events)
    missing = [key for key in required if key not in seen]
    return Check.model_validate(
        {
            "id": "trace",
            "name": "Trace events",
            "kind": "trace",
            "status": "fail" if missing else "pass",
            "message": f"missing events: {', '.join(missing)}" if missing else "all events seen",
            "requiredEvents": list(required),
            "missingEvents": missing,
        }
    )


def _normalise(path: str) -> str:
    """A suite path as git prints it: forward slashes, no `./`, no trailing slash."""
    try:
        return safe_relative(path).as_posix()
    except PathEscape:
        return path  # never equal to a changed file; the loader rejects such paths anyway


def _inside(workspace: Path, raw: str) -> Path | None:
    """`raw` resolved inside the workspace, or None when it would escape it."""
    try:
        return resolve_inside(workspace, raw)
    except ConfigError:
        return None
