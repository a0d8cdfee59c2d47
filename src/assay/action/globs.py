"""`trigger-paths` globs, with the semantics of GitHub's own `paths:` filters.

`*` matches within one path segment, `**` across segments (`**/` also matches no
directory at all), `?` one character, `[abc]` a class (`a-z` a range, `[!abc]` or
`[^abc]` its complement; never `/`); a pattern ending in `/` matches everything under
that directory. A pattern starting with `!` excludes what it matches; as in GitHub,
later patterns override earlier ones. Dotfiles get no special treatment: `*` matches
`.env` and `**` matches `.github/`.

Every other member of a class is literal, as in fnmatch: `[[:alpha:]]` is the class of
`[ : a l p h` followed by a `]` (there are no POSIX classes). A reversed range (`[z-a]`)
is an InvalidGlob, which the `trigger-paths` input reports when it is read.

The workflow writes the pattern but the PR author names the files, up to 3,000 of them.
A backtracking matcher (a regex, fnmatch) takes time that grows as the name's length to
the power of the number of `*` in a pattern such as `*a*a*a*a*b` (4.5 s for 50 `a`s
against seven `*a`), so a glob is compiled to
an automaton instead and matched by following every way through it at once: each
character of the path costs at most one step per part of the pattern, whatever the
pattern, and a step already taken from the same set of places is remembered.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Glob", "InvalidGlob", "check_patterns", "compile_glob", "first_match"]


_NEGATIONS = ("!", "^")
"""What a class may start with to match the characters it does not list (glob, bash, Go)."""


class InvalidGlob(ValueError):
    """A pattern that cannot be matched, e.g. a reversed range `[z-a]`."""


_CharTest = Callable[[str], bool]


@dataclass(frozen=True)
class _CharClass:
    """`[...]`: one character of a path segment (never `/`) it lists, or with `negate`
    one it does not list."""

    negate: bool
    members: frozenset[str]
    ranges: tuple[tuple[str, str], ...]

    def __call__(self, char: str) -> bool:
        if char == "/":
            return False
        listed = char in self.members or any(low <= char <= high for low, high in self.ranges)
        return listed != self.negate


def _in_segment(char: str) -> bool:
    return char != "/"


def _any_char(char: str) -> bool:
    return True


def _is_slash(char: str) -> bool:
    return char == "/"


class _Wildcard(enum.Enum):
    STAR = "*"
    """Any run of characters within a segment."""
    ANYTHING = "**"
    """Any run of characters, `/` included."""
    ANY_DIRS = "**/"
    """Nothing, or any run of characters that ends with `/`."""


_Token = _Wildcard | _CharTest
"""A wildcard, or a test of exactly one character."""


def _tokens(pattern: str) -> list[_Token]:
    """One glob (without its `!`) as its wildcards and one-character tests."""
    text = pattern.strip().removeprefix("./")
    if text.endswith("/"):
        text += "**"
    out: list[_Token] = []
    i = 0
    while i < len(text):
        char = text[i]
        if text.startswith("**/", i):
            _add_any(out, _Wildcard.ANY_DIRS)
            i += 3
        elif text.startswith("**", i):
            _add_any(out, _Wildcard.ANYTHING)
            i += 2
        elif char == "*":
            _add_any(out, _Wildcard.STAR)
            i += 1
        elif char == "?":
            out.append(_in_segment)
            i += 1
        elif char == "[" and (end := _class_end(text, i)) is not None:
            out.append(_char_class(text[i + 1 : end]))
            i = end + 1
        else:  # an unclosed `[` is a literal, as in fnmatch
            out.append(char.__eq__)
            i += 1
    return out


def _add_any(out: list[_Token], token: _Wildcard) -> None:
    """Append a wildcard, folded into a wildcard just before it that already matches all
    it could (`**/**/`, `**/**`, `**/*`): fewer parts, fewer steps per character."""
    last = out[-1] if out else None
    if last is _Wildcard.ANYTHING or (last is _Wildcard.ANY_DIRS and token is _Wildcard.ANY_DIRS):
        return  # `**` then anything of these matches what `**` alone does
    if last is _Wildcard.ANY_DIRS and token is _Wildcard.ANYTHING:
        out[-1] = _Wildcard.ANYTHING
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


def _char_class(body: str) -> _CharClass:
    """A glob class body (between the brackets): `a-z` a range, every other member itself
    (`[`, `\\`, `&&` or `--` included)."""
    negate = body.startswith(_NEGATIONS)
    members = body[1:] if negate else body
    singles: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(members):
        if i + 2 < len(members) and members[i + 1] == "-":
            low, high = members[i], members[i + 2]
            if low > high:
                raise InvalidGlob(f"bad character range {low}-{high}")
            ranges.append((low, high))
            i += 3
        else:
            singles.add(members[i])
            i += 1
    return _CharClass(negate=negate, members=frozenset(singles), ranges=tuple(ranges))


@dataclass(frozen=True)
class _Place:
    """A place in a glob's automaton: the character it takes (None: it takes none), where
    taking it leads, and where one may go on without taking a character."""

    takes: _CharTest | None
    then: tuple[int, ...] = ()
    skip: tuple[int, ...] = ()


def _places(tokens: list[_Token]) -> tuple[_Place, ...]:
    """The automaton of `tokens`; its last place is the end of a match."""
    places: list[_Place] = []
    for token in tokens:
        here = len(places)
        if token is _Wildcard.ANY_DIRS:  # nothing (skip past `/`), or anything, then `/`
            places.append(_Place(None, skip=(here + 1, here + 3)))
            places.append(_Place(_any_char, then=(here + 1,), skip=(here + 2,)))
            places.append(_Place(_is_slash, then=(here + 3,)))
        elif token is _Wildcard.STAR:
            places.append(_Place(_in_segment, then=(here,), skip=(here + 1,)))
        elif token is _Wildcard.ANYTHING:
            places.append(_Place(_any_char, then=(here,), skip=(here + 1,)))
        else:
            places.append(_Place(token, then=(here + 1,)))
    places.append(_Place(None))
    return tuple(places)


_MAX_REMEMBERED_MOVES = 4096
"""Moves one glob remembers; past that it works each out again (still one step per part)."""
_DEAD = 0
"""The state no character leads out of: the path cannot match any more."""


class Glob:
    """One compiled glob (without its `!`), matching whole repo-relative paths.

    A state is the set of places the path so far can have reached; the move from a state
    on a character is worked out once and remembered, so a path costs about one lookup a
    character.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._places = _places(_tokens(pattern))
        self._end = len(self._places) - 1
        self._states: list[frozenset[int]] = []
        self._numbers: dict[frozenset[int], int] = {}
        self._moves: list[dict[str, int]] = []
        self._remembered = 0
        self._lock = threading.Lock()
        self._number(frozenset())  # _DEAD
        self._start = self._number(self._reach((0,)))

    def matches(self, path: str) -> bool:
        """Whether the whole of `path` matches; time linear in its length."""
        state = self._start
        for at, char in enumerate(path):
            following = self._moves[state].get(char)
            if following is None:
                following = self._learn(state, char)
                if following is None:  # remembers all it may: go on without
                    return self._end in self._follow(self._states[state], path[at:])
            if following == _DEAD:
                return False
            state = following
        return self._end in self._states[state]

    def _learn(self, state: int, char: str) -> int | None:
        """The state `char` leads to from `state`, remembered; None once too many are."""
        with self._lock:
            if self._remembered >= _MAX_REMEMBERED_MOVES:
                return None
            following = self._number(self._step(self._states[state], char))
            self._moves[state][char] = following
            self._remembered += 1
            return following

    def _number(self, places: frozenset[int]) -> int:
        number = self._numbers.get(places)
        if number is None:
            number = self._numbers[places] = len(self._states)
            self._states.append(places)
            self._moves.append({})
        return number

    def _follow(self, places: frozenset[int], text: str) -> frozenset[int]:
        for char in text:
            places = self._step(places, char)
            if not places:
                break
        return places

    def _step(self, places: frozenset[int], char: str) -> frozenset[int]:
        """Where taking `char` from any of `places` can lead."""
        return self._reach(
            after
            for index in places
            if (takes := self._places[index].takes) is not None and takes(char)
            for after in self._places[index].then
        )

    def _reach(self, indices: Iterable[int]) -> frozenset[int]:
        """`indices` and every place reachable from them without taking a character."""
        seen: set[int] = set()
        todo = list(indices)
        while todo:
            index = todo.pop()
            if index not in seen:
                seen.add(index)
                todo.extend(self._places[index].skip)
        return frozenset(seen)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> Glob:
    """The compiled glob (without its `!`); InvalidGlob if it cannot be matched."""
    return Glob(pattern)


def _split_negation(pattern: str) -> tuple[bool, str]:
    """(`pattern` excludes, the glob without its `!`)."""
    negated = pattern.startswith("!")
    return negated, pattern[1:] if negated else pattern


def check_patterns(patterns: Iterable[str]) -> None:
    """Raise InvalidGlob naming the first pattern that cannot be matched."""
    for pattern in patterns:
        _, body = _split_negation(pattern)
        try:
            compile_glob(body)
        except InvalidGlob as exc:
            raise InvalidGlob(f"invalid pattern {pattern!r}: {exc}") from None


def _included_by(path: str, patterns: Iterable[str]) -> str | None:
    """The positive pattern that includes `path`, unless a later `!pattern` excludes it."""
    winner: str | None = None
    for pattern in patterns:
        negated, body = _split_negation(pattern)
        if body.strip() and compile_glob(body).matches(path):
            winner = None if negated else pattern
    return winner


def first_match(paths: Iterable[str], patterns: tuple[str, ...]) -> tuple[str, str] | None:
    """The first path any pattern includes, with that pattern; None when nothing matches."""
    for path in paths:
        pattern = _included_by(path, patterns)
        if pattern is not None:
            return path, pattern
    return None
