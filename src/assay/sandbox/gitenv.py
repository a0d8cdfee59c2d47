"""The one way assay runs git: no user or system config, no hooks, fixed identity and dates.

Sandboxes must come out byte-identical on every machine, and a developer's
`~/.gitconfig` (hooks, signing, templates, `diff.external`, `core.fsmonitor`, excludes)
or a stray `GIT_DIR` / `GIT_INDEX_FILE` in the caller's environment must change nothing.
So every git process gets an environment built from scratch here and the `-c` overrides
below, and the identity and date written into commits come from the same constants.

A repository's own config is still read, and it can name commands git runs (a `filter`
driver, say). `run_git` is for repositories assay just built (or scratch trees of its
own); a work tree an agent changed goes through `run_git_bounded` (own process group,
timeout), and a task sandbox's work tree is never handed to git at all (see `baseline`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from assay._util.proc import LaunchError, run_command
from assay.errors import SandboxError

__all__ = [
    "COMMIT_IDENTITY",
    "GIT_DATE",
    "GIT_EMAIL",
    "GIT_NAME",
    "GIT_TIMEOUT_S",
    "git_environment",
    "git_message",
    "git_output",
    "run_git",
    "run_git_bounded",
]

GIT_NAME = "assay"
GIT_EMAIL = "assay@localhost"
GIT_DATE = "2000-01-01T00:00:00Z"
GIT_EPOCH = 946684800
"""GIT_DATE as seconds since the epoch (what a commit object records)."""
COMMIT_IDENTITY = f"{GIT_NAME} <{GIT_EMAIL}> {GIT_EPOCH} +0000"
"""The author and committer line of every commit assay writes."""
GIT_TIMEOUT_S = 120.0
"""The longest `run_git_bounded` waits (generous: `git status` of a large repository)."""

# Overrides that neutralise whatever a repository's own config could do on our behalf
# (the user's global and system config are not read at all).
_CONFIG_OVERRIDES: tuple[str, ...] = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.excludesFile=/dev/null",
    "core.attributesFile=/dev/null",
    "commit.gpgsign=false",
    "tag.gpgsign=false",
    "gc.auto=0",
    "maintenance.auto=false",
)
_GIT_PREFIX: tuple[str, ...] = ("git", *(arg for kv in _CONFIG_OVERRIDES for arg in ("-c", kv)))

# Variables that point git at the user's files even when no GIT_* variable is set.
_DROPPED = frozenset({"HOME", "XDG_CONFIG_HOME", "LANGUAGE", "LANG", "EMAIL"})


def git_environment(*, ceiling: Path | None = None) -> dict[str, str]:
    """The environment of every git process assay starts.

    `ceiling` stops git from looking above it for a repository, so a directory that is
    not itself a work tree is never mistaken for part of an enclosing one.
    """
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("GIT_") and name not in _DROPPED and not name.startswith("LC_")
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_SYSTEM=os.devnull,
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME=GIT_NAME,
        GIT_AUTHOR_EMAIL=GIT_EMAIL,
        GIT_AUTHOR_DATE=GIT_DATE,
        GIT_COMMITTER_NAME=GIT_NAME,
        GIT_COMMITTER_EMAIL=GIT_EMAIL,
        GIT_COMMITTER_DATE=GIT_DATE,
        LC_ALL="C",
    )
    if ceiling is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(ceiling)
    return env


def run_git(
    args: Sequence[str], *, cwd: Path, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run `git ARGS` in the work tree `cwd` (never a repository above it); never raises on exit.

    Raises SandboxError only when git itself cannot be started.
    """
    cwd = Path(os.path.abspath(cwd))
    try:
        return subprocess.run(
            [*_GIT_PREFIX, *args],
            cwd=cwd,
            env=git_environment(ceiling=cwd.parent),
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except (FileNotFoundError, NotADirectoryError):
        if not cwd.is_dir():
            raise SandboxError(f"{cwd} is not a directory") from None
        raise SandboxError("git is not installed (no `git` on PATH)") from None


async def run_git_bounded(
    args: Sequence[str], *, cwd: Path, timeout_s: float | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`run_git` for a work tree someone else controls: the commands its config names may hang.

    git runs in a process group of its own, killed whole (filters and all) after
    `timeout_s` (default GIT_TIMEOUT_S) or when the caller is cancelled (Ctrl-C). Raises
    TimeoutError when time ran out, SandboxError when git cannot be started.
    """
    cwd = Path(os.path.abspath(cwd))
    if not cwd.is_dir():
        raise SandboxError(f"{cwd} is not a directory")
    limit = GIT_TIMEOUT_S if timeout_s is None else timeout_s
    # Files, not a directory: creating and removing directories is slow on many disks.
    with contextlib.ExitStack() as files:
        stdout, stderr = (
            files.enter_context(tempfile.NamedTemporaryFile(prefix="assay-git-")) for _ in range(2)
        )
        try:
            done = await run_command(
                [*_GIT_PREFIX, *args],
                cwd=cwd,
                env=git_environment(ceiling=cwd.parent),
                timeout_s=limit,
                stdout_path=Path(stdout.name),
                stderr_path=Path(stderr.name),
            )
        except LaunchError:
            raise SandboxError("git is not installed (no `git` on PATH)") from None
        if done.timed_out:
            raise TimeoutError(f"git {args[0]} did not finish within {limit:g}s")
        if done.truncated:
            raise SandboxError(f"git {args[0]} printed more than assay keeps")
        return subprocess.CompletedProcess(list(args), done.exit_code, stdout.read(), stderr.read())


def git_output(args: Sequence[str], *, cwd: Path, stdin: bytes | None = None) -> bytes:
    """Run git and return its stdout; a non-zero exit raises SandboxError with git's message."""
    result = run_git(args, cwd=cwd, stdin=stdin)
    if result.returncode != 0:
        raise SandboxError(f"git {args[0]} failed in {cwd}: {git_message(result)}")
    return result.stdout


def git_message(result: subprocess.CompletedProcess[bytes]) -> str:
    """git's own explanation of a failure, its lines joined into one."""
    text = (result.stderr or result.stdout).decode("utf-8", "replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(lines) or f"exit status {result.returncode}"
