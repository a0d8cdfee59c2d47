"""What a change source (a GitHub pull request or two local refs) tells the scaffolder.

Both sources describe the change the same way, so everything after them (skip rules,
layout, the stub) cannot tell a pull request from a local clone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from assay.scaffold.layout import without_controls

__all__ = [
    "Change",
    "ChangeSource",
    "ChangedFile",
    "License",
    "Side",
    "SkippedFile",
    "Unavailable",
]

Side = Literal["base", "head"]

_ABSENT_ON_BASE = frozenset({"added", "copied"})


@dataclass(frozen=True)
class ChangedFile:
    """One file of the change, named as GitHub's pull request files list names it."""

    status: str
    """added, modified, removed, renamed, copied or changed (mode only)."""
    path: str
    """The path on the head side (for a removed file, the path it had)."""
    previous_path: str | None = None
    """renamed / copied: the path on the base side."""

    def path_on(self, side: Side) -> str | None:
        """Where the file is on `side`, or None when the change adds or removes it there."""
        if side == "base":
            if self.status in _ABSENT_ON_BASE:
                return None
            return self.previous_path or self.path
        return None if self.status == "removed" else self.path

    def absence(self, side: Side) -> str:
        """Why the file is not on `side` (only meaningful when `path_on(side)` is None)."""
        if side == "base":
            copied = f" (a copy of {self.previous_path})" if self.status == "copied" else ""
            return f"added by the change{copied}: not on the base side"
        return "removed by the change: not on the head side"


@dataclass(frozen=True)
class Change:
    """A change between two commits of one repository."""

    repository: str
    """`owner/repo`: the GitHub repository, or `local/<directory>` for a non-GitHub clone."""
    title: str
    """The pull request title, or the head commit's subject."""
    body: str
    """The pull request description, or the head commit's message body."""
    source: str
    """Where the change came from: the PR URL, or `<repo path> <base>..<head>`."""
    base_sha: str
    head_sha: str
    files: tuple[ChangedFile, ...]
    fallback_name: str
    """A case name for when the title slugifies to nothing (`pr-123`, a short SHA)."""
    warnings: tuple[str, ...] = ()
    """Things the user should know that are not errors (e.g. a truncated file list)."""

    def sha(self, side: Side) -> str:
        return self.base_sha if side == "base" else self.head_sha


@dataclass(frozen=True)
class SkippedFile:
    """A file the scaffolder did not capture, and why (recorded in notes.skipped_files)."""

    path: str
    reason: str

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}

    def shown(self) -> SkippedFile:
        """The same, safe to print: a file name (also inside the reason, a rename's old
        name) is anyone's text, and may hold line breaks and terminal escapes."""
        return SkippedFile(without_controls(self.path), without_controls(self.reason))


@dataclass(frozen=True)
class Unavailable:
    """A file's content cannot be captured at a ref; `reason` says why, for skipped_files."""

    reason: str
    over_cap: bool = False
    """Only the size cap stands in the way: the file is there, and is a regular file."""

    @classmethod
    def not_found(cls, ref: str) -> Unavailable:
        return cls(f"content not available at {ref[:12]} (404)")

    @classmethod
    def too_large(cls, size: int, cap: int) -> Unavailable:
        return cls(f"{size} bytes, over the {cap}-byte size cap (--max-file-size)", over_cap=True)

    @classmethod
    def not_a_file(cls, kind: str) -> Unavailable:
        return cls(f"a {kind}, not a regular file")


@dataclass(frozen=True)
class License:
    """The repository's root license file at a ref."""

    path: str
    content: bytes


class ChangeSource(Protocol):
    """Where a change comes from. Every method raises ConfigError for what the user must fix."""

    def describe(self) -> Change:
        """The change: metadata and the changed files (read once; sources may cache it)."""
        ...

    def read(self, path: str, *, ref: str, max_bytes: int | None) -> bytes | Unavailable:
        """The content of `path` at commit `ref`, or why it cannot be captured.

        `max_bytes` is the size cap (None: no cap); a larger file is Unavailable.too_large.
        """
        ...

    def detected_license(self, ref: str) -> License | None:
        """The source's own idea of the license at `ref`, asked after the usual file names."""
        ...

    def patch(self, file: ChangedFile) -> str | None:
        """The file's hunks (from the first `@@` line); "" when it changed without any (a
        pure rename, a mode change, an empty file added or removed; GitHub answers so for
        a binary file too); None when there is no text patch (binary, too large). The
        caller tells these apart by the file's content (diff.py)."""
        ...
