"""The program every bwrap sandbox starts first, which starts the confined program as Go does.

bwrap (and `prlimit` before it) starts a program with execvp: a script without `#!` runs
under /bin/sh, and a missing interpreter or a file that is no program ends as exit 127,
an exit code the program could have given itself. bwrap also reports a program a signal
ended as 128 + the signal, which `exit 143` gives too. PVYai's Go starts it with execve
of the path its own PATH look-up found, and tells a start that failed (`fork/exec
./run.sh: exec format error`) and a signal (exit code -1) from any exit code.

So `Confinement.wrap` runs this file's source as `python -I -S -c SOURCE STATUS_FD LIMITS
RELAY PROGRAM ARGS...`. It sets the limits (LIMITS `nproc:fsize:core`, or empty where
`prlimit` already has), finds PROGRAM as Go's `exec.LookPath` does (a name with a `/` is
taken as it is, else the first PATH entry holding an executable file of that name), and
starts it with fork and execve, with no shell behind it (and not posix_spawn: glibc's
leaves its own two internal signals ignored in the program). It then waits for it and
writes one record to STATUS_FD, a pipe `run_command` reads once the sandbox has ended
(the write end is close-on-exec here: the program never holds it, and this process is
made non-dumpable first, so the program, of the same user, cannot reopen it through
`/proc/$PPID/fd` to forge a record or fill the pipe):

- `exit STATUS`: the program ended with that wait status; this exits as bwrap would
  report the program (its code, or 128 + the signal), which `run_command` checks the
  record against;
- `exec ERRNO PATH`: execve refused PATH (`ENOEXEC`, `ENOENT` for a missing interpreter,
  `EACCES`); exits 127;
- `lookup`: no PATH entry holds the program in the sandbox; exits 127.

The program gets its own process group (as it had, the session's leader, under bwrap
alone), so a `kill 0` of its own does not reach this waiter; the environment is the one
the sandbox was started with (read back from /proc: the interpreter adds `LC_CTYPE` to its
own when the locale is C), and SIGPIPE and SIGXFSZ are back at their defaults (the
interpreter ignores both, and an ignored signal stays ignored across execve).

RELAY is empty, or `PORT:SOCKET` when the sandbox has its own network namespace but its
program must reach assay's model bridge (`assay.bridge`): before the program starts, this
process listens on 127.0.0.1:PORT (the `lo` bwrap brings up) and, while the program runs,
forwards each connection to the Unix socket SOCKET (bound into the sandbox), one thread
per direction. Nothing else outside the sandbox is reachable. The listener is made before
the fork, so the program never finds the port closed, and is close-on-exec, as is the
socket of every connection: the program holds none of them.

Only modules the interpreter has loaded before it runs a line are imported (but `socket`
and `threading` when there is a relay to run) (`resource`,
when there are limits to set, and `_ctypes`, for `prctl`, are small extensions: `_ctypes`
adds 2-3 ms, where `ctypes` added 10), so the start costs about one interpreter start-up:
bench/bench_isolation.py measures it.
"""

from __future__ import annotations

import posix
import sys
from _signal import SIG_DFL, SIGPIPE, SIGXFSZ, signal

EXITED = b"exit"
CANNOT_EXEC = b"exec"
NOT_FOUND = b"lookup"
FAILED_START_CODE = 127
_PR_SET_DUMPABLE = 4
_RTLD_NOW = 2
DEFAULT_PATH = b"/bin:/usr/bin"
"""Where a name is looked up when PATH is not set (Python's `os.defpath`, as the check
`run_command` makes first)."""


def _start_environ() -> dict[bytes, bytes]:
    with open("/proc/self/environ", "rb") as stream:
        entries = stream.read().split(b"\0")
    environ = {}
    for entry in entries:
        name, equals, value = entry.partition(b"=")
        if equals:
            environ[name] = value
    return environ


def _is_executable(path: bytes) -> bool:
    """Go's `findExecutable`: a file that is not a directory, executable for this user."""
    try:
        mode = posix.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return mode & 0o170000 != 0o040000 and posix.access(path, posix.X_OK)


def look_path(name: bytes, search: bytes | None) -> bytes | None:
    """Where Go's `exec.LookPath` finds `name` on `search` (a PATH; None: unset)."""
    if b"/" in name:
        return name
    for directory in (DEFAULT_PATH if search is None else search).split(b":"):
        path = (directory or b".").rstrip(b"/") + b"/" + name
        if _is_executable(path):
            return path
    return None


def _set_limits(word: str) -> None:
    # lazy: start-up of every confined command (this file is the sandbox's first program)
    import resource

    processes, file_size, core_size = (int(value) for value in word.split(":"))
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
    resource.setrlimit(resource.RLIMIT_CORE, (core_size, core_size))


def _undumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0), before the program starts: a program of the same user
    can then not open this process's /proc/PID/fd (nor its mem or environ), so it cannot
    reopen the status pipe to forge or flood the record. The program is dumpable again
    (execve resets it). Through `_ctypes` alone: `ctypes` would double the start's cost."""
    try:
        # lazy: start-up (the shim, run on `python -I -S`, imports what it uses when it uses it)
        import _ctypes
    except ImportError:  # an interpreter built without it: the record is unguarded
        return
    libc = _ctypes.dlopen(None, _RTLD_NOW)  # type: ignore[arg-type]  # None: the program
    _ctypes.call_function(_ctypes.dlsym(libc, "prctl"), (_PR_SET_DUMPABLE, 0, 0, 0, 0))


def _report(fd: int, record: bytes) -> None:
    if fd >= 0:
        posix.write(fd, record)


def _start(path: bytes, args: list[bytes], environ: dict[bytes, bytes]) -> tuple[int, int]:
    """(pid, 0) of the started program, or (pid, errno) of the child execve refused it
    (told over a close-on-exec pipe: nothing comes through when execve succeeds)."""
    told, tell = posix.pipe()  # both close-on-exec
    pid = posix.fork()
    if pid == 0:
        try:
            posix.setpgid(0, 0)
            posix.execve(path, args, environ)
        except OSError as exc:
            posix.write(tell, b"%d" % (exc.errno or 0))
        finally:
            posix._exit(FAILED_START_CODE)
    posix.close(tell)
    number = posix.read(told, 64)
    posix.close(told)
    return pid, int(number or 0)


def _relay_listener(relay: str) -> tuple[object, str]:
    """The listening socket on 127.0.0.1:PORT of `relay` (`PORT:SOCKET`), and SOCKET."""
    # lazy: start-up (only a sandbox that relays to the bridge needs sockets)
    import socket

    port, _, path = relay.partition(":")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(64)
    return listener, path


def _pump(source: object, target: object) -> None:
    """Copy `source` to `target` until either ends, then end `target`'s writing half."""
    try:
        while True:
            chunk = source.recv(65536)  # type: ignore[attr-defined]
            if not chunk:
                break
            target.sendall(chunk)  # type: ignore[attr-defined]
    except OSError:
        pass
    try:
        target.shutdown(1)  # type: ignore[attr-defined]  # SHUT_WR: the peer sees the end
    except OSError:
        pass


def _serve_relay(listener: object, path: str) -> None:
    """Accept forever; each connection goes to the Unix socket at `path`."""
    # lazy: start-up (only a sandbox that relays to the bridge needs sockets and threads)
    import socket
    import threading

    while True:
        try:
            inside, _ = listener.accept()  # type: ignore[attr-defined]
        except OSError:
            return
        outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            outside.connect(path)
        except OSError:
            inside.close()
            outside.close()
            continue
        for source, target in ((inside, outside), (outside, inside)):
            threading.Thread(target=_pump, args=(source, target), daemon=True).start()


def _start_relay(listener: object, path: str) -> None:
    # lazy: start-up (only a sandbox that relays to the bridge needs threads)
    import threading

    threading.Thread(target=_serve_relay, args=(listener, path), daemon=True).start()


def main(argv: list[str]) -> int:
    status_fd, limits, relay, *command = argv
    fd = int(status_fd)
    if fd >= 0:
        posix.set_inheritable(fd, False)
    if limits:
        _set_limits(limits)
    for ignored in (SIGPIPE, SIGXFSZ):
        signal(ignored, SIG_DFL)
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    args = [arg.encode(encoding, errors) for arg in command]
    environ = _start_environ()
    _undumpable()
    path = look_path(args[0], environ.get(b"PATH"))
    if path is None:
        _report(fd, NOT_FOUND)
        return FAILED_START_CODE
    listener = _relay_listener(relay) if relay else None
    pid, refused = _start(path, args, environ)
    if listener is not None:
        _start_relay(*listener)
    _, status = posix.waitpid(pid, 0)
    if refused:
        _report(fd, b"%s %d %s" % (CANNOT_EXEC, refused, path))
        return FAILED_START_CODE
    _report(fd, b"%s %d" % (EXITED, status))
    if posix.WIFSIGNALED(status):
        return 128 + posix.WTERMSIG(status)
    return posix.WEXITSTATUS(status)


def shim_source() -> str:
    """This file's code, which the sandbox runs (`python -I -S -c`), without its docstrings
    and comments: every process listing in the sandbox shows it."""
    # lazy: start-up of every confined command (this file is the sandbox's first program)
    import ast  # on the host only

    with open(__file__, encoding="utf-8") as stream:
        tree = ast.parse(stream.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef):
            kept = [statement for statement in node.body if not _is_text(statement)]
            node.body = kept or [ast.Pass()]
    return ast.unparse(tree)


def _is_text(statement: object) -> bool:
    # lazy: start-up of every confined command (this file is the sandbox's first program)
    import ast

    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


if __name__ == "__main__":
    posix._exit(main(sys.argv[1:]))
