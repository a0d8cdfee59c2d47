"""`git diff main...eval` written in Python when the change only adds plain files.

Most review cases add their fixture files on `eval` and change nothing of `main`. For
such a change git's output follows from each new file's bytes alone (one hunk from
`-0,0`, no rename or copy detection without a deletion, no function context), so it is
written here, byte for byte as git writes it, instead of starting a git process per
sandbox. Anything else (a modified or deleted file, a `.gitattributes` anywhere, a path
git would quote or pad, an object id whose short form is ambiguous) returns None and
the caller asks git. tests/test_sandbox_added_diff.py checks the output against git's.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from assay.workspace.objects import EXECUTABLE_MODE, FILE_MODE, Entry

__all__ = ["added_files_diff"]

_PLAIN_PATH = re.compile(r"[A-Za-z0-9_.+@,=-]+(?:/[A-Za-z0-9_.+@,=-]+)*")
"""Paths git prints as they are: no quoting (control, quote, backslash, non-ASCII
bytes) and no tab after the name (a space)."""
_ABBREV = 7
"""git's shortest abbreviation (core.abbrev auto, for repositories of a few objects)."""
_BINARY_SNIFF = 8000
"""git calls a file binary when its first 8000 bytes hold a NUL."""
_MODES = {FILE_MODE: "100644", EXECUTABLE_MODE: "100755"}
"""Regular files only (a fixture file always is one); a symlink is left to git."""
_MAX_OBJECTS = 1 << 13
"""From 2**14 objects on, git's automatic abbreviation grows past 7 digits; well below
that, 7 it is."""
_BIG_FILE = 512 * 1024 * 1024
"""git's core.bigFileThreshold: a larger file is shown as binary whatever it holds."""
_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def added_files_diff(
    base: Mapping[str, Entry],
    head: Mapping[str, Entry],
    contents: Mapping[str, bytes],
    *,
    object_ids: Collection[str],
    has_attributes: bool,
) -> str | None:
    """git's diff from `base` to `head` when `head` only adds files to `base`; else None.

    `contents` holds each added path's bytes, `object_ids` every
    object of the repository (a short id must name one object only).
    """
    if has_attributes or len(object_ids) >= _MAX_OBJECTS:
        return None
    added = sorted(path for path in head if path not in base)
    if any(base[path] != head.get(path) for path in base):
        return None  # modified or deleted: git's own diff and rename logic decide
    parts: list[bytes] = []
    for path in added:
        entry, data = head[path], contents.get(path)
        mode = _MODES.get(entry.mode)
        if data is None or mode is None or len(data) > _BIG_FILE:
            return None
        if not _PLAIN_PATH.fullmatch(path):
            return None
        short = entry.sha[:_ABBREV]
        if sum(1 for sha in object_ids if sha.startswith(short)) != 1:
            return None
        parts.append(_added_file(path, mode, short, data, empty=entry.sha == _EMPTY_BLOB))
    return b"".join(parts).decode("utf-8", "replace")


def _added_file(path: str, mode: str, short: str, data: bytes, *, empty: bool) -> bytes:
    name = path.encode()
    header = b"diff --git a/%s b/%s\nnew file mode %s\nindex 0000000..%s\n" % (
        name,
        name,
        mode.encode(),
        short.encode(),
    )
    if empty:
        return header
    if b"\x00" in data[:_BINARY_SNIFF]:
        return header + b"Binary files /dev/null and b/%s differ\n" % name
    lines = data.split(b"\n")
    complete = lines[-1] == b""
    if complete:
        lines.pop()
    count = len(lines)
    span = b"+1" if count == 1 else b"+1,%d" % count
    body = b"".join(b"+" + line + b"\n" for line in lines)
    if not complete:
        body += b"\\ No newline at end of file\n"
    return header + b"--- /dev/null\n+++ b/%s\n@@ -0,0 %s @@\n" % (name, span) + body
