"""The OS sandbox around every program assay runs but does not trust (bubblewrap).

A hostile pull request controls the agent command, the verification commands and the
fixtures they read. Without a sandbox they run as assay's own user, in assay's process
tree, on assay's filesystem: they can read `/proc/<assay>/environ` (the CI tokens), write a
`.pth` into site-packages, rewrite the suite or the report, and leave a daemon behind.
With `bwrap` every such program gets:

- new PID, IPC and UTS namespaces and a fresh `/proc`: assay and every other process of the
  host are invisible, and when the program's first process ends the kernel kills everything
  left in its namespace (a double-forked daemon included); `--die-with-parent` does the same
  when assay itself dies;
- the host filesystem read-only, with `/tmp`, `$HOME`, `/run`, the suite checkouts, the
  report directory, the run history and a baseline report's directory replaced by empty
  tmpfs mounts (never mounted; read-only but for `/tmp` and HOME), and only the case's own
  directory writable; `HOME` and `TMPDIR` point into those private tmpfs mounts; of HOME
  only the toolchains PATH names stay, read-only (`isolation/toolchains.py`); of a
  masked checkout a program sees only the files its argv may show (`isolation/exposure.py`:
  tracked files, never `.git`, a suite file or a fixture);
- a minimal `/dev`, no capabilities, `no_new_privs` (bwrap always sets it), a new session
  (no terminal to inject keystrokes into), and optionally no network (`--unshare-net`),
  or none but a relay to the model bridge (`BridgeRelay`: a bridged preset CLI's default);
- of `/sys` only what runtimes read to size themselves (CPUs, NUMA nodes, huge pages): no
  network interfaces and their MAC addresses, block devices, DMI/firmware tables, kernel
  modules or the host's cgroup tree (which lists every process of the host);
- resource limits (`assay.isolation.limits`): a bounded number of processes, a bounded size
  per file, no core dumps, and size-capped tmpfs mounts, so a fork bomb or a runaway
  writer ends its own case, not the machine;
- a start as Go's (`assay.isolation.exec_shim`, the sandbox's first program after `prlimit`):
  execve of the path a PATH look-up found, no /bin/sh behind a script without `#!`, a
  start that failed told apart from an exit code, and a signal from `exit 128+N`.

`none` runs programs as they are (process group and timeouts only): assay says so loudly.
`auto` probes bwrap once per run and falls back to `none` with that warning.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from assay.errors import ConfigError
from assay.isolation.exec_shim import shim_source
from assay.isolation.exposure import ALWAYS_MASKED, Exposure, ShownProgram, TrackedFiles
from assay.isolation.limits import (
    DEFAULT_LIMITS,
    UNLIMITED,
    Limits,
    find_prlimit,
    limit_argv,
    limit_word,
    limits_from_environ,
)
from assay.isolation.processes import SubprocessError, run_sync
from assay.isolation.toolchains import home_toolchains

__all__ = [
    "ISOLATION_MODES",
    "BridgeRelay",
    "Confinement",
    "IsolationMode",
    "Sandboxing",
    "checkout_root",
    "harden_process",
    "probe_bwrap",
    "project_checkouts",
    "resolve_sandboxing",
]

IsolationMode = Literal["auto", "bwrap", "none"]
ISOLATION_MODES: tuple[IsolationMode, ...] = ("auto", "bwrap", "none")
_PROBE_TIMEOUT_S = 10.0
_NEVER_MASKED = frozenset({"/", "/usr", "/bin", "/lib", "/lib64", "/etc", "/sbin", "/dev", "/proc"})
"""Masking any of these would leave nothing to run; a suite living there is not hidden."""
_RESOLVER_DIR = "/run/systemd/resolve"
"""Where /etc/resolv.conf points on Ubuntu: kept readable when /run is masked, for DNS."""
_SYS_KEPT = (
    "/sys/devices/system/cpu",
    "/sys/devices/system/node",
    "/sys/kernel/mm/transparent_hugepage",
)
"""All of /sys a confined program sees: glibc counts CPUs from the first (Python's
os.cpu_count, nproc, make -j), libnuma and the JVM read the second, Go and jemalloc the
third. Everything else (interfaces, devices, DMI, cgroups, modules) is an empty tmpfs."""
_MASK_SIZE = 1024 * 1024
"""The cap of the tmpfs over a masked directory other than HOME and /tmp (a suite checkout,
the report dir, /run, /sys), which is read-only besides: it only holds mount points."""
LAUNCHER_PYTHON = os.path.realpath(sys.executable)
"""The interpreter that runs the exec shim in every sandbox: assay's own (its base, not a
virtualenv's link), which every real confinement shows (`resolve_sandboxing`)."""
UNSANDBOXED_WARNING = (
    "agents and verification commands run WITHOUT an OS sandbox, and the suite's own Python "
    "graders run inside assay's process: they can read this process's files, its "
    "environment's tokens and the host as assay's own user"
)


@dataclass(frozen=True)
class BridgeRelay:
    """The model bridge's one door into a sandbox with no network: its Unix socket, whose
    private directory is bound into the sandbox read-only, and the port the exec shim
    listens on at 127.0.0.1 inside, forwarding each connection to it (`exec_shim`)."""

    socket: Path
    port: int

    @property
    def word(self) -> str:
        """The exec shim's RELAY argument: `PORT:SOCKET`."""
        return f"{self.port}:{self.socket}"


@dataclass(frozen=True)
class Confinement:
    """How one program is confined: what it may write, what it must not see, its network."""

    bwrap: str
    writable: tuple[Path, ...]
    """Directories bound read-write at their own path (the case's sandbox or workspace)."""
    masked: tuple[Path, ...]
    """Directories replaced by an empty tmpfs (suite checkouts, the report dir, HOME)."""
    exposed: tuple[Path, ...] = ()
    """Paths under a masked directory that stay readable (the interpreter, the program)."""
    hidden: tuple[Path, ...] = ()
    """Paths covered where they are, after the binds: a directory by an empty read-only
    tmpfs, a file by a device node the nodev mount refuses to open (a baseline report whose
    directory the run needs, what git does not track in an exposed program directory)."""
    links: tuple[tuple[Path, Path], ...] = ()
    """(link, target) symlinks made inside masked directories (`ShownProgram.links`)."""
    network: bool = True
    home: str = "/tmp/home"
    limits: Limits = DEFAULT_LIMITS
    prlimit: str | None = None
    """util-linux `prlimit`, which sets the limits inside the sandbox (None: the exec shim)."""
    python: str = LAUNCHER_PYTHON
    """The interpreter of the exec shim (`LAUNCHER_PYTHON`)."""
    relay: BridgeRelay | None = None
    """The model bridge the program reaches at 127.0.0.1 with no network (None: none)."""

    @property
    def counted_processes(self) -> int | None:
        """The process limit `run_command` must enforce itself (None: the kernel does).

        The kernel never applies RLIMIT_NPROC to root, so a sandbox started by root has its
        processes counted from outside instead, and is stopped when it passes the limit."""
        if os.geteuid() != 0 or self.limits.max_processes == UNLIMITED:
            return None
        return self.limits.max_processes

    def wrap(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], status_fd: int = -1
    ) -> tuple[list[str], dict[str, str]]:
        """The bwrap argv that runs `argv` confined in `cwd`, and its environment.

        The exec shim starts `argv` and writes how it ended to `status_fd`, an inherited
        file descriptor (-1: nowhere); `run_command` reads it (`exec_shim`)."""
        args = [
            self.bwrap,
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--cap-drop",
            "ALL",
        ]
        if os.geteuid() != 0:
            # Its own user namespace gives the sandbox its own process count: RLIMIT_NPROC
            # is counted per user and namespace, so the limit bounds this sandbox alone,
            # not every process of assay's user. (bwrap without setuid does this anyway.)
            args.append("--unshare-user-try")
        if not self.network or self.relay is not None:
            args.append("--unshare-net")
        tmp_size = str(self.limits.tmp_size)
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--size", tmp_size, "--tmpfs", "/tmp"]
        # bwrap's /dev is a tmpfs without a cap, /dev/shm a directory in it: shared memory
        # (Python's multiprocessing, Chromium) gets a tmpfs capped like /tmp, and /dev
        # itself is made read-only below, so neither can fill the host's memory.
        args += ["--size", tmp_size, "--tmpfs", "/dev/shm"]
        args += ["--size", str(_MASK_SIZE), "--tmpfs", "/sys"]
        for kept in _SYS_KEPT:
            args += ["--ro-bind-try", kept, kept]
        args += ["--remount-ro", "/sys"]
        if os.path.isdir("/run"):
            args += ["--size", str(_MASK_SIZE), "--tmpfs", "/run"]
            args += ["--ro-bind-try", _RESOLVER_DIR, _RESOLVER_DIR]
        # Parents before children, so a nested mount is not hidden by its parent's tmpfs.
        for path in _by_depth(self.masked):
            private = str(path) in (self.home, "/tmp")  # HOME and TMPDIR: written to
            size = tmp_size if private else str(_MASK_SIZE)
            args += ["--size", size, "--tmpfs", str(path)]
        for path in _by_depth(self.exposed):
            args += ["--ro-bind-try", str(path), str(path)]
        for path in _by_depth(self.writable):
            args += ["--bind", str(path), str(path)]
        if self.relay is not None:  # its directory holds the bridge's socket alone
            door = str(self.relay.socket.parent)
            args += ["--ro-bind", door, door]
        for link, target in self.links:
            if not self._shows(link):
                args += ["--symlink", str(target), str(link)]
        # A path a mask hides is not there at all: covering it would create it.
        covered = [path for path in _by_depth(self.hidden) if self._shows(path)]
        covered_dirs = [path for path in covered if os.path.isdir(path)]
        for path in covered:
            if path in covered_dirs:
                args += ["--size", str(_MASK_SIZE), "--tmpfs", str(path)]
            elif os.path.exists(path) and not os.path.islink(path):  # a link resolves inside
                args += ["--ro-bind", os.devnull, str(path)]
        args += ["--dir", self.home]
        # What hides a directory cannot hold anything either: read-only, once the mounts
        # inside it (the workspace, the interpreter) are in place; those keep their own mode.
        mounted_over = {*self.writable, *self.exposed}  # remounting those would hit them
        for path in self.masked:
            if str(path) not in (self.home, "/tmp") and path not in mounted_over:
                args += ["--remount-ro", str(path)]
        for path in covered_dirs:
            args += ["--remount-ro", str(path)]
        if os.path.isdir("/run"):
            args += ["--remount-ro", "/run"]
        args += ["--remount-ro", "/dev"]  # its devices still open for writing: nodes, not files
        # Absolute: bwrap resolves a relative --chdir inside the new root, not from here.
        args += ["--chdir", os.path.abspath(cwd), "--"]
        args += limit_argv(self.limits, prlimit=self.prlimit)
        shim_limits = "" if self.prlimit else limit_word(self.limits)
        relay = self.relay.word if self.relay is not None else ""
        args += [self.python, "-I", "-S", "-c", _shim_source(), str(status_fd), shim_limits, relay]
        args += argv
        inner_env = {**env, "HOME": self.home, "TMPDIR": "/tmp"}
        return args, inner_env

    def _shows(self, path: Path) -> bool:
        """Whether the host's `path` is there in the sandbox: bound, or under no mask."""
        if any(path.is_relative_to(root) for root in (*self.writable, *self.exposed)):
            return True
        masks = (*self.masked, *ALWAYS_MASKED, Path(self.home))
        return not any(path.is_relative_to(root) for root in masks)


@functools.cache
def _shim_source() -> str:
    return shim_source()


def _by_depth(paths: Iterable[Path]) -> list[Path]:
    return sorted(set(paths), key=lambda p: (len(p.parts), str(p)))


@dataclass(frozen=True)
class Sandboxing:
    """A run's isolation, resolved once: which mode, and what every confinement hides."""

    mode: Literal["bwrap", "none"]
    requested: IsolationMode = "auto"
    reason: str = ""
    """Why `auto` fell back to `none` (empty when it did not)."""
    bwrap: str | None = None
    masked: tuple[Path, ...] = ()
    agent_network: bool = True
    command_network: bool = True
    exposed: tuple[Path, ...] = field(default_factory=tuple)
    limits: Limits = DEFAULT_LIMITS
    prlimit: str | None = None
    python: str = LAUNCHER_PYTHON
    """The interpreter of the exec shim: assay's own, which every real confinement shows
    (another only where the sandbox's user cannot run that one: tests that start the
    sandbox as another user)."""
    hidden: tuple[Path, ...] = ()
    """Files made unreadable in every confinement (`Confinement.hidden`)."""
    shown: Exposure = field(default_factory=Exposure, compare=False)
    """What an argv may still show of the masked directories (`isolation/exposure.py`)."""

    @property
    def warning(self) -> str | None:
        """The loud line for the terminal, the job summary and report.json; None when sandboxed."""
        if self.mode == "bwrap":
            return None
        why = f" ({self.reason})" if self.reason else " (--isolation none)"
        return UNSANDBOXED_WARNING + why

    def for_agent(
        self, writable: Path, argv: Sequence[str] = (), relay: BridgeRelay | None = None
    ) -> Confinement | None:
        """The agent's confinement: `writable` is the sandbox's private directory; with a
        `relay`, no network but the model bridge's."""
        confined = self._confine(writable, network=self.agent_network, argv=argv)
        if confined is None or relay is None:
            return confined
        return replace(confined, network=False, relay=relay)

    def for_command(self, writable: Path, argv: Sequence[str] = ()) -> Confinement | None:
        """A verification command's confinement: `writable` is the workspace."""
        return self._confine(writable, network=self.command_network, argv=argv)

    def hidden_start(self, argv: Sequence[str]) -> tuple[Path, str] | None:
        """The program or script `argv` starts, when every confinement hides it: (path, why
        and what to do). None without a sandbox. See `Exposure.hidden_start`."""
        if self.mode == "none" or self.bwrap is None or not argv:
            return None
        masked, _ = self._masks()
        return self.shown.hidden_start(argv, masked, exposed=self.exposed)

    def _masks(self) -> tuple[list[Path], str]:
        """The directories every confinement masks, HOME included, and the inner HOME."""
        home = os.path.normpath(os.environ.get("HOME", "")) if os.environ.get("HOME") else ""
        masked = list(self.masked)
        if home and os.path.isabs(home) and home not in _NEVER_MASKED and os.path.isdir(home):
            masked.append(Path(home))
            return masked, home
        return masked, "/tmp/home"

    def _confine(self, writable: Path, *, network: bool, argv: Sequence[str]) -> Confinement | None:
        if self.mode == "none" or self.bwrap is None:
            return None
        masked, inner_home = self._masks()
        own = Path(os.path.realpath(writable))
        exposed = list(self.exposed)
        program = ShownProgram()
        if argv and "\0" not in argv[0]:  # a NUL is in no path: the start refuses it (as Go's)
            program = self.shown.program(argv[0], masked, writable=(own,))
        exposed += program.exposed
        exposed += self.shown.named_files(argv[1:], masked, writable=(own,))
        hidden = (*self.hidden, *program.covered)
        return Confinement(
            bwrap=self.bwrap,
            writable=(own,),
            masked=tuple(masked),
            exposed=tuple(exposed),
            hidden=hidden,
            links=program.links,
            network=network,
            home=inner_home,
            limits=self.limits,
            prlimit=self.prlimit,
            python=self.python,
        )


def _python_paths() -> list[Path]:
    """assay's interpreter and libraries: verification commands often run `python -m pytest`
    from the same virtualenv, which may sit inside the checkout or under HOME."""
    paths = {Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return sorted(paths)


def checkout_root(path: Path) -> Path:
    """The git checkout holding `path` (the nearest ancestor with `.git`), else its directory."""
    start = Path(os.path.realpath(path))
    directory = start if start.is_dir() else start.parent
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return directory


def project_checkouts(suite_files: Iterable[Path], cwd: Path) -> set[Path]:
    """The checkouts whose files a run's programs must not see, but whose own files an argv
    may name (`isolation/exposure.py`): each suite file's (`checkout_root`), and the working
    directory's when it is a git checkout. A project that is no git repository has no
    checkout beyond each suite file's directory, so there the working directory counts
    when it holds a suite (an agent script at the project's root, the suites in `evals/`),
    unless it is a directory no program could run without, or HOME itself."""
    checkouts = {checkout_root(path) for path in suite_files}
    here = Path(os.path.realpath(cwd))
    around_here = checkout_root(here)
    if (around_here / ".git").exists():
        checkouts.add(around_here)
    elif (
        str(here) not in _NEVER_MASKED
        and here != Path(os.path.realpath(os.path.expanduser("~")))
        and any(checkout.is_relative_to(here) for checkout in checkouts)
    ):
        checkouts.add(here)
    return checkouts


def probe_bwrap(
    bwrap: str | None = None, *, limits: Limits = DEFAULT_LIMITS, prlimit: str | None = None
) -> tuple[str | None, str]:
    """(path to a working bwrap, "") or (None, why not): runs the namespaces, mounts and
    limits assay asks for."""
    if not sys.platform.startswith("linux"):
        return None, f"no OS sandbox on {sys.platform}"
    found = bwrap or shutil.which("bwrap")
    if found is None:
        return None, "bwrap (bubblewrap) is not installed"
    # Exposed as every real confinement exposes it: the exec shim runs on assay's own
    # interpreter, which may live under /tmp, which the sandbox hides.
    probe = Confinement(
        bwrap=found,
        writable=(),
        masked=(),
        exposed=tuple(_python_paths()),
        network=False,
        limits=limits,
        prlimit=prlimit,
    )
    argv, env = probe.wrap(["/bin/true"], cwd=Path("/"), env={"PATH": os.defpath})
    try:
        done = run_sync(argv, env=env, timeout_s=_PROBE_TIMEOUT_S)
    except (OSError, SubprocessError) as exc:
        return None, f"bwrap cannot run: {exc}"
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace")
        detail = (stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return None, f"bwrap does not work here: {detail}"
    return found, ""


def resolve_sandboxing(
    requested: IsolationMode,
    *,
    masked: Iterable[Path],
    sources: Iterable[Path] | None = None,
    withheld: Iterable[Path] = (),
    hidden: Iterable[Path] = (),
    tracked: TrackedFiles | None = None,
    agent_network: bool = True,
    command_network: bool = True,
    limits: Limits | None = None,
) -> Sandboxing:
    """The run's Sandboxing: `bwrap` that is unavailable is a ConfigError (exit 2).

    `masked` directories are replaced by empty tmpfs mounts. Of them, `sources` (default:
    all) are checkouts whose own files an argv may name, `tracked` lists a git checkout's
    tracked files (without it no file of a git checkout is shown), and nothing at or under
    a `withheld` path is ever shown (`isolation/exposure.py`). `hidden` files are made
    unreadable where they are, for a file whose directory cannot be masked.

    `limits` default to the `ASSAY_SANDBOX_*` variables over DEFAULT_LIMITS (a malformed
    one is a ConfigError naming it); callers with a `[tool.assay]` pass
    `limits_from_environ(os.environ, config.sandbox_limits)`."""

    if limits is None:
        limits = limits_from_environ(os.environ)
    limits = limits.within_hard_limits()
    network = functools.partial(
        Sandboxing,
        agent_network=agent_network,
        command_network=command_network,
        limits=limits,
    )
    if requested == "none":
        return network(mode="none", requested=requested)
    prlimit = find_prlimit()
    bwrap, reason = probe_bwrap(limits=limits, prlimit=prlimit)
    if bwrap is None:
        if requested == "bwrap":
            raise ConfigError(
                f"--isolation bwrap: {reason}; install bubblewrap (apt-get install bubblewrap) "
                "and allow unprivileged user namespaces, or pass --isolation auto|none"
            )
        return network(mode="none", requested=requested, reason=reason)
    masked_dirs = _real_paths(masked) - {Path(p) for p in _NEVER_MASKED}
    source_dirs = masked_dirs if sources is None else _real_paths(sources) & masked_dirs
    shown = Exposure(
        sources=tuple(sorted(source_dirs)),
        withheld=tuple({Path(os.path.abspath(path)) for path in withheld}),
        tracked=tracked,
    )
    toolchains = home_toolchains(os.environ, masked=masked_dirs)
    return network(
        mode="bwrap",
        requested=requested,
        bwrap=bwrap,
        masked=tuple(sorted(masked_dirs)),
        exposed=(*_python_paths(), *toolchains.exposed),
        prlimit=prlimit,
        hidden=(*sorted(_real_paths(hidden)), *toolchains.covered),
        shown=shown,
    )


def _real_paths(paths: Iterable[Path]) -> set[Path]:
    return {Path(os.path.realpath(path)) for path in paths}


def harden_process() -> bool:
    """prctl(PR_SET_DUMPABLE, 0) on assay itself (Linux): a process of the same user can no
    longer read its /proc/<pid>/environ or memory, nor ptrace it. True when it took."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # lazy: start-up (ctypes only on this path)

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_dumpable = 4
        return bool(libc.prctl(pr_set_dumpable, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
