"""The library API's arguments checked where they enter.

A wrong type is a TypeError naming the parameter, what it takes and what it got, at the
call the user wrote: not an AttributeError three calls down, nor a string iterated as
its characters (`load_suites("evals")` once looked for files `e`, `v`, `a`, ...). A
single string or path where several are taken means that one.
"""

from __future__ import annotations

import os
import reprlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "argument_error",
    "as_path",
    "as_paths",
    "as_texts",
    "expect",
    "is_number",
    "is_path",
    "items",
]

_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 60


def argument_error(name: str, expected: str, value: object) -> TypeError:
    """`name must be <expected>, got <type> <value>` (the value when it is a builtin one)."""
    got = type(value).__name__
    if type(value).__module__ == "builtins":
        got += f" {_SHOWN.repr(value)}"
    return TypeError(f"{name} must be {expected}, got {got}")


def expect(name: str, value: object, accepts: type | Callable[[Any], bool], expected: str) -> None:
    """Raise `argument_error` unless `value` is an `accepts` (or `accepts(value)` holds).

    A bool is never taken for a number, though Python makes it an int: `repeat=True` is a
    mistake, not one attempt.
    """
    if isinstance(accepts, type):
        ok = isinstance(value, accepts) and (accepts is bool or not isinstance(value, bool))
    else:
        ok = accepts(value)
    if not ok:
        raise argument_error(name, expected, value)


def is_number(value: object) -> bool:
    """An int or a float, not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_path(value: object) -> bool:
    return isinstance(value, str | os.PathLike) and isinstance(os.fspath(value), str)


def as_path(name: str, value: object) -> Path:
    """`value` (a str or an os.PathLike) as a Path."""
    expect(name, value, is_path, "a path (str or os.PathLike)")
    return Path(value)  # type: ignore[arg-type]


def items(name: str, value: object, expected: str) -> list[Any]:
    """The items of an iterable that is not itself one string, bytes or mapping."""
    if isinstance(value, str | bytes | dict) or not isinstance(value, Iterable):
        raise argument_error(name, expected, value)
    return list(value)


def as_paths(name: str, value: object) -> list[Path]:
    """One path, or an iterable of them, as a list of Paths."""
    if is_path(value):
        return [Path(value)]  # type: ignore[arg-type]
    given = items(name, value, "a path or a list of paths (str or os.PathLike)")
    return [as_path(f"{name}[{index}]", item) for index, item in enumerate(given)]


def as_texts(name: str, value: object) -> tuple[str, ...]:
    """One string, or an iterable of them, as a tuple."""
    if isinstance(value, str):
        return (value,)
    given = items(name, value, "a str or a list of str")
    for index, item in enumerate(given):
        expect(f"{name}[{index}]", item, str, "a str")
    return tuple(given)
