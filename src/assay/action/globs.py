"""`trigger-paths` globs, with the semantics of GitHub's own `paths:` filters.

`*` matches within one path segment, `**` across segments (`**/` also matches no
directory at all), `?` one character, `[abc]` a class (`a-z` a range, `[!abc]` or
`[^abc]` its complement; never `/`); a pattern ending in `/` matches everything under
that directory. A pattern starting with `!` excludes what it matches; as in GitHub,
later patterns override earlier ones.

Every other member of a class is literal, as in fnmatch: `[[:alpha:]]` is the class of
`[ : a l p h` followed by a `]` (there are no POSIX classes). A reversed range (`[z-a]`)
is an InvalidGlob, which the `trigger-paths` input reports when it is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["InvalidGlob", "check_patterns", "first_match", "glob_regex"]


_NEGATIONS = ("!", "^")
"""What a class may start with to match the characters it does not list (glob, bash, Go)."""


class InvalidGlob(ValueError):
    """A pattern that cannot be matched, e.g. a reversed range `[z-a]`."""


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
            _add_any(out, _ANY_DIRS)
            i += 3
        elif text.startswith("**", i):
            _add_any(out, _ANYTHING)
            i += 2
        elif char == "*":
            _add_any(out, "[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and (end := _class_end(text, i)) is not None:
            out.append(_class_regex(text[i + 1 : end]))
            i = end + 1
        else:  # an unclosed `[` is a literal, as in fnmatch
            out.append(re.escape(char))
            i += 1
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error as exc:  # _class_regex should rule this out; report it, never crash
        raise InvalidGlob(str(exc)) from None


_ANY_DIRS = "(?:.*/)?"
_ANYTHING = ".*"


def _add_any(out: list[str], token: str) -> None:
    """Append a wildcard's regex, folded into a wildcard just before it that already
    matches all it could (`**/**/`, `**/**`, `**/*`): each unbounded run in a row
    multiplies the backtracking against a long path a PR author chose."""
    last = out[-1] if out else None
    if last == _ANYTHING or (last == _ANY_DIRS and token == _ANY_DIRS):
        return  # `.*` then anything of these matches what `.*` alone does
    if last == _ANY_DIRS and token == _ANYTHING:
        out[-1] = _ANYTHING
        return
    out.append(token)


def _class_end(text: str, start: int) -> int | None:
    """The index of the `]` closing the class opened at `start`; None if it is unclosed.

    A `]` right after `[` or `[!` (`[^`) is a member, not the end (`[]a]`, `[!]a]`).
    """
    first = start + 1
    if text.startswith(_NEGATIONS, first):
        first += 1
    if text.startswith("]", first):
        first += 1
    end = text.find("]", first)
    return None if end == -1 else end


def _class_regex(body: str) -> str:
    """The regex for a glob class body (between the brackets): ranges kept, every other
    member escaped so that `[`, `\\`, `&&` or `--` mean themselves (a raw `[` would also
    make Python warn of a nested set), and `/` never matched."""
    negate = body.startswith(_NEGATIONS)
    members = body[1:] if negate else body
    out: list[str] = []
    i = 0
    while i < len(members):
        if i + 2 < len(members) and members[i + 1] == "-":
            low, high = members[i], members[i + 2]
            if low > high:
                raise InvalidGlob(f"bad character range {low}-{high}")
            out.append(f"{re.escape(low)}-{re.escape(high)}")
            i += 3
        else:
            out.append(re.escape(members[i]))
            i += 1
    return f"(?!/)[{'^' if negate else ''}{''.join(out)}]"


def _split_negation(pattern: str) -> tuple[bool, str]:
    """(`pattern` excludes, the glob without its `!`)."""
    negated = pattern.startswith("!")
    return negated, pattern[1:] if negated else pattern


def check_patterns(patterns: Iterable[str]) -> None:
    """Raise InvalidGlob naming the first pattern that cannot be matched."""
    for pattern in patterns:
        _, body = _split_negation(pattern)
        try:
            glob_regex(body)
        except InvalidGlob as exc:
            raise InvalidGlob(f"invalid pattern {pattern!r}: {exc}") from None


def _included_by(path: str, patterns: Iterable[str]) -> str | None:
    """The positive pattern that includes `path`, unless a later `!pattern` excludes it."""
    winner: str | None = None
    for pattern in patterns:
        negated, body = _split_negation(pattern)
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
