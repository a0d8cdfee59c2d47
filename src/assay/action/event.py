"""The triggering event, and the decision whether this job runs the evals.

This is the only module that reads the event payload ($GITHUB_EVENT_PATH).

Decision rules (docs/github-action.md explains the why):

- `push` and `workflow_dispatch` run.
- `pull_request` / `pull_request_target` with action opened, synchronize, reopened or
  labeled run when the PR carries the label (ignoring case, as GitHub does), or when a
  changed file matches a trigger path (changed files come from a callback: API first,
  git fallback; when neither works the evals run, saying why). A `labeled` event for
  another label does nothing.
- A PR from a fork is skipped with a notice: `pull_request` gives fork runs no secrets.
  Under `pull_request_target` (which does have secrets) a fork PR runs only on the
  `labeled` event that applies the label, i.e. when a maintainer has just vouched for
  the PR's current head; a later push does not re-run it.
- Every other event or action is skipped with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, ValidationError

from assay.errors import ConfigError, Location

if TYPE_CHECKING:
    from assay.action.changed_files import ChangedFiles

__all__ = ["Decision", "GitHubEvent", "PullRequestRef", "decide", "load_event"]

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
RUN_ACTIONS = ("opened", "synchronize", "reopened", "labeled")
ALWAYS_RUN_EVENTS = ("push", "workflow_dispatch")
FORK_DOCS = "docs/github-action.md#fork-pull-requests"


# GitHub's payloads carry hundreds of fields we do not use; these models read the few we
# need and ignore the rest (the payload is GitHub's contract, not ours).
class _Payload(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Repo(_Payload):
    full_name: str


class _Label(_Payload):
    name: str


class _Ref(_Payload):
    sha: str
    ref: str = ""
    repo: _Repo | None = None
    """None when the head repository (a fork) has been deleted."""


class _PullRequest(_Payload):
    number: int
    title: str = ""
    labels: list[_Label] = []
    head: _Ref
    base: _Ref
    changed_files: int | None = None
    """How many files the PR changes in total (the files API lists at most 3000)."""


class _EventPayload(_Payload):
    action: str | None = None
    pull_request: _PullRequest | None = None
    label: _Label | None = None
    """The label just added or removed (labeled / unlabeled actions)."""


@dataclass(frozen=True)
class PullRequestRef:
    number: int
    title: str
    labels: tuple[str, ...]
    base_repo: str
    head_repo: str | None
    base_sha: str
    head_sha: str
    changed_files: int | None

    @property
    def from_fork(self) -> bool:
        return self.head_repo is None or self.head_repo.lower() != self.base_repo.lower()


@dataclass(frozen=True)
class GitHubEvent:
    name: str
    action: str | None = None
    pull_request: PullRequestRef | None = None
    label_added: str | None = None


@dataclass(frozen=True)
class Decision:
    run: bool
    reason: str
    notices: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def load_event(name: str, path: Path | None) -> GitHubEvent:
    """Read the payload at `path` for event `name`; only pull request events need one."""
    if name not in PULL_REQUEST_EVENTS:
        # The decision for every other event depends on its name alone.
        return GitHubEvent(name=name)
    if path is None:
        raise ConfigError(f"the {name} event needs its payload, but GITHUB_EVENT_PATH is unset")
    if not path.is_file():
        raise ConfigError(f"the {name} event needs its payload, but {path} is not a file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"unreadable event payload: {exc.msg}", Location(path, exc.lineno, exc.colno)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"unreadable event payload: {exc}", Location(path)) from None
    try:
        payload = _EventPayload.model_validate(data)
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"])
        raise ConfigError(
            f"unexpected event payload at `{where}`: {exc.errors()[0]['msg']}", Location(path)
        ) from None
    if payload.pull_request is None:
        raise ConfigError(f"the {name} payload has no pull_request", Location(path))
    return GitHubEvent(
        name=name,
        action=payload.action,
        pull_request=_pull_ref(payload.pull_request),
        label_added=payload.label.name if payload.label else None,
    )


def _pull_ref(pull: _PullRequest) -> PullRequestRef:
    return PullRequestRef(
        number=pull.number,
        title=pull.title,
        labels=tuple(label.name for label in pull.labels),
        base_repo=pull.base.repo.full_name if pull.base.repo else "",
        head_repo=pull.head.repo.full_name if pull.head.repo else None,
        base_sha=pull.base.sha,
        head_sha=pull.head.sha,
        changed_files=pull.changed_files,
    )


def decide(
    event: GitHubEvent,
    *,
    label: str,
    trigger_paths: tuple[str, ...],
    changed_files: Callable[[PullRequestRef], ChangedFiles],
) -> Decision:
    """Run or skip, with the reason; `changed_files` is called only when the answer needs it."""
    if event.name in ALWAYS_RUN_EVENTS:
        return Decision(True, f"{event.name} event")
    pull = event.pull_request
    if event.name not in PULL_REQUEST_EVENTS or pull is None:
        return Decision(False, f"the {event.name} event does not run evals")
    if event.action not in RUN_ACTIONS:
        return Decision(False, f"{event.name} action `{event.action}` does not run evals")
    if event.action == "labeled" and not _same_label(event.label_added, label):
        return Decision(False, f"labeled with {event.label_added!r}, not {label!r}")
    if pull.from_fork:
        return _decide_fork(event, pull, label=label)
    if any(_same_label(name, label) for name in (*pull.labels, event.label_added)):
        return Decision(True, f"PR #{pull.number} carries the {label!r} label")
    return _decide_by_files(pull, changed_files(pull), label=label, trigger_paths=trigger_paths)


def _same_label(name: str | None, label: str) -> bool:
    """GitHub label names are case-insensitive: a repository cannot have `Bug` and `bug`."""
    return name is not None and name.casefold() == label.casefold()


def _decide_fork(event: GitHubEvent, pull: PullRequestRef, *, label: str) -> Decision:
    if event.name == "pull_request_target" and event.action == "labeled":
        return Decision(
            True,
            f"a maintainer applied {label!r} to fork PR #{pull.number} (pull_request_target)",
        )
    origin = pull.head_repo or "a deleted fork"
    if event.name == "pull_request_target":
        why = (
            f"PR #{pull.number} comes from {origin}; under pull_request_target a fork PR runs "
            f"only when a maintainer applies the {label!r} label after reviewing its head "
            f"(re-apply it after new pushes). See {FORK_DOCS}"
        )
    else:
        why = (
            f"PR #{pull.number} comes from {origin}: pull_request runs from forks get no "
            f"secrets, so the evals cannot call a model. See {FORK_DOCS}"
        )
    return Decision(False, f"fork PR #{pull.number} skipped", notices=(why,))


def _decide_by_files(
    pull: PullRequestRef, files: ChangedFiles, *, label: str, trigger_paths: tuple[str, ...]
) -> Decision:
    from assay.action.globs import first_match

    warnings = files.problems
    hit = first_match(files.paths, trigger_paths)
    if hit is not None:
        path, pattern = hit
        return Decision(
            True, f"PR #{pull.number} changes {path} (matches {pattern})", warnings=warnings
        )
    if not files.complete:
        why = "; ".join(files.problems) or "no source of changed files answered"
        return Decision(
            True,
            f"could not list every file PR #{pull.number} changes ({why}); "
            "running the evals to be safe",
            warnings=warnings,
        )
    return Decision(
        False,
        f"PR #{pull.number} changes no file matching trigger-paths "
        f"({', '.join(trigger_paths) or 'none'}) and does not carry the {label!r} label",
        warnings=warnings,
    )
