"""Building a rubric case's `input.diff` from per-file hunks.

Which changes a text diff can replay on the captured base (`diff_entries`), and the diff
itself (`render_diff`). GitHub's pull request files carry only the hunks of each file
(`@@ ...` onwards); `git apply` needs the `diff --git` header, the file's fate (new,
deleted, renamed, copied) and the `---` / `+++` lines. Paths here are already portable
(see layout.py): they hold no quotes, backslashes or control characters, so none of them
needs git's C-quoting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.scaffold.capture import BINARY_REASON, SideCapture, is_binary
from assay.scaffold.change import Change, ChangedFile, ChangeSource, SkippedFile, Unavailable
from assay.scaffold.layout import PathAllocator

__all__ = ["DiffEntry", "diff_entries", "render_diff"]

_MODE = "100644"
_HEAD_MAY_NOT_BE_A_FILE = frozenset({"added", "changed"})
"""Statuses under which the head side may be a symlink or a submodule while the base side
is a regular file or absent: an added link, or git's type change (T), which is `changed`."""


@dataclass(frozen=True)
class DiffEntry:
    status: str
    """added, removed, modified, renamed, copied or changed."""
    old_path: str | None
    """The base-side path (None when added)."""
    new_path: str | None
    """The head-side path (None when removed)."""
    hunks: str
    """The hunks from the first `@@` line; empty when the header alone makes the change (a
    rename without edits, an empty file added or removed)."""


def diff_entries(
    source: ChangeSource,
    change: Change,
    capture: SideCapture,
    places: PathAllocator,
    *,
    max_file_size: int,
) -> tuple[list[DiffEntry], list[SkippedFile]]:
    """One entry per file whose change can be replayed on the captured base."""
    base_content = {f.source_path: f.content for f in capture.files}
    entries: list[DiffEntry] = []
    skipped: list[SkippedFile] = []
    for changed in change.files:
        old = changed.path_on("base")
        if changed.status == "copied":
            why = "a copy of a file the base does not hold"
        elif old is not None and old not in base_content:
            continue  # recorded with the reason its base file was skipped
        else:
            base = base_content[old] if old is not None else None
            replay = _replay(source, change, changed, base=base, max_file_size=max_file_size)
            if not isinstance(replay, _LeftOut):
                new = changed.path if changed.status != "removed" else None
                entries.append(
                    DiffEntry(
                        status=changed.status,
                        old_path=places.place(old) if old is not None else None,
                        new_path=places.place(new) if new is not None else None,
                        hunks=replay,
                    )
                )
                continue
            why = replay.reason
        skipped.append(SkippedFile(changed.path, f"not in input.diff: {why}"))
    return entries, skipped


@dataclass(frozen=True)
class _LeftOut:
    reason: str
    """Why no text diff can recreate the file's head side."""


_BINARY_HEAD = _LeftOut(
    f"{BINARY_REASON} on the head side: input.diff is text, and `git apply` (which "
    "Cassandra's sandbox runs on it) refuses a `Binary files ... differ` line"
)
_TOO_LARGE = _LeftOut("no text patch (a diff too large to show)")
_MODE_ONLY = _LeftOut("no content change (only the file mode changed)")


def _replay(
    source: ChangeSource,
    change: Change,
    changed: ChangedFile,
    *,
    base: bytes | None,
    max_file_size: int,
) -> str | _LeftOut:
    """The hunks that turn `changed`'s base side (`base`; None when added) into its head
    side; "" when the section's header alone does (a pure rename, or an empty file added
    or removed, which `git apply` creates or deletes from the header); or why no text
    diff can.

    A source gives no hunks for an empty file, a binary one, a mode change or a diff too
    large to show, and GitHub's answer tells them apart by none of its fields, so the
    head side's content decides.
    """
    head: bytes | Unavailable | None = None
    if changed.status in _HEAD_MAY_NOT_BE_A_FILE:
        head = source.read(changed.path, ref=change.head_sha, max_bytes=0)  # its kind only
        if isinstance(head, Unavailable) and not head.over_cap:
            # A diff that claims a symlink is a regular file, or git's two-section type
            # change cut down to one, would not give the head side.
            return _LeftOut(f"head side: {head.reason}")
    patch = source.patch(changed)
    if patch or (patch == "" and changed.status == "renamed"):
        return patch
    if changed.status == "removed":
        return "" if base == b"" else _TOO_LARGE
    if head != b"":  # read under a cap of 0, an empty file is already all there is
        head = source.read(changed.path, ref=change.head_sha, max_bytes=max_file_size)
    if isinstance(head, Unavailable):
        return _LeftOut(f"no text patch, and the head side was not read: {head.reason}")
    if is_binary(head):
        return _BINARY_HEAD
    if head == (base or b""):
        return "" if changed.status == "added" else _MODE_ONLY
    return _TOO_LARGE


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
