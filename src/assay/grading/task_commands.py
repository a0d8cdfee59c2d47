"""Running a PVYai task's verification commands: one `command` check each, with PVYai's
fields (`command`, `exitCode`, `stdout`, `stderr`, `message`) and assay's own beside them
(`durationS`, `outputTail`, `timedOutAfterS`).

As PVYai runs them: in the suite's order, in the workspace, without a shell, each argv
element trimmed and the blank ones left out. One that cannot start is `error`; one that
exits non-zero is `fail`, and so is one its timeout kills (Go reports exit code -1 and
no message) or a signal ends (exit code -1 too). One whose start failed says why in
Go's words (`fork/exec ./check.sh: exec format error`: no /bin/sh runs a script without
`#!`; a NUL byte in an argument is `invalid argument`). As assay runs them on top:
inside the run's OS sandbox when there is one, in their own process group, with the
environment `CommandLaunch` gives (assay's has no credentials), their logs masked of
every credential value assay knows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util.secrets import redact_file
from assay.core.checks import Check
from assay.grading.task_results import task_check as _check
from assay.isolation.limits import limit_reason
from assay.isolation.processes import LaunchError, run_command
from assay.suites.case import VerificationCommand
from assay.upstream.pvyai.paths import go_trim_space

if TYPE_CHECKING:
    from assay.isolation.bwrap import Sandboxing

__all__ = ["COMMAND_LOG_CAP_BYTES", "CommandLaunch", "command_checks"]

OUTPUT_TAIL_CHARS = 2000
COMMAND_LOG_CAP_BYTES = 16 * 1024 * 1024
"""A verification command's log (each stream) is cut here on disk."""


@dataclass(frozen=True)
class CommandLaunch:
    """Where and how verification commands run: the workspace, its sandbox, their env."""

    workspace: Path
    sandboxing: Sandboxing | None
    env: dict[str, str]


async def command_checks(
    commands: Sequence[VerificationCommand], launch: CommandLaunch, log_dir: Path
) -> list[Check]:
    """One check per verification command, in order; each logs to `log_dir/<id>.log`."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return [await _command_check(command, launch, log_dir) for command in commands]


def _log_name(command_id: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in command_id) or "command"


async def _command_check(
    command: VerificationCommand, launch: CommandLaunch, log_dir: Path
) -> Check:
    base = {"command": list(command.argv)}
    sandboxing, workspace = launch.sandboxing, launch.workspace
    name = _log_name(command.id)
    # PVYai trims each argv element, and leaves out the blank ones, before it runs the command.
    argv = [part for element in command.argv if (part := go_trim_space(element))]
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
    stdout, stderr = result.stdout_tail, result.stderr_tail  # masked before they were cut
    fields: dict[str, Any] = {
        **base,
        "exitCode": result.exit_code,
        "stdout": stdout,
        "stderr": stderr,
        "durationS": round(result.duration_s, 3),
        "outputTail": _tail(stdout + stderr),
    }
    if result.timed_out:
        # PVYai's deadline kills the command, which Go reports as exit code -1: a plain
        # failure, no message. `timedOutAfterS` (not PVYai's) says why in assay's reports.
        fields.update(exitCode=-1, timedOutAfterS=command.timeout_s)
        return _check(command.id, command.name, "command", "fail", **fields)
    status = "pass" if result.exit_code == 0 else "fail"
    limited = result.stopped
    if not limited and sandboxing is not None and sandboxing.mode == "bwrap":
        limited = limit_reason(result.exit_code, sandboxing.limits)  # unconfined: no limit set
    return _check(command.id, command.name, "command", status, limited, **fields)


def _tail(output: str) -> str:
    """The last ~2 KB of a command's output, starting at a line boundary when it can."""
    if len(output) <= OUTPUT_TAIL_CHARS:
        return output
    tail = output[-OUTPUT_TAIL_CHARS:]
    newline = tail.find("\n")
    return tail[newline + 1 :] if 0 <= newline < len(tail) - 1 else tail
