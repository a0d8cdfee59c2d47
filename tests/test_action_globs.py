"""`trigger-paths` matching takes time linear in the path whatever the pattern, and means
exactly what the regex translation it replaced meant.

The workflow writes the pattern, the PR author names the files: the regex took 4.5 s to
refuse 50 `a`s for `*a*a*a*a*a*a*a*b`, and each further `a` cost more.
"""

from __future__ import annotations

import re
import time
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.action import globs
from assay.action.globs import Glob, InvalidGlob, compile_glob

MANY_STARS = "*a*a*a*a*a*a*a*b"


class CountingGlob(Glob):
    """A Glob that counts the steps it works out (each costs one look at every place)."""

    steps = 0

    def _step(self, places: frozenset[int], char: str) -> frozenset[int]:
        self.steps += 1
        return super()._step(places, char)


def _steps(pattern: str, path: str) -> tuple[bool, int]:
    glob = CountingGlob(pattern)
    return glob.matches(path), glob.steps


def test_many_stars_against_a_long_name_are_decided_at_once() -> None:
    started = time.perf_counter()
    assert compile_glob(MANY_STARS).matches("a" * 5_000) is False
    assert compile_glob(MANY_STARS).matches("a" * 5_000 + "b") is True
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("pattern", "unit", "tail"),
    [
        (MANY_STARS, "a", ""),
        ("**/*eval*/**/*eval*/**/*.yaml", "evaleval/", "z.txt"),
        ("**/*-*-*-*-*-*/x", "a-", "/y"),
        ("**/**/**/**/*.md", "d/", "e.mdx"),
    ],
)
def test_the_work_does_not_grow_with_the_name(pattern: str, unit: str, tail: str) -> None:
    """Each step is remembered: ten times the name costs no more steps."""
    matched, steps = _steps(pattern, unit * 500 + tail)
    assert (matched, steps) == _steps(pattern, unit * 5_000 + tail)
    assert steps < 50


def test_without_memory_each_character_is_one_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past what a glob may remember (names of many distinct characters), every character
    still costs one step, never a search."""
    monkeypatch.setattr(globs, "_MAX_REMEMBERED_MOVES", 0)
    name = "a" * 5_000
    started = time.perf_counter()
    assert _steps(MANY_STARS, name) == (False, len(name))
    assert _steps(MANY_STARS, name + "b") == (True, len(name) + 1)
    assert time.perf_counter() - started < 1.0


# The translation to a regex that the automaton replaced, kept as the meaning to agree with.
def _regex_glob(pattern: str) -> re.Pattern[str]:
    text = pattern.strip().removeprefix("./")
    if text.endswith("/"):
        text += "**"
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append("[^/]*")
            i += 1
        elif text[i] == "?":
            out.append("[^/]")
            i += 1
        elif text[i] == "[" and (end := _regex_class_end(text, i)) is not None:
            out.append(_regex_class(text[i + 1 : end]))
            i = end + 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _regex_class_end(text: str, start: int) -> int | None:
    first = start + 1 + text.startswith(("!", "^"), start + 1)
    first += text.startswith("]", first)
    end = text.find("]", first)
    return None if end == -1 else end


def _regex_class(body: str) -> str:
    negate = body.startswith(("!", "^"))
    members = body[1:] if negate else body
    out: list[str] = []
    i = 0
    while i < len(members):
        if i + 2 < len(members) and members[i + 1] == "-":
            if members[i] > members[i + 2]:
                raise InvalidGlob("bad character range")
            out.append(f"{re.escape(members[i])}-{re.escape(members[i + 2])}")
            i += 3
        else:
            out.append(re.escape(members[i]))
            i += 1
    return f"(?!/)[{'^' if negate else ''}{''.join(out)}]"


PIECES = ["a", "b", ".", "/", "-", "*", "**", "**/", "?", "[", "]", "!", "^", "\\", " ", "\n"]
PIECES += ["[ab]", "[!a]", "[^/]", "[a-b]", "[b-a]", "[]a]", "[/]", "[.-/]", "[!]"]
NAME_CHARS = ["a", "b", ".", "/", "-", "[", "]", "!", "^", "\\", " ", "\n", "é"]
patterns = st.lists(st.sampled_from(PIECES), max_size=9).map("".join)
names = st.lists(st.text(alphabet=st.sampled_from(NAME_CHARS), max_size=10), max_size=8)


@pytest.mark.parametrize("memory", [4096, 3], ids=["remembered", "mostly-worked-out-again"])
@settings(max_examples=600, deadline=None)
@given(pattern=patterns, paths=names)
@pytest.mark.slow
def test_the_automaton_means_what_the_regex_meant(
    memory: int, pattern: str, paths: list[str]
) -> None:
    try:
        expected = _regex_glob(pattern)
    except InvalidGlob:
        with pytest.raises(InvalidGlob):
            Glob(pattern)
        return
    with mock.patch.object(globs, "_MAX_REMEMBERED_MOVES", memory):
        glob = Glob(pattern)  # one glob for every path, as trigger-paths uses it
        for path in paths:
            assert glob.matches(path) is bool(expected.fullmatch(path)), (pattern, path)
