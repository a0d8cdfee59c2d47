"""The files a pull request changes: from the GitHub API, else from git in the workspace.

The API (`GET /repos/{repo}/pulls/{number}/files`, paginated) lists at most 3000 files
of a PR. When a PR is bigger, or the API fails, `git diff --name-only <base>...HEAD` in
the checkout is tried: it has no cap but needs the base commit fetched (`fetch-depth: 0`).
When neither works the caller is told why (`paths` None) and decides what that means.
git speaks for the PR only when the checkout is the PR's code: under `pull_request_target`
(base checkout) or any other HEAD, a diff against the base shows nothing of the PR
(`foreign_checkout`), so git counts as unavailable there.

Standard library only: the run/skip decision uses this before assay's dependencies are
installed (decide.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TypeGuard
from urllib.parse import quote

from assay.action.event import ChangedFiles, PullRequestRef
from assay.action.rest import RestError, RestReader
from assay.errors import SandboxError
from assay.isolation.git import repository_fact, run_git

__all__ = ["MAX_PR_FILES", "ChangedFiles", "foreign_checkout", "list_changed_files"]

MAX_PR_FILES = 3000
"""GitHub's cap on the files API of one pull request."""
GIT_TIMEOUT_S = 60
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class _Unavailable(Exception):
    """One source of changed files could not answer."""


def list_changed_files(
    pull: PullRequestRef,
    *,
    api: RestReader | None,
    repository: str,
    workspace: Path,
    not_the_pr: str | None = None,
) -> ChangedFiles:
    """The API's list; git's when the API fails or is capped; the best partial list otherwise.

    `not_the_pr` says why the checkout is not the PR's code (`foreign_checkout`): then git
    is not asked."""
    problems: list[str] = []
    partial: tuple[str, ...] = ()
    if api is None:
        problems.append("no github-token to list the PR's files")
    else:
        try:
            partial, total = _from_api(api, repository, pull)
        except _Unavailable as exc:
            problems.append(str(exc))
        else:
            if total is None:
                return ChangedFiles(partial, True, "GitHub API")
            problems.append(
                f"PR #{pull.number} changes {total} files; "
                f"the GitHub API lists only the first {MAX_PR_FILES}"
            )
    if not_the_pr is not None:
        problems.append(f"git diff cannot stand in: {not_the_pr}")
        return ChangedFiles(partial, False, "GitHub API" if partial else "none", tuple(problems))
    try:
        return ChangedFiles(_from_git(workspace, pull.base_sha), True, "git diff", tuple(problems))
    except _Unavailable as exc:
        problems.append(str(exc))
    return ChangedFiles(partial, False, "GitHub API" if partial else "none", tuple(problems))


def _from_api(
    api: RestReader, repository: str, pull: PullRequestRef
) -> tuple[tuple[str, ...], str | None]:
    """The listed paths, and None when that is all of them (else how many there are)."""
    base = f"/repos/{quote(repository, safe='/')}/pulls/{pull.number}"
    try:
        paths: list[str] = []
        listed = 0
        for changed in api.pages(f"{base}/files"):
            listed += 1
            paths.extend(_names(changed))
            if listed >= MAX_PR_FILES:
                break
    except RestError as exc:
        raise _Unavailable(f"the GitHub API could not list the PR's files ({exc})") from None
    if listed < MAX_PR_FILES:
        return tuple(paths), None  # fewer than the cap: that is every file
    # At the cap: how many are there now? The payload's count may be older than the list.
    current: object = None
    try:
        current = _field_of(api.get(base), "changed_files")
    except RestError:
        pass
    total = current if _is_count(current) else pull.changed_files
    if _is_count(total):
        return tuple(paths), (str(total) if total > listed else None)
    return tuple(paths), f"over {MAX_PR_FILES}"


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _names(changed: object) -> list[str]:
    """A listed file's path, and its old path when it was renamed."""
    if not isinstance(changed, dict) or not isinstance(changed.get("filename"), str):
        raise RestError("the files API answered an entry without a filename")
    previous = changed.get("previous_filename")
    return [changed["filename"], *([previous] if isinstance(previous, str) and previous else [])]


def _field_of(data: object, key: str) -> object:
    return data.get(key) if isinstance(data, dict) else None


def foreign_checkout(
    event_name: str, pull: PullRequestRef, *, workspace: Path, merge_sha: str
) -> str | None:
    """Why the workspace is not the PR's code, so that diffing it against the PR's base
    shows none of the PR's changes; None when HEAD is the PR's head or its merge commit
    (`merge_sha`: GITHUB_SHA of a `pull_request` run), or when there is no git to ask."""
    if event_name == "pull_request_target":
        return "under pull_request_target the workspace is the base branch's checkout"
    head = _git_head(workspace)
    if head is None or head in (pull.head_sha, merge_sha):
        return None
    return (
        f"the workspace's HEAD {head[:12]} is neither PR #{pull.number}'s head nor its merge commit"
    )


def _git_head(workspace: Path) -> str | None:
    head = repository_fact(["rev-parse", "--verify", "-q", "HEAD"], cwd=workspace)
    return head if head is not None and _SHA.fullmatch(head) else None


def _from_git(workspace: Path, base_sha: str) -> tuple[str, ...]:
    if not _SHA.fullmatch(base_sha):
        raise _Unavailable(f"the event names no usable base commit ({base_sha[:64]!r})")
    argv = [
        "-c",
        "core.quotePath=false",
        "diff",
        "--name-only",
        "-z",
        "--no-renames",
        f"{base_sha}...HEAD",
        "--",
    ]
    try:
        done = run_git(argv, cwd=workspace, timeout_s=GIT_TIMEOUT_S, search_up=True)
    except SandboxError as exc:
        raise _Unavailable(f"git diff failed in {workspace}: {exc}") from None
    if done.returncode != 0:
        first = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = first[0] if first else f"exit {done.returncode}"
        raise _Unavailable(
            f"git diff {base_sha[:12]}...HEAD failed ({detail}); "
            "check out with fetch-depth: 0 for the fallback"
        )
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return tuple(name for name in names if name)
