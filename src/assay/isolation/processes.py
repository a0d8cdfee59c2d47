"""The one module that starts processes: agents, verification commands, git (through
`isolation/git.py`, its one environment recipe), the bubblewrap probe and the search worker.
tests/test_import_rules.py fails when any other module of assay starts one.

`run_command` runs the commands assay does not trust: agents, verification commands, and
git on a workspace someone else controls (`isolation/git.run_git_bounded`). `run_sync` runs
assay's own short programs (git on a repository assay wrote or the user's own, the bwrap
probe) to completion; `start_piped` starts a helper assay talks to through pipes.

Every command runs as argv (never through a shell) with stdin at /dev/null, in a new
session so that it and everything it spawns form one process group. On timeout the whole
group gets SIGTERM, a short grace, then SIGKILL; when the leader exits, stragglers left
in its group are killed too, so nothing an agent started outlives its attempt.

Output is streamed to files with a byte cap: past the cap assay keeps draining the pipe
(so the child never blocks) but stops writing, and only a small tail stays in memory.
An agent that prints gigabytes therefore costs a few KiB of memory and at most the cap
(64 MiB by default) of disk per stream and attempt. A program that leaves the group
(`setsid`) escapes the kill: it is let go of, not waited for. With an `isolation`
(`assay.isolation.bwrap.Confinement`) the command runs inside bubblewrap instead, whose
PID namespace takes every such escapee with it when the command ends.

A command starts as PVYai's Go starts it, with or without the sandbox (`isolation/launch.py`):
a start that fails is a `StartFailed` with Go's message (`fork/exec ./run.sh: exec format
error`), never an exit code the program could have given, and a signal that ends the
command is its exit code, negated. In the sandbox the exec shim (`isolation/exec_shim.py`)
starts the command and tells both over a pipe, which bwrap's own exit code cannot.

Which variables are credentials is decided in `assay._util.secrets`; the tails a result
carries have every credential value masked (the command's own environment's and assay's).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from assay._util.secrets import longest_secret_bytes, redact
from assay.isolation.launch import (
    LaunchError,
    StartFailed,
    check_program,
    found_path,
    read_report,
    refuse_nul,
    shim_outcome,
)
from assay.upstream.go.text import go_text

__all__ = [
    "CommandResult",
    "CompletedProcess",
    "Confined",
    "LaunchError",
    "StartFailed",
    "SubprocessError",
    "TimeoutExpired",
    "run_command",
    "run_sync",
    "start_piped",
]

CompletedProcess = subprocess.CompletedProcess
"""What `run_sync` returns: argv, returncode, stdout and stderr (bytes)."""
TimeoutExpired = subprocess.TimeoutExpired
SubprocessError = subprocess.SubprocessError


class Confined(Protocol):
    """An OS sandbox a command runs in (`isolation.bwrap.Confinement`)."""

    def wrap(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], status_fd: int = -1
    ) -> tuple[list[str], dict[str, str]]: ...

    @property
    def counted_processes(self) -> int | None: ...


def run_sync(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout_s: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `argv` to its end, output captured, stdin `stdin` (else /dev/null); never raises
    on its exit code. Raises OSError when it cannot start, TimeoutExpired after `timeout_s`."""
    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        check=False,
        timeout=timeout_s,
    )


async def start_piped(argv: Sequence[str], *, env: Mapping[str, str]) -> asyncio.subprocess.Process:
    """Start a helper assay talks to through pipes (stdin, stdout and stderr all piped)."""
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(env),
    )


MiB = 1024 * 1024
DEFAULT_MAX_CAPTURE_BYTES = 64 * MiB
TAIL_BYTES = 4096
MAX_LINE_BYTES = 8 * MiB
"""Longer stdout lines are not passed to the line callback (no trace event is that long)."""
_READ_CHUNK = 64 * 1024
_TERM_GRACE_S = 2.0
_EXIT_POLL_S = 0.1
_COUNT_EVERY_S = 0.02
"""How often a root-started sandbox's processes are counted (a listing: ~20 us)."""
_DRAIN_AFTER_EXIT_S = 5.0
"""How long to wait for EOF after the group is gone (a daemon that escaped it may hold a pipe)."""


@dataclass(frozen=True)
class CommandResult:
    """How a command ended. Tails are the last few KB of each stream, decoded leniently,
    credential values masked."""

    exit_code: int
    """The exit status; negative (-signal) when a signal ended it (e.g. after a timeout),
    in the sandbox too (where `exit 143` stays 143)."""
    timed_out: bool
    duration_s: float
    stdout_tail: str
    stderr_tail: str
    """Empty when stderr was merged into stdout."""
    truncated: bool
    """True when a stream went past the capture cap and its file stops there."""
    stopped: str = ""
    """Why assay stopped the command before it ended ("" when it did not, or timed out)."""


class _Capture:
    """One output stream: a byte-capped file, a bounded tail, and optional line splitting.

    The tail keeps `secret_bytes - 1` bytes more than it shows, so a secret that reaches
    into it is whole when it is masked (`tail`); cut first, its end would survive.
    """

    def __init__(
        self,
        file: BinaryIO,
        *,
        limit: int,
        on_line: Callable[[str], None] | None,
        secret_bytes: int = 0,
    ) -> None:
        self._file = file
        self._limit = limit
        self._written = 0
        self._keep = TAIL_BYTES + max(secret_bytes - 1, 0)
        self._tail = bytearray()
        self._on_line = on_line
        self._line = bytearray()
        self._line_too_long = False
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        room = self._limit - self._written
        if room > 0:
            self._file.write(chunk[:room])
            self._written += min(room, len(chunk))
        if len(chunk) > max(room, 0):
            self.truncated = True
        self._tail += chunk
        if len(self._tail) > 2 * self._keep:
            del self._tail[: -self._keep]
        if self._on_line is not None:
            self._split_lines(chunk)

    def _split_lines(self, chunk: bytes) -> None:
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            piece = chunk[start:end]
            if not self._line_too_long and len(self._line) + len(piece) <= MAX_LINE_BYTES:
                self._emit(bytes(self._line) + piece)
            self._line.clear()
            self._line_too_long = False
            start = end + 1
        rest = chunk[start:]
        if self._line_too_long:
            return
        if len(self._line) + len(rest) > MAX_LINE_BYTES:
            self._line_too_long = True
            self._line.clear()
        else:
            self._line += rest

    def _emit(self, raw: bytes) -> None:
        assert self._on_line is not None
        self._on_line(raw.decode("utf-8", errors="replace").rstrip("\r"))

    def finish(self) -> None:
        if self._on_line is not None and self._line and not self._line_too_long:
            self._emit(bytes(self._line))
        self._line.clear()

    def tail(self, environ: Mapping[str, str]) -> str:
        """The last TAIL_BYTES bytes, decoded, with the credential values of `environ` (and
        assay's own) masked before the cut."""
        window = go_text(bytes(self._tail[-self._keep :]))  # as PVYai's JSON holds output
        masked = redact(window, environ).encode("utf-8")
        # The cut may split a character: its leftover bytes are dropped, not shown as U+FFFD.
        return masked[-TAIL_BYTES:].decode("utf-8", errors="ignore")


async def _pump(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await stream.read(_READ_CHUNK):
        capture.feed(chunk)
    capture.finish()


async def _feed(process: asyncio.subprocess.Process, data: bytes) -> None:
    """Write `data` to the command's stdin and close it; a command that stops reading
    early (it exited, or closed its stdin) is no failure of ours."""
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.close()


def sandbox_processes(bwrap_pid: int) -> int | None:
    """How many processes the bwrap sandbox started as `bwrap_pid` holds (None: it has not
    started, or has ended). Its first child is the init of its PID namespace, whose root
    holds the namespace's own /proc: one directory per process in it, and no other."""
    try:
        children = Path(f"/proc/{bwrap_pid}/task/{bwrap_pid}/children").read_text().split()
        if not children:
            return None
        return sum(entry.isdigit() for entry in os.listdir(f"/proc/{children[0]}/root/proc"))
    except OSError:
        return None


async def _count_processes(pid: int, limit: int, stopped: list[str], capture: _Capture) -> None:
    """Stop the sandbox (`pid`'s group: bwrap, whose namespace dies with it) when it holds
    more than `limit` processes; say so in its output."""
    while True:
        await asyncio.sleep(_COUNT_EVERY_S)
        count = sandbox_processes(pid)
        if count is not None and count > limit:
            stopped.append(f"stopped: more than {limit} processes in the sandbox")
            capture.feed(f"\nassay: {stopped[0]}\n".encode())
            _signal_group(pid, signal.SIGKILL)
            return


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _wait_for_exit(
    process: asyncio.subprocess.Process, exited: asyncio.Task[int], timeout_s: float
) -> bool:
    """Wait up to `timeout_s` for the leader to exit; True when it has.

    `process.wait()` alone is not enough: on Python 3.11 it also waits until every pipe
    is closed, which a child left running in the background can delay forever. The
    return code is set as soon as the leader is reaped, so poll it beside the wait.
    """
    deadline = time.monotonic() + timeout_s
    while process.returncode is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        await asyncio.wait({exited}, timeout=min(remaining, _EXIT_POLL_S))
    return True


async def _start(
    argv: Sequence[str],
    *,
    program: str,
    cwd: Path,
    env: Mapping[str, str],
    stderr: BinaryIO | None,
    keep_fd: int = -1,
    piped_stdin: bool = False,
) -> asyncio.subprocess.Process:
    """Start argv (`program`'s, maybe wrapped in the sandbox) in a new session, stdout (and
    stderr, unless it is None: merged) piped, `keep_fd` inherited. LaunchError when argv is
    too large, or when the sandbox's own program (bwrap) is not there or not executable;
    other OSErrors are the caller's."""
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE if piped_stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if stderr else asyncio.subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(keep_fd,) if keep_fd >= 0 else (),
        )
    except OSError as exc:
        if exc.errno == errno.E2BIG:
            size = sum(len(a) for a in argv) + sum(len(k) + len(v) for k, v in env.items())
            raise LaunchError(program, f"argument list too long ({size} bytes)") from None
        if keep_fd >= 0 and isinstance(exc, FileNotFoundError | PermissionError):
            problem = "not found" if isinstance(exc, FileNotFoundError) else "not executable"
            raise LaunchError(argv[0], problem) from None
        raise


async def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    stdout_path: Path,
    stderr_path: Path | None,
    max_capture_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
    on_stdout_line: Callable[[str], None] | None = None,
    isolation: Confined | None = None,
    stdin: bytes | None = None,
) -> CommandResult:
    """Run argv in its own process group; stream output to files; kill the group on timeout.

    `stderr_path=None` merges stderr into stdout (one interleaved log). Each stream's file
    holds at most `max_capture_bytes`. `on_stdout_line` gets every complete stdout line
    (without the newline) as it arrives. Raises LaunchError when the program cannot start
    (StartFailed when its start failed: see the module docstring). If the caller is
    cancelled, the process group is killed before the cancellation goes on. `isolation`
    runs argv inside that OS sandbox (None: as it is). `stdin` is fed to the command's
    standard input, which is then closed (None: /dev/null).
    """
    if not argv:
        raise LaunchError("", "is empty")
    program = argv[0]
    check_program(program, cwd=cwd, env=env)
    refuse_nul(argv, env)
    own_env = env  # what the command may print: its credentials are masked in the tails
    secret_bytes = longest_secret_bytes(own_env)
    started = time.monotonic()
    with contextlib.ExitStack() as files:
        out_file = files.enter_context(open(stdout_path, "wb"))
        err_file = files.enter_context(open(stderr_path, "wb")) if stderr_path else None
        status_fd = -1  # where the exec shim reports how the command ended (the sandbox)
        if isolation is not None:
            status_fd, shim_fd = os.pipe()
            files.callback(os.close, status_fd)
            try:
                argv, env = isolation.wrap(argv, cwd=cwd, env=env, status_fd=shim_fd)
                process = await _start(
                    argv,
                    program=program,
                    cwd=cwd,
                    env=env,
                    stderr=err_file,
                    keep_fd=shim_fd,
                    piped_stdin=stdin is not None,
                )
            finally:
                os.close(shim_fd)  # the sandbox holds its own copy
        else:
            try:
                process = await _start(
                    argv,
                    program=program,
                    cwd=cwd,
                    env=env,
                    stderr=err_file,
                    piped_stdin=stdin is not None,
                )
            except OSError as exc:
                if exc.errno is None:
                    raise
                # Past the check above, the start itself failed: execve's errno, as Go says it.
                raise StartFailed(program, path=found_path(program, env), errno=exc.errno) from None
        stdout = _Capture(
            out_file, limit=max_capture_bytes, on_line=on_stdout_line, secret_bytes=secret_bytes
        )
        stderr = (
            _Capture(err_file, limit=max_capture_bytes, on_line=None, secret_bytes=secret_bytes)
            if err_file
            else None
        )
        assert process.stdout is not None
        pumps = [asyncio.create_task(_pump(process.stdout, stdout))]
        if stderr is not None:
            assert process.stderr is not None
            pumps.append(asyncio.create_task(_pump(process.stderr, stderr)))
        if stdin is not None:
            pumps.append(asyncio.create_task(_feed(process, stdin)))
        exited = asyncio.create_task(process.wait())
        stopped: list[str] = []
        limit = isolation.counted_processes if isolation is not None else None
        watchers: list[asyncio.Task[None]] = []
        if limit is not None:
            counted = _count_processes(process.pid, limit, stopped, stderr or stdout)
            watchers.append(asyncio.create_task(counted))
        timed_out = False
        try:
            if not await _wait_for_exit(process, exited, timeout_s):
                timed_out = True
                _signal_group(process.pid, signal.SIGTERM)
                await _wait_for_exit(process, exited, _TERM_GRACE_S)
            # SIGKILL whatever is left in the group: after a timeout, a leader that ignored
            # SIGTERM; after a normal exit, children it left running, which would outlive
            # the attempt and keep our pipes open.
            _signal_group(process.pid, signal.SIGKILL)
            await _wait_for_exit(process, exited, _DRAIN_AFTER_EXIT_S)
            done, _ = await asyncio.wait(pumps, timeout=_DRAIN_AFTER_EXIT_S)
            for task in done:
                task.result()
        finally:
            if process.returncode is None:  # cancelled, or a pump's callback raised
                _signal_group(process.pid, signal.SIGKILL)
                await _wait_for_exit(process, exited, _DRAIN_AFTER_EXIT_S)
            pending: list[asyncio.Task[Any]] = [
                t for t in (*pumps, exited, *watchers) if not t.done()
            ]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            if any(task in pending for task in pumps):
                # A process that left the group (setsid) still holds our pipes. asyncio has
                # no public way to let go of them; left alone, the transport is closed by
                # the garbage collector after the event loop is gone, with a traceback.
                process._transport.close()  # type: ignore[attr-defined]
        exit_code = process.returncode if process.returncode is not None else -signal.SIGKILL
        if status_fd >= 0:
            reported = shim_outcome(read_report(status_fd), exit_code, program)
            if isinstance(reported, LaunchError):
                raise reported
            exit_code = exit_code if reported is None else reported
    return CommandResult(
        exit_code=exit_code,
        timed_out=timed_out,
        duration_s=time.monotonic() - started,
        stdout_tail=stdout.tail(own_env),
        stderr_tail=stderr.tail(own_env) if stderr is not None else "",
        truncated=stdout.truncated or (stderr is not None and stderr.truncated),
        stopped=stopped[0] if stopped else "",
    )
