"""JSON that comes from outside assay (an agent's answer and stdout, a model's tool input,
an HTTP body, a report file), decoded with two rules that `json.loads` does not keep:

- a document nested too deeply is invalid JSON. CPython's decoder raises RecursionError
  past the interpreter's recursion limit (about 1,000 levels of `[`), which every caller's
  `except ValueError` let through as an internal error. Go's decoder, which PVYai reads
  trace lines with, refuses a line too, past its own limit of 10,000 levels;
- a lone UTF-16 surrogate (`"\\ud800"`, valid JSON) becomes U+FFFD, as Go's decoder makes
  it. Python keeps it in the string, and no UTF-8 writer accepts it: one in an agent's
  finding stopped the whole run with a traceback as report.json was written.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["lone_surrogate_at", "loads", "raw_decode"]

_TOO_DEEP = "JSON nested too deeply"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""How a surrogate is written in JSON text; only such a document is walked."""
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""What is left of surrogates once decoded: the decoder joins every valid pair."""


def loads(text: str | bytes, **options: Any) -> Any:
    """`json.loads`; ValueError for invalid JSON, too deep a nesting included."""
    try:
        value = json.loads(text, **options)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    return _without_lone_surrogates(value) if _may_hold_surrogates(text) else value


def raw_decode(decoder: json.JSONDecoder, text: str, index: int) -> tuple[Any, int]:
    """`decoder.raw_decode(text, index)`, by the same two rules."""
    try:
        value, end = decoder.raw_decode(text, index)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    if _SURROGATE_ESCAPE.search(text, index, end):  # within the value, without a copy
        value = _without_lone_surrogates(value)
    return value, end


_LONE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"  # high, no low after
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # low, no high before
)


def lone_surrogate_at(text: str, value: Any) -> int | None:
    """Where the JSON `text`, decoded as `value`, writes half a surrogate pair, or None.

    For files a user wrote (a suite), which are refused rather than repaired. `value`
    says whether there is one (the decoder joins every valid pair); the offset is that of
    the first escape that reads as lone, 0 when none does (an escape after a literal
    backslash, `\\\\ud83d\\ude00`, can hide its pair from the pattern).
    """
    if not _may_hold_surrogates(text) or not _holds_lone_surrogate(value):
        return None
    for match in _LONE_ESCAPE.finditer(text):
        start = first = match.start()
        while first > 0 and text[first - 1] == "\\":
            first -= 1
        if (start - first) % 2 == 0:  # an odd run makes this backslash a literal one
            return start
    return 0


def _may_hold_surrogates(text: str | bytes) -> bool:
    if isinstance(text, str):
        return _SURROGATE_ESCAPE.search(text) is not None
    return _SURROGATE_ESCAPE_BYTES.search(text) is not None


def _holds_lone_surrogate(value: Any) -> bool:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
    return False


def _without_lone_surrogates(value: Any) -> Any:
    """`value` (freshly decoded: changed in place) with every lone surrogate in its
    strings and keys replaced by U+FFFD. Iterative: the document may nest as deep as the
    decoder allowed.
    """
    root = [value]
    pending: list[tuple[Any, Any]] = [(root, 0)]
    while pending:
        container, key = pending.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = _LONE_SURROGATE.sub("\ufffd", item)
        elif isinstance(item, list):
            pending.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            cleaned = {
                (_LONE_SURROGATE.sub("\ufffd", k) if isinstance(k, str) else k): v
                for k, v in item.items()
            }
            container[key] = cleaned
            pending.extend((cleaned, k) for k in cleaned)
    return root[0]
