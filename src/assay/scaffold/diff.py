"""Building a rubric case's `input.diff` from per-file hunks.

GitHub's pull request files carry only the hunks of each file (`@@ ...` onwards); `git
apply` needs the `diff --git` header, the file's fate (new, deleted, renamed, copied)
and the `---` / `+++` lines. Paths here are already portable (see layout.py): they hold
no quotes, backslashes or control characters, so none of them needs git's C-quoting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DiffEntry", "render_diff"]

_MODE = "100644"


@dataclass(frozen=True)
class DiffEntry:
    status: str
    """added, removed, modified, renamed, copied or changed."""
    old_path: str | None
    """The base-side path (None when added)."""
    new_path: str | None
    """The head-side path (None when removed)."""
    hunks: str
    """The hunks from the first `@@` line; empty for a rename or copy without edits."""


def render_diff(entries: Sequence[DiffEntry]) -> str:
    return "".join(_section(entry) for entry in entries)


def _section(entry: DiffEntry) -> str:
    old = entry.old_path or entry.new_path
    new = entry.new_path or entry.old_path
    assert old is not None and new is not None, "a diff entry names at least one path"
    lines = [f"diff --git a/{old} b/{new}"]
    minus, plus = f"a/{old}", f"b/{new}"
    if entry.status == "added":
        lines.append(f"new file mode {_MODE}")
        minus = "/dev/null"
    elif entry.status == "removed":
        lines.append(f"deleted file mode {_MODE}")
        plus = "/dev/null"
    elif entry.status in ("renamed", "copied") and old != new:
        verb = "rename" if entry.status == "renamed" else "copy"
        lines += [f"{verb} from {old}", f"{verb} to {new}"]
    if entry.hunks:
        lines += [f"--- {minus}", f"+++ {plus}"]
        body = entry.hunks if entry.hunks.endswith("\n") else entry.hunks + "\n"
        return "\n".join(lines) + "\n" + body
    return "\n".join(lines) + "\n"
