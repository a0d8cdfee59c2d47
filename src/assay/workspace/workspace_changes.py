"""The changed-files view both change detectors produce (see `git_changes` and `baseline`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["ChangeCollector", "WorkspaceChanges", "path_text", "porcelain_quoted"]


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
    porcelain: tuple[str, ...] = ()
    """`changed`, each name as `git status --porcelain` prints it (`porcelain_quoted`):
    what PVYai's parser reads."""
    hidden: tuple[str, ...] = ()
    """Of `ignored`, the files only ignore rules the agent wrote or changed hide (a task
    sandbox's baseline knows the fixture's own rules): no change to PVYai, shown apart."""


def path_text(name: str) -> str:
    """A path as text that always serialises: bytes that are not UTF-8 become `\\xNN`.

    Names come from the file system (`os.fsdecode`), where such bytes are lone
    surrogates that no JSON encoder accepts.
    """
    return os.fsencode(name).decode("utf-8", "backslashreplace")


_C_ESCAPES = {
    0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f", 0x0D: "r",
    0x22: '"', 0x5C: "\\",
}  # fmt: skip
"""Bytes git's C quoting writes as a backslash and a letter; other control bytes are octal."""


def porcelain_quoted(name: str) -> str:
    """A file-system name (`os.fsdecode` form) as `git status --porcelain` prints it.

    git's C quoting with its defaults (`core.quotePath` on): `"`, `\\` and the control
    characters with a backslash (`\\t`, or octal), every byte that is not ASCII in octal,
    and the whole name in double quotes when it has any of those or a space.
    """
    raw = os.fsencode(name)
    text = "".join(_quoted_byte(byte) for byte in raw)
    return f'"{text}"' if len(text) != len(raw) or b" " in raw else text


def _quoted_byte(byte: int) -> str:
    if byte in _C_ESCAPES:
        return "\\" + _C_ESCAPES[byte]
    if byte < 0x20 or byte >= 0x7F:
        return f"\\{byte:03o}"
    return chr(byte)


class ChangeCollector:
    """Sets of file-system names (`os.fsdecode` form) that `result` turns into the view."""

    def __init__(self) -> None:
        self.added: set[str] = set()
        self.modified: set[str] = set()
        self.deleted: set[str] = set()
        self.renamed: set[tuple[str, str]] = set()
        self.ignored: set[str] = set()
        self.hidden: set[str] = set()

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
            hidden=_texts(self.hidden & self.ignored),
            porcelain=tuple(sorted(porcelain_quoted(name) for name in changed)),
        )


def _texts(names: set[str]) -> tuple[str, ...]:
    return tuple(sorted(path_text(name) for name in names))
