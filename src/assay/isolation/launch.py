"""Whether a program starts, and how its end is told: as PVYai's Go starts it.

Go's `exec` starts a program with execve of the path its PATH look-up found (a name with
a `/` as it is). A start that fails is an error, not an exit code: `fork/exec PATH: exec
format error` for a script without `#!` (nothing runs it under /bin/sh), `no such file
or directory` for a missing interpreter, `permission denied`, and `invalid argument` for
a NUL byte in an argument or variable (`StartFailed`). assay checks first, on its own,
that the program is there and executable (`check_program`), and says so in its own words
(`command not found: x`): that is the user's mistake, found before anything starts. A
bare name that a relative PATH entry finds first is refused there in Go's words, as Go
1.19 on refuses it: the program would be whatever the working directory holds.

`run_command` starts a program as it is with Python's subprocess, which has no shell
fallback either; in the OS sandbox the exec shim (`exec_shim.py`) does, and reports how
the program ended over a pipe (`read_report`, `shim_outcome`).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.isolation.exec_shim import (
    CANNOT_EXEC,
    DEFAULT_PATH,
    EXITED,
    FAILED_START_CODE,
    NOT_FOUND,
    look_path,
)
from assay.upstream.go.fmt import go_errno_text, go_quote

__all__ = [
    "FoundRelative",
    "LaunchError",
    "StartFailed",
    "check_program",
    "found_path",
    "read_report",
    "refuse_nul",
    "shim_outcome",
]

_STATUS_BYTES = 16 * 1024
"""More than the exec shim's one record (which names at most a path) ever takes."""


class LaunchError(Exception):
    """The program could not be started at all: missing, not executable, or argv too large
    (assay's own check, before anything starts), or its start failed (`StartFailed`)."""

    in_gos_words = False
    """The message is the one Go's `exec` gives (PVYai's reason as it is), not assay's."""

    def __init__(self, program: str, problem: str, *, hint: str = "", message: str = "") -> None:
        super().__init__(message or f"command {problem}: {program}{hint}")
        self.program = program
        self.problem = problem
        """`not found`, `not executable`, or another short description."""


class FoundRelative(LaunchError):
    """A bare name that a relative PATH entry (`.`, an empty one, `bin`) found first: Go
    (1.19 on) will not run it, since the program would be whatever the working directory
    holds (`exec.ErrDot`)."""

    in_gos_words = True

    def __init__(self, program: str) -> None:
        super().__init__(
            program,
            "found relative to the current directory",
            message=(
                f"exec: {go_quote(program)}: cannot run executable found relative to current "
                "directory"
            ),
        )


class StartFailed(LaunchError):
    """The start itself failed with `errno`: execve refused the program (a script without
    `#!` or another file that is no program, a missing interpreter, no permission), or an
    argument held a NUL byte. Worded as Go's `exec` words it: `fork/exec PATH: TEXT`, PATH
    as the program was found (a bare name's PATH entry joined to it)."""

    in_gos_words = True

    def __init__(self, program: str, *, path: str, errno: int) -> None:
        text = go_errno_text(errno)
        super().__init__(program, text, message=f"fork/exec {path}: {text}")
        self.path = path
        self.errno = errno


def found_path(program: str, env: Mapping[str, str]) -> str:
    """The path Go's `exec` starts for `program`: as given with a `/`, else its PATH match."""
    return _look_path(program, env) or program


def _look_path(program: str, env: Mapping[str, str]) -> str | None:
    """Where `program` is found on `env`'s PATH, by the exec shim's own rule (Go's
    `exec.LookPath`), so what is checked here is what the sandbox starts."""
    search = env.get("PATH")
    found = look_path(os.fsencode(program), None if search is None else os.fsencode(search))
    return None if found is None else os.fsdecode(found)


def refuse_nul(argv: Sequence[str], env: Mapping[str, str]) -> None:
    """Go's start refuses a NUL byte in any argument or variable (EINVAL) before anything
    runs; Python's would raise ValueError, an error of assay's own."""
    strings = (*argv, *env.keys(), *env.values())
    if any("\0" in string for string in strings):
        raise StartFailed(argv[0], path=found_path(argv[0], env), errno=errno.EINVAL)


def check_program(program: str, *, cwd: Path, env: Mapping[str, str]) -> None:
    """Fail early, with a precise reason, when argv[0] cannot be executed."""
    if "/" in program:
        path = Path(program) if os.path.isabs(program) else cwd / program
        if not path.exists():
            where = "" if os.path.isabs(program) else f" (relative to the working directory {cwd})"
            raise LaunchError(program, "not found", hint=where)
        if path.is_dir() or not os.access(path, os.X_OK):
            raise LaunchError(program, "not executable")
        return
    found = _look_path(program, env)
    if found is not None:
        if not os.path.isabs(found):
            raise FoundRelative(program)
        return
    for directory in env.get("PATH", DEFAULT_PATH.decode()).split(os.pathsep):
        if directory and (Path(directory) / program).is_file():
            raise LaunchError(program, "not executable")
    raise LaunchError(program, "not found")


def read_report(fd: int) -> bytes:
    """What the exec shim wrote to the status pipe (read once the sandbox has ended)."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, _STATUS_BYTES)
    except BlockingIOError:
        return b""


def shim_outcome(record: bytes, returncode: int, program: str) -> int | LaunchError | None:
    """How the confined command ended, from the exec shim's record: its exit code (-signal
    for a signal), or the LaunchError of a start that failed; None when there is no
    record that bwrap's own exit code (`returncode`) agrees with (bwrap died, or was
    killed first): bwrap's code is all there is then."""
    tag, _, rest = record.partition(b" ")
    if tag == EXITED and rest.isdigit():
        try:
            code = os.waitstatus_to_exitcode(int(rest))
        except ValueError:
            return None
        as_bwrap_reports = 128 - code if code < 0 else code
        return code if returncode == as_bwrap_reports else None
    if returncode != FAILED_START_CODE:
        return None
    if tag == CANNOT_EXEC:
        number, _, path = rest.partition(b" ")
        if number.isdigit() and path:
            return StartFailed(program, path=os.fsdecode(path), errno=int(number))
    if record == NOT_FOUND:
        return LaunchError(program, "not found", hint=" (on the PATH inside the OS sandbox)")
    return None
