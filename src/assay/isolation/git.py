"""The one way assay runs git: no user or system config, no hooks, fixed identity and dates.

Sandboxes must come out byte-identical on every machine, and a developer's
`~/.gitconfig` (hooks, signing, templates, `diff.external`, `core.fsmonitor`, excludes)
or a stray `GIT_DIR` / `GIT_INDEX_FILE` in the caller's environment must change nothing.
So every git process gets an environment built from scratch here and the `-c` overrides
below, and the identity and date written into commits come from the same constants.

No git process carries a credential: the environment starts from the one verification
commands get (`scrubbed_environ`), since git needs none and a repository's config can make
it start other programs.

A repository's own config is still read, and it can name programs git runs (a `filter`
driver, an fsmonitor, the transport of a partial clone's lazy fetch). `run_git` is for
repositories assay just built (or scratch trees of its own). A work tree someone else
wrote goes through `run_git_bounded`: the repository's config is listed first (`git config
--list`, which starts nothing) and every program it names is switched off for the command
that follows (`_no_program_config`), in its own process group, with a timeout, and inside
the caller's OS sandbox when it has one, for whatever this list does not know. A
submodule's config is not listed: callers keep git out of submodules' work trees
(`--ignore-submodules=dirty`). A task sandbox's work tree is never handed to git at all
(see `baseline`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.secrets import scrubbed_environ
from assay.errors import SandboxError
from assay.isolation.processes import (
    CompletedProcess,
    LaunchError,
    TimeoutExpired,
    run_command,
    run_sync,
)

if TYPE_CHECKING:
    from assay.isolation.bwrap import Confinement

__all__ = [
    "COMMIT_IDENTITY",
    "GIT_DATE",
    "GIT_EMAIL",
    "GIT_NAME",
    "GIT_TIMEOUT_S",
    "commit_identity",
    "git_environment",
    "git_message",
    "git_output",
    "run_git",
    "run_git_bounded",
    "tracked_files",
]

GIT_NAME = "assay"
GIT_EMAIL = "assay@localhost"
GIT_DATE = "2000-01-01T00:00:00Z"
GIT_EPOCH = 946684800
"""GIT_DATE as seconds since the epoch (what a commit object records)."""


def commit_identity(name: str, email: str) -> str:
    """A commit's author or committer line for `name <email>`, at assay's fixed date."""
    return f"{name} <{email}> {GIT_EPOCH} +0000"


COMMIT_IDENTITY = commit_identity(GIT_NAME, GIT_EMAIL)
"""The author and committer line of every commit assay writes (a task's baseline names
PVYai's identity instead, at the same date)."""
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


# For a work tree someone else wrote: what git must not do there whatever its config says.
# No transport at all: a partial clone fetches a missing object by running the remote's
# `uploadpack`, `core.sshCommand` or a remote helper, which its config names.
_UNTRUSTED_ENV: Mapping[str, str] = {"GIT_NO_LAZY_FETCH": "1"}
_UNTRUSTED_CONFIG: tuple[tuple[str, str], ...] = (("protocol.allow", "never"),)
_FILTER_PROGRAMS = frozenset({"clean", "smudge", "process"})
_LIST_CONFIG = ("config", "--list", "--includes", "--name-only", "-z")


def git_environment(*, ceiling: Path | None = None) -> dict[str, str]:
    """The environment of every git process assay starts: no credentials, no user config.

    `ceiling` stops git from looking above it for a repository, so a directory that is
    not itself a work tree is never mistaken for part of an enclosing one.
    """
    env = {
        name: value
        for name, value in scrubbed_environ().items()
        if not name.startswith("GIT_") and name not in _DROPPED and not name.startswith("LC_")
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_ATTR_NOSYSTEM="1",
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
    args: Sequence[str],
    *,
    cwd: Path,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    search_up: bool = False,
) -> CompletedProcess[bytes]:
    """Run `git ARGS` in the work tree `cwd` (never a repository above it); never raises on exit.

    `env` is added to `git_environment()`. `search_up`: the repository `cwd` is in, found
    upwards as git finds it (the user's own checkout, for a report's facts), else `cwd`
    itself only. Raises SandboxError only when git itself cannot be started, or did not
    finish within `timeout_s`.
    """
    cwd = Path(os.path.abspath(cwd))
    ceiling = None if search_up else cwd.parent
    try:
        return run_sync(
            [*_GIT_PREFIX, *args],
            cwd=cwd,
            env={**git_environment(ceiling=ceiling), **(env or {})},
            stdin=stdin,
            timeout_s=timeout_s,
        )
    except TimeoutExpired:
        raise SandboxError(f"git {args[0]} did not finish within {timeout_s:g}s") from None
    except (FileNotFoundError, NotADirectoryError):
        if not cwd.is_dir():
            raise SandboxError(f"{cwd} is not a directory") from None
        raise SandboxError("git is not installed (no `git` on PATH)") from None


async def run_git_bounded(
    args: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float | None = None,
    isolation: Confinement | None = None,
) -> CompletedProcess[bytes]:
    """`run_git` for a work tree someone else wrote: its config must not start a program.

    The config git would read there is listed first; every filter driver and protocol it
    names is switched off for `git ARGS` (`_no_program_config`), lazy fetching too. Both
    run in a process group of their own, killed whole after `timeout_s` together (default
    GIT_TIMEOUT_S; a config that includes a FIFO blocks) or when the caller is cancelled,
    and inside `isolation` when given. A config git cannot read gives that failure as the
    result. Raises TimeoutError when time ran out, SandboxError when git cannot be started.
    """
    cwd = Path(os.path.abspath(cwd))
    if not cwd.is_dir():
        raise SandboxError(f"{cwd} is not a directory")
    limit = GIT_TIMEOUT_S if timeout_s is None else timeout_s
    run = _GroupRun(cwd, time.monotonic() + limit, limit, isolation)
    env = {**git_environment(ceiling=cwd.parent), **_UNTRUSTED_ENV}
    listing = await run.git(_LIST_CONFIG, {**env, **_config_environment(_UNTRUSTED_CONFIG)})
    if listing.returncode != 0:
        return listing
    overrides = (*_UNTRUSTED_CONFIG, *_no_program_config(listing.stdout))
    return await run.git(args, {**env, **_config_environment(overrides)})


def _no_program_config(names: bytes) -> list[tuple[str, str]]:
    """Overrides for the keys of `names` (`git config --list --name-only -z`) that would make
    the commands `run_git_bounded` runs start a program: each filter driver's `clean`,
    `smudge` and `process` emptied (git then runs none) and `required` off (else the file
    would fail to read), each `protocol.<name>.allow` never.

    The other keys that name programs are for what those commands never do: hooks (and
    `core.hooksPath` is /dev/null anyway), `core.fsmonitor` (off in every git), patches
    (`diff.<driver>.textconv`, `diff.external`; the diffs read are `--name-status`
    `--no-ext-diff`), a pager (stdout is no terminal), an editor, signatures, and the
    transports (`protocol.allow=never`): `core.sshCommand`, `credential.helper`,
    `core.askPass`, `remote.<name>.uploadpack`.
    """
    overrides = []
    for raw in names.split(b"\x00"):
        name = raw.decode("utf-8", "surrogateescape")
        section, _, rest = name.partition(".")
        subsection, _, key = rest.rpartition(".")
        if not subsection:
            continue
        if section == "filter" and key in _FILTER_PROGRAMS:
            overrides.append((name, ""))
        elif section == "filter" and key == "required":
            overrides.append((name, "false"))
        elif section == "protocol" and key == "allow":
            overrides.append((name, "never"))
    return overrides


def _config_environment(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """`pairs` as git's GIT_CONFIG_COUNT variables: command-line precedence, like `-c`, but a
    subsection holding `=` (which `-c` would split at) is taken as written."""
    env = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for index, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


@dataclass(frozen=True)
class _GroupRun:
    """Where and how long `run_git_bounded`'s git processes run: one deadline for them all."""

    cwd: Path
    deadline: float
    timeout_s: float
    isolation: Confinement | None

    async def git(self, args: Sequence[str], env: Mapping[str, str]) -> CompletedProcess[bytes]:
        # Files, not a directory: creating and removing directories is slow on many disks.
        with contextlib.ExitStack() as files:
            stdout, stderr = (
                files.enter_context(tempfile.NamedTemporaryFile(prefix="assay-git-"))
                for _ in range(2)
            )
            try:
                done = await run_command(
                    [*_GIT_PREFIX, *args],
                    cwd=self.cwd,
                    env=env,
                    timeout_s=max(self.deadline - time.monotonic(), 0.0),
                    stdout_path=Path(stdout.name),
                    stderr_path=Path(stderr.name),
                    isolation=self.isolation,
                )
            except LaunchError:
                raise SandboxError("git is not installed (no `git` on PATH)") from None
            if done.timed_out:
                raise TimeoutError(f"git {args[0]} did not finish within {self.timeout_s:g}s")
            if done.truncated:
                raise SandboxError(f"git {args[0]} printed more than assay keeps")
            return CompletedProcess(list(args), done.exit_code, stdout.read(), stderr.read())


def repository_fact(
    args: Sequence[str], *, cwd: Path | None = None, timeout_s: float = 10.0
) -> str | None:
    """git's output (stripped text) about the repository `cwd` (default: the working
    directory) is in, found upwards as git finds it; None when git fails, is missing or
    times out: a fact for a report (HEAD, the branch), never an error."""
    try:
        done = run_git(args, cwd=cwd or Path.cwd(), timeout_s=timeout_s, search_up=True)
    except SandboxError:
        return None
    text = done.stdout.decode("utf-8", "replace").strip()
    return text if done.returncode == 0 and text else None


def git_output(args: Sequence[str], *, cwd: Path, stdin: bytes | None = None) -> bytes:
    """Run git and return its stdout; a non-zero exit raises SandboxError with git's message."""
    result = run_git(args, cwd=cwd, stdin=stdin)
    if result.returncode != 0:
        raise SandboxError(f"git {args[0]} failed in {cwd}: {git_message(result)}")
    return result.stdout


def git_message(result: CompletedProcess[bytes]) -> str:
    """git's own explanation of a failure, its lines joined into one."""
    text = (result.stderr or result.stdout).decode("utf-8", "replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(lines) or f"exit status {result.returncode}"


_LISTING_TIMEOUT_S = 30.0


def tracked_files(checkout: Path) -> frozenset[str] | None:
    """The files git tracks in `checkout` as committed or staged (what the OS sandbox may
    show of it), None when git cannot say (not installed, not a work tree it trusts, too
    slow). A tracked file whose content differs from the index is not one: a pull request
    can check in a placeholder that a later CI step fills with a credential.

    Content, not stat data, decides: a checkout copied, `touch`ed, `chown -R`ed or
    rebuilt holds its tracked files with new stat data, and they are still tracked. git
    learns that by refreshing the index, which writes it; the user's index is never
    written, so the refresh goes into a copy of it in a scratch directory
    (GIT_INDEX_FILE), read by `git diff-files` after.

    Callers never ask it of a repository a program under test could write (its config can
    name programs). Even so no transport is allowed and none is needed: the index, the
    work tree and the objects it compares with are all it reads."""

    def listed(*args: str, index: Path | None = None) -> frozenset[str] | None:
        done = _listing_git(checkout, args, index)
        if done is None or done.returncode != 0:
            return None
        return frozenset(done.stdout.decode("utf-8", "surrogateescape").split("\0")) - {""}

    tracked = listed("ls-files", "-z")
    if not tracked:
        return tracked
    located = _listing_git(checkout, ("rev-parse", "--git-path", "index"))
    if located is None or located.returncode != 0:
        return None
    index = checkout / os.fsdecode(located.stdout.rstrip(b"\n"))  # relative to it, or absolute
    with tempfile.TemporaryDirectory(prefix="assay-index-") as scratch:
        copy = Path(scratch) / "index"
        try:
            shutil.copyfile(index, copy)
        except OSError:
            return None
        # Exits 1 when a file's content differs, which diff-files then names.
        if _listing_git(checkout, ("update-index", "-q", "--refresh"), copy) is None:
            return None
        changed = listed("diff-files", "--name-only", "--no-ext-diff", "-z", index=copy)
    if changed is None:
        return None
    return tracked - changed


def _listing_git(
    checkout: Path, args: Sequence[str], index: Path | None = None
) -> CompletedProcess[bytes] | None:
    """`git ARGS` for `tracked_files`: no transport, bounded in time, on `index` if given;
    None when git could not run."""
    env = dict(_UNTRUSTED_ENV)
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    try:
        return run_git(
            ["-c", "protocol.allow=never", *args],
            cwd=checkout,
            env=env,
            timeout_s=_LISTING_TIMEOUT_S,
        )
    except SandboxError:
        return None
