"""The changed-files view both change detectors produce (see `git_changes` and `baseline`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["ChangeCollector", "WorkspaceChanges", "path_text"]


@dataclass(frozen=True)
class WorkspaceChanges:
    """Paths changed relative to the baseline, repo-relative, each kind sorted."""

    changed: tuple[str, ...]
    """Every path added, modified, deleted or renamed (both names), untracked files included."""
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    """(old, new) pairs."""
    ignored: tuple[str, ...] = ()
    """New files that ignore rules match (build output, caches): left out of `changed`, as
    `git status` leaves them out, but kept so that a file a suite names is never hidden."""


def path_text(name: str) -> str:
    """A path as text that always serialises: bytes that are not UTF-8 become `\\xNN`.

    Names come from the file system (`os.fsdecode`), where such bytes are lone
    surrogates that no JSON encoder accepts.
    """
    return os.fsencode(name).decode("utf-8", "backslashreplace")


class ChangeCollector:
    """Sets of file-system names (`os.fsdecode` form) that `result` turns into the view."""

    def __init__(self) -> None:
        self.added: set[str] = set()
        self.modified: set[str] = set()
        self.deleted: set[str] = set()
        self.renamed: set[tuple[str, str]] = set()
        self.ignored: set[str] = set()

    def result(self) -> WorkspaceChanges:
        # A path git no longer tracks but that still exists (e.g. `git rm --cached`) shows
        # up deleted and untracked at once: to the workspace it is a modified file.
        for untracked in (self.added, self.ignored):
            both = untracked & self.deleted
            self.modified |= both
            untracked -= both
            self.deleted -= both
        changed = self.added | self.modified | self.deleted
        changed.update(name for pair in self.renamed for name in pair)
        return WorkspaceChanges(
            changed=_texts(changed),
            added=_texts(self.added),
            modified=_texts(self.modified),
            deleted=_texts(self.deleted),
            renamed=tuple(sorted((path_text(old), path_text(new)) for old, new in self.renamed)),
            ignored=_texts(self.ignored),
        )


def _texts(names: set[str]) -> tuple[str, ...]:
    return tuple(sorted(path_text(name) for name in names))
