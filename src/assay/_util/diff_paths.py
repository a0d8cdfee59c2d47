"""The paths a unified diff names, checked to stay inside the tree it is applied to.

`git apply` is given a Cassandra `input.diff` as it is. Before that, every path the diff
names (`diff --git a/.. b/..`, `--- a/..`, `+++ b/..`, `rename from/to`, `copy from/to`)
must be relative and free of `..` components: a diff from a pull request must not
reach outside the sandbox's base.
"""

from __future__ import annotations

import re

__all__ = ["escaping_diff_paths"]

_HEADERS = ("rename from ", "rename to ", "copy from ", "copy to ")
_GIT_LINE = re.compile(r'^diff --git ("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)\s*$')


def _unquote(path: str) -> str:
    if len(path) >= 2 and path.startswith('"') and path.endswith('"'):
        body = path[1:-1]
        return re.sub(r"\\(.)", r"\1", body)
    return path


def _problem(path: str, *, prefixed: bool) -> str | None:
    path = _unquote(path.strip())
    if path == "/dev/null":
        return None
    if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path):
        return f"{path!r} is absolute"
    parts = path.replace("\\", "/").split("/")
    if prefixed and len(parts) > 1 and parts[0] in ("a", "b"):
        parts = parts[1:]
    if ".." in parts:
        return f"{path!r} leads outside the base (it has a '..' component)"
    return None


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def escaping_diff_paths(text: str) -> list[tuple[int, str]]:
    """(1-based line, why) for each path in the diff's headers that leaves its tree.

    Hunk bodies are skipped by their line counts: a removed `-- comment` line reads
    `--- comment` and is not a header.
    """
    found: list[tuple[int, str]] = []
    old = new = 0
    for number, line in enumerate(text.splitlines(), 1):
        if old > 0 or new > 0:
            if line.startswith("\\"):
                continue
            tag = line[:1]
            old -= tag in (" ", "-", "")
            new -= tag in (" ", "+", "")
            continue
        hunk = _HUNK.match(line)
        if hunk:
            old = int(hunk[1]) if hunk[1] is not None else 1
            new = int(hunk[2]) if hunk[2] is not None else 1
            continue
        candidates: list[tuple[str, bool]] = []
        if line.startswith("diff --git "):
            match = _GIT_LINE.match(line)
            if match:
                candidates = [(match[1], True), (match[2], True)]
            else:  # a path with spaces: judge the words
                candidates = [(word, True) for word in line.split()[2:]]
        elif line.startswith(("--- ", "+++ ")):
            candidates = [(line[4:].split("\t", 1)[0], True)]
        else:
            header = next((h for h in _HEADERS if line.startswith(h)), None)
            if header is not None:
                candidates = [(line[len(header) :], False)]
        for path, prefixed in candidates:
            problem = _problem(path, prefixed=prefixed)
            if problem is not None:
                found.append((number, problem))
    return found
