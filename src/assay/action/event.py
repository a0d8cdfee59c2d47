"""The triggering event, and the decision whether this job runs the evals.

This is the only module that reads the event payload ($GITHUB_EVENT_PATH).

Decision rules (docs/github-action.md explains the why):

- `push`, `workflow_dispatch`, `schedule` and `merge_group` run: there is no PR to
  decide from, and a nightly run or a merge queue's required check must evaluate.
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from assay.errors import ConfigError, SourcePosition

__all__ = ["ChangedFiles", "Decision", "GitHubEvent", "PullRequestRef", "decide", "load_event"]

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
RUN_ACTIONS = ("opened", "synchronize", "reopened", "labeled")
ALWAYS_RUN_EVENTS = ("push", "workflow_dispatch", "schedule", "merge_group")
FORK_DOCS = "docs/github-action.md#fork-pull-requests"

_T = TypeVar("_T")


class _BadPayload(Exception):
    """A field of the payload is missing or of the wrong type; args: (dotted path, problem)."""


# GitHub's payloads carry hundreds of fields we do not use; these readers take the few we
# need and ignore the rest (the payload is GitHub's contract, not ours). Plain dicts, not
# pydantic: the decision runs before assay's dependencies are installed (decide.py).
_REQUIRED: Any = object()


def _field(
    data: Mapping[str, Any], where: str, key: str, kind: type[_T], default: Any = _REQUIRED
) -> _T:
    """`data[key]`, checked to be a `kind`; `default` when absent (or null, if it is None)."""
    if key not in data or (data[key] is None and default is None):
        if default is _REQUIRED:
            raise _BadPayload(f"{where}{key}", "Field required")
        return default  # type: ignore[no-any-return]
    value = data[key]
    # bool is an int to isinstance; a payload saying `"number": true` is still wrong.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _BadPayload(f"{where}{key}", f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _object(data: Mapping[str, Any], where: str, key: str) -> Mapping[str, Any] | None:
    return _field(data, where, key, dict, None)


def _label_names(pull: Mapping[str, Any]) -> tuple[str, ...]:
    labels = _field(pull, "pull_request.", "labels", list, [])
    names = []
    for index, label in enumerate(labels):
        if not isinstance(label, dict):
            raise _BadPayload(f"pull_request.labels.{index}", "expected dict")
        names.append(_field(label, f"pull_request.labels.{index}.", "name", str))
    return tuple(names)


def _repo_name(ref: Mapping[str, Any], where: str) -> str | None:
    """None when the repository (a fork) has been deleted."""
    repo = _object(ref, where, "repo")
    return None if repo is None else _field(repo, f"{where}repo.", "full_name", str)


@dataclass(frozen=True)
class ChangedFiles:
    """The files a pull request changes, as far as a source could list them (changed_files.py)."""

    paths: tuple[str, ...]
    """Repo-relative paths (a rename contributes both names)."""
    complete: bool
    """False when `paths` may miss files: a capped API listing, or no source answered."""
    source: str
    problems: tuple[str, ...] = ()
    """What went wrong on the way (printed as warnings)."""


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
            f"unreadable event payload: {exc.msg}", SourcePosition(path, exc.lineno, exc.colno)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"unreadable event payload: {exc}", SourcePosition(path)) from None
    if not isinstance(data, dict):
        raise ConfigError("unexpected event payload: not a JSON object", SourcePosition(path))
    if not isinstance(data.get("pull_request"), dict):
        raise ConfigError(f"the {name} payload has no pull_request", SourcePosition(path))
    try:
        return _read_pull_event(name, data)
    except _BadPayload as exc:
        where, problem = exc.args
        raise ConfigError(
            f"unexpected event payload at `{where}`: {problem}", SourcePosition(path)
        ) from None


def _read_pull_event(name: str, data: Mapping[str, Any]) -> GitHubEvent:
    pull = _field(data, "", "pull_request", dict)
    label = _object(data, "", "label")
    base = _field(pull, "pull_request.", "base", dict)
    head = _field(pull, "pull_request.", "head", dict)
    return GitHubEvent(
        name=name,
        action=_field(data, "", "action", str, None),
        pull_request=PullRequestRef(
            number=_field(pull, "pull_request.", "number", int),
            title=_field(pull, "pull_request.", "title", str, ""),
            labels=_label_names(pull),
            base_repo=_repo_name(base, "pull_request.base.") or "",
            head_repo=_repo_name(head, "pull_request.head."),
            base_sha=_field(base, "pull_request.base.", "sha", str),
            head_sha=_field(head, "pull_request.head.", "sha", str),
            changed_files=_field(pull, "pull_request.", "changed_files", int, None),
        ),
        label_added=None if label is None else _field(label, "label.", "name", str),
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
    from assay.action.globs import first_match  # lazy: start-up (not loaded with this module)

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
