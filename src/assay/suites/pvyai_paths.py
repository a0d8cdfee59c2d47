"""PVYai's rules for the paths and event keys a task suite names, in one place.

A path is trimmed, its backslashes become slashes, and it is cleaned as Go's
`path.Clean` does (`d/../a.txt` is `a.txt`, `./a.txt` is `a.txt`). It is refused when
it is absolute, holds a `:` anywhere (`C:\\x`, `a:b`), or cleans to `.`, `..` or
something under `..`. The same rule normalises the changed files a workspace reports, so
a file whose name PVYai cannot express is never a changed file. Lists are deduplicated
and sorted after normalising; event keys are only trimmed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

__all__ = ["BAD_PATH", "normalize_eval_path", "normalize_files", "normalize_strings"]

BAD_PATH = "must be a relative workspace path"
"""PVYai's words for a path it refuses."""


def normalize_eval_path(raw: str, *, from_disk: bool = False) -> str | None:
    """The cleaned path; `""` when it is blank; None when PVYai refuses it.

    `from_disk`: a name read from the workspace, where a backslash is part of the name
    (and of assay's `\\xNN` escapes for bytes that are not UTF-8), not a separator.
    """
    text = (raw if from_disk else raw.replace("\\", "/")).strip()
    if not text:
        return ""
    if text.startswith("/") or ":" in text:
        return None
    clean = posixpath.normpath(text)
    if clean.startswith("//"):  # normpath keeps a leading '//'; Go's Clean does not
        clean = "/" + clean.lstrip("/")
    if clean in (".", "..") or clean.startswith("../"):
        return None
    return clean


def normalize_files(files: Iterable[str], *, from_disk: bool = False) -> tuple[str, ...]:
    """Every usable path of `files`, normalised, without duplicates, sorted."""
    kept = {path for raw in files if (path := normalize_eval_path(raw, from_disk=from_disk))}
    return tuple(sorted(kept))


def normalize_strings(values: Iterable[str]) -> tuple[str, ...]:
    """The non-blank `values`, trimmed, without duplicates, sorted."""
    return tuple(sorted({text for value in values if (text := value.strip())}))
