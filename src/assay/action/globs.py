"""`trigger-paths` globs, with the semantics of GitHub's own `paths:` filters.

`*` matches within one path segment, `**` across segments (`**/` also matches no
directory at all), `?` one character, `[abc]` a class; a pattern ending in `/` matches
everything under that directory. A pattern starting with `!` excludes what it matches;
as in GitHub, later patterns override earlier ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["first_match", "glob_regex"]


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile one glob (without its `!`) to a regex matching whole repo-relative paths."""
    text = pattern.strip().removeprefix("./")
    if text.endswith("/"):
        text += "**"
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = text.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
                i += 1
            else:
                body = text[i + 1 : end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                out.append(f"[{'^' if negate else ''}{body.replace(chr(92), chr(92) * 2)}]")
                i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _included_by(path: str, patterns: Iterable[str]) -> str | None:
    """The positive pattern that includes `path`, unless a later `!pattern` excludes it."""
    winner: str | None = None
    for pattern in patterns:
        negated = pattern.startswith("!")
        body = pattern[1:] if negated else pattern
        if body.strip() and glob_regex(body).fullmatch(path):
            winner = None if negated else pattern
    return winner


def first_match(paths: Iterable[str], patterns: tuple[str, ...]) -> tuple[str, str] | None:
    """The first path any pattern includes, with that pattern; None when nothing matches."""
    for path in paths:
        pattern = _included_by(path, patterns)
        if pattern is not None:
            return path, pattern
    return None
