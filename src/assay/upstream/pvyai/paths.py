"""PVYai's rules for the paths and event keys a task suite names, in one place.

Whitespace is what Go's `strings.TrimSpace` trims (`go_trim_space`), everywhere PVYai
trims: blank fields, paths, argv elements, trace events. A path is trimmed, its
backslashes become slashes, and it is cleaned as Go's `path.Clean` does (`d/../a.txt` is
`a.txt`, `./a.txt` is `a.txt`). It is refused when it is absolute, holds a `:` anywhere
(`C:\\x`, `a:b`), or cleans to `.`, `..` or something under `..`. Lists are deduplicated
and sorted after normalising; event keys are only trimmed.

A changed file is what PVYai's parser makes of a line of `git status --porcelain`
(`changed_files`): git's quoted form of the name, read back without unquoting, so a
name git quotes (`"a b.txt"`) never equals the name a suite writes (`a b.txt`); a
changed name holding `:` is left out, as PVYai leaves it out (`unnamed_changes` keeps
them, for assay's warning).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

__all__ = [
    "BAD_PATH",
    "changed_files",
    "go_trim_space",
    "normalize_eval_path",
    "normalize_files",
    "normalize_strings",
    "unnamed_changes",
]

BAD_PATH = "must be a relative workspace path"
"""PVYai's words for a path it refuses."""

GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""What Go's `unicode.IsSpace` calls space. Python's `str.strip()` also strips
U+001C-U+001F, which Go keeps: `"\\x1f"` is a name to PVYai, not a blank."""


def go_trim_space(text: str) -> str:
    """`text` trimmed as Go's `strings.TrimSpace` trims it."""
    return text.strip(GO_SPACE)


def normalize_eval_path(raw: str, *, colon: bool = False) -> str | None:
    """The cleaned path; `""` when it is blank; None when PVYai refuses it (`colon`: a `:`
    is no reason to)."""
    text = go_trim_space(raw.replace("\\", "/"))
    if not text:
        return ""
    if text.startswith("/") or (":" in text and not colon):
        return None
    clean = posixpath.normpath(text)
    if clean.startswith("//"):  # normpath keeps a leading '//'; Go's Clean does not
        clean = "/" + clean.lstrip("/")
    if clean in (".", "..") or clean.startswith("../"):
        return None
    return clean


def normalize_files(files: Iterable[str]) -> tuple[str, ...]:
    """Every usable path of `files`, normalised, without duplicates, sorted."""
    kept = {path for raw in files if (path := normalize_eval_path(raw))}
    return tuple(sorted(kept))


def normalize_strings(values: Iterable[str]) -> tuple[str, ...]:
    """The non-blank `values`, trimmed, without duplicates, sorted."""
    return tuple(sorted({text for value in values if (text := go_trim_space(value))}))


def changed_files(porcelain_names: Iterable[str]) -> tuple[str, ...]:
    """The changed files PVYai reports for names as `git status --porcelain` prints them.

    PVYai keeps a status line's text after the `XY ` code, trimmed, and past its last
    ` -> ` (a rename's new name), then normalises it as a path: the quotes and escapes git
    added stay (a newline is `"a/nb"`: `\\n`, its backslash made a slash), and a quoted
    name holding ` -> ` keeps only its tail (`"p -> q"` is `q"`).

    PVYai's path rule refuses a name holding `:`, so such a change is left out
    (`unnamed_changes` lists them).
    """
    return normalize_files(_status_line_path(name) for name in porcelain_names)


def unnamed_changes(porcelain_names: Iterable[str]) -> tuple[str, ...]:
    """The changes `changed_files` leaves out because PVYai's path rule refuses a `:` in
    a name: each as PVYai's parser would name it but for that rule, sorted.

    To PVYai they are no change, never unexpected: an agent could hide any file behind a
    colon in its name. assay keeps PVYai's verdict and reports them as hidden changes
    (`grading.hidden_changes`).
    """
    named = set(changed_files(porcelain_names))
    kept = {
        path
        for name in porcelain_names
        if (path := normalize_eval_path(_status_line_path(name), colon=True))
    }
    return tuple(sorted(kept - named))


def _status_line_path(text: str) -> str:
    text = go_trim_space(text)
    arrow = text.rfind(" -> ")
    return text[arrow + 4 :] if arrow >= 0 else text
