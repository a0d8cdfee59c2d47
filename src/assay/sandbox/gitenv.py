"""The one way assay runs git: no user or system config, no hooks, fixed identity and dates.

Sandboxes must come out byte-identical on every machine, and a developer's
`~/.gitconfig` (hooks, signing, templates, `diff.external`, `core.fsmonitor`, excludes)
or a stray `GIT_DIR` / `GIT_INDEX_FILE` in the caller's environment must change nothing.
So every git process gets an environment built from scratch here and the `-c` overrides
below, and the identity and date written into commits come from the same constants.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from assay.errors import SandboxError

__all__ = [
    "COMMIT_IDENTITY",
    "GIT_DATE",
    "GIT_EMAIL",
    "GIT_NAME",
    "git_environment",
    "git_message",
    "git_output",
    "run_git",
]

GIT_NAME = "assay"
GIT_EMAIL = "assay@localhost"
GIT_DATE = "2000-01-01T00:00:00Z"
GIT_EPOCH = 946684800
"""GIT_DATE as seconds since the epoch (what a commit object records)."""
COMMIT_IDENTITY = f"{GIT_NAME} <{GIT_EMAIL}> {GIT_EPOCH} +0000"
"""The author and committer line of every commit assay writes."""

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
