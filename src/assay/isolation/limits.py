"""The resource limits of every confined program (agents and verification commands).

Without them a hostile agent or verification command can fork until the machine stops,
write one file until the disk is full, or fill its RAM-backed `/tmp`. Inside the bwrap
sandbox (`assay.isolation.bwrap`) each program gets:

- `RLIMIT_NPROC` (processes and threads): set inside the sandbox's own user namespace, where
  the kernel counts only that sandbox's tasks, so a fork bomb stops at the limit while the
  host and concurrent cases go on. The kernel never applies it to root (uid 0 on the
  host): there `run_command` counts the sandbox's processes from outside every 20 ms and
  kills it past the limit, which stops a leak or a slow bomb but can be outrun by a fast
  fork bomb on a busy machine. Run assay as an ordinary user (GitHub's runners do) for
  the limit to hold;
- `RLIMIT_FSIZE` (the size of one file): a write past it fails and the writer gets
  SIGXFSZ, so a runaway log or a `dd` is killed by that signal (`limit_reason` says so;
  a shell running it reports 153, 128 + SIGXFSZ, which alone says nothing);
- `RLIMIT_CORE` = 0: no core dump of a crashed agent fills the workspace;
- a `--size` cap on the tmpfs mounts it can write (`/tmp` and the private HOME): tmpfs
  lives in RAM, so this bounds the memory a program can park there.

Soft and hard limits are equal: a confined program cannot raise them again. Limits are
set by util-linux `prlimit` as the sandbox's first program (not `preexec_fn`, which
would make every spawn a fork and is unsafe with threads), or, where `prlimit` is
missing, by the exec shim that starts the program after it (`assay.isolation.exec_shim`).
The defaults are generous, for real agents that spawn hundreds of processes and build
GB-sized trees; `[tool.assay] sandbox_max_processes`,
`sandbox_max_file_size` and `sandbox_tmp_size` change them, and the variables
`ASSAY_SANDBOX_MAX_PROCESSES`, `ASSAY_SANDBOX_MAX_FILE_SIZE` and `ASSAY_SANDBOX_TMP_SIZE`
beat those (sizes take a K, M, G or T suffix, powers of 1024; the first two also take
`unlimited`).

Not limited: memory outside tmpfs (`RLIMIT_AS` breaks Node and Go, which reserve large
address ranges; a cgroup would need privileges assay does not assume), CPU time (the
attempt's timeout ends it), and the total size of many files in the workspace, which is on
the host's disk.
"""

from __future__ import annotations

import dataclasses
import os
import re
import resource
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from assay.errors import ConfigError, SourcePosition

__all__ = [
    "DEFAULT_LIMITS",
    "LIMIT_VARIABLES",
    "Limits",
    "find_prlimit",
    "limit_argv",
    "limit_reason",
    "limit_word",
    "limits_from_environ",
    "parse_limit",
]

KiB = 1024
GiB = KiB**3
UNLIMITED = -1
"""`resource.RLIM_INFINITY` on Linux; what `unlimited` reads as."""
SIGXFSZ = 25


_PROCESSES_PER_CPU = 128
"""Threads scale with cores (`go build` runs a compiler per CPU, each with a thread per
CPU), so a big machine gets a higher process limit."""


@dataclass(frozen=True)
class Limits:
    """The limits one confined program runs under (UNLIMITED: none)."""

    max_processes: int = max(4096, _PROCESSES_PER_CPU * (os.cpu_count() or 1))
    """Tasks (processes and threads) in the sandbox at once: 4096, or 128 per CPU past 32
    CPUs. Claude Code with its tools, or a parallel test run, stays in the low hundreds."""
    max_file_size: int = 4 * GiB
    """The largest file a confined program may write."""
    tmp_size: int = 4 * GiB
    """The cap of each of the private `/tmp` and HOME tmpfs mounts (Go's build and module
    caches live in HOME)."""

    def within_hard_limits(self) -> Limits:
        """These limits lowered to assay's own hard limits: a program cannot be given more
        than assay has, and asking would make its start fail."""
        return dataclasses.replace(
            self,
            max_processes=_lowered(self.max_processes, resource.RLIMIT_NPROC),
            max_file_size=_lowered(self.max_file_size, resource.RLIMIT_FSIZE),
        )


DEFAULT_LIMITS = Limits()
LIMIT_VARIABLES = {
    "max_processes": "ASSAY_SANDBOX_MAX_PROCESSES",
    "max_file_size": "ASSAY_SANDBOX_MAX_FILE_SIZE",
    "tmp_size": "ASSAY_SANDBOX_TMP_SIZE",
}
_SIZE = re.compile(r"(\d+)\s*([KMGT]?)(?:i?B)?", re.IGNORECASE)
_UNITS = {"": 1, "K": KiB, "M": KiB**2, "G": KiB**3, "T": KiB**4}


def _lowered(wanted: int, which: int) -> int:
    _, hard = resource.getrlimit(which)
    if hard == resource.RLIM_INFINITY:
        return wanted
    return hard if wanted == UNLIMITED else min(wanted, hard)


def limits_from_environ(
    environ: Mapping[str, str], configured: Mapping[str, int] | None = None
) -> Limits:
    """DEFAULT_LIMITS with what `[tool.assay]` sets (`configured`: AssayConfig's
    `sandbox_limits`), and over it what the `ASSAY_SANDBOX_*` variables set (empty: not set)."""
    values = dict(configured or {})
    for name, variable in LIMIT_VARIABLES.items():
        text = environ.get(variable, "").strip()
        if text:
            values[name] = parse_limit(name, text, label=variable)
    return dataclasses.replace(DEFAULT_LIMITS, **values)


def parse_limit(
    name: str,
    text: str,
    *,
    label: str,
    where: Callable[[str], SourcePosition] | None = None,
) -> int:
    """The value of limit `name` written as `text` (ConfigError naming `label`, at
    `where(label)` when given)."""
    unlimited = name != "tmp_size"  # a tmpfs without a cap is what the limit is against
    text = text.strip()
    if unlimited and text.lower() == "unlimited":
        return UNLIMITED
    match = _SIZE.fullmatch(text)
    value = int(match.group(1)) * _UNITS[match.group(2).upper()] if match else 0
    if value <= 0:
        also = " or unlimited" if unlimited else ""
        raise ConfigError(
            f"{label}={text!r}: expected a positive number (K, M, G or T suffix for sizes){also}",
            where(label) if where else None,
        )
    return value


def find_prlimit() -> str | None:
    """util-linux `prlimit`, where it is installed."""
    return shutil.which("prlimit")


def limit_argv(limits: Limits, *, prlimit: str | None) -> list[str]:
    """The argv prefix that runs a program under `limits` with `prlimit` (the program's
    argv follows); empty without it: the exec shim sets them (`limit_word`)."""
    if prlimit is None:
        return []
    nproc, fsize = _word(limits.max_processes), _word(limits.max_file_size)
    return [prlimit, f"--nproc={nproc}:{nproc}", f"--fsize={fsize}:{fsize}", "--core=0:0", "--"]


def limit_word(limits: Limits) -> str:
    """`limits` as the exec shim takes them: `processes:file size:core size` (-1: none)."""
    return f"{limits.max_processes}:{limits.max_file_size}:0"


def _word(value: int) -> str:
    return "unlimited" if value == UNLIMITED else str(value)


def limit_reason(exit_code: int | None, limits: Limits) -> str:
    """What a limit did to a program that ended with `exit_code` ("" when none did): a
    file past the size limit kills it with SIGXFSZ (`exit_code` -SIGXFSZ). An exit code of
    153 is the program's own (a shell's report of a child the signal killed, or a plain
    `exit 153`): the sandbox tells a signal from an exit (`assay.isolation.exec_shim`)."""
    if exit_code == -SIGXFSZ:
        return (
            f"killed by SIGXFSZ: it wrote a file past the sandbox's limit of "
            f"{_human(limits.max_file_size)} ({LIMIT_VARIABLES['max_file_size']})"
        )
    return ""


def _human(size: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if size >= _UNITS[unit] and size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]} {unit}iB"
    return f"{size} bytes"
