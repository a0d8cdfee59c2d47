"""Reading an agent's stdout: JSON-line trace events and its structured answer.

PVYai's rule: every stdout line that is a JSON object with a `type` (or `event`) is a
trace event, keyed `type` plus `:name` when it has a `name` (`{"type": "tool", "name":
"read_file"}` -> `tool:read_file`). Lines and both values are trimmed as Go trims
(`go_trim_space`); `event` is used when `type` is missing, blank or not a string; a
`name` that is not a non-blank string is left out of the key. Lines that Go's JSON
decoder refuses (`NaN`, `Infinity`, a number past float64's range such as `1e999`) are
no events. Other lines are the agent's prose and are ignored here. A line carrying
`findings` or `verdict` is the agent's answer when it did not write one to its findings
file; the last such line wins.

PVYai reads a task's trace events from the first MiB of the agent's stdout, all it keeps
of it (`subject.read_agent_stream`, `trace_events_of`); lines end at `\n` only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from assay._util import json_text
from assay.errors import ConfigError, SourcePosition
from assay.subject import read_agent_stream
from assay.upstream.pvyai.paths import go_trim_space

__all__ = [
    "StdoutReader",
    "TraceKeys",
    "parse_json_object",
    "read_trace_file",
    "trace_events_of",
    "trace_key",
]


MAX_TRACE_KEYS = 10_000
"""Distinct event keys kept per attempt, besides those the case requires."""
MAX_KEY_CHARS = 1_000
"""A longer key is kept only when the case requires it."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _float64(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # Go's decoder refuses what float64 cannot hold; Python reads inf
        raise ValueError(f"{text} is out of float64's range")
    return value


def _float64_int(text: str) -> int:
    value = int(text)
    if len(text) > 308:  # no shorter integer is past float64's range
        try:
            float(value)
        except OverflowError:
            raise ValueError(f"{text[:20]}... is out of float64's range") from None
    return value


def parse_json_object(line: str) -> dict[str, Any] | None:
    """The JSON object on this line, or None when the line is anything else (or JSON
    that Go's decoder refuses)."""
    text = go_trim_space(line)
    if not text.startswith("{"):
        return None
    try:
        value = json_text.loads(
            text, parse_constant=_refuse_constant, parse_float=_float64, parse_int=_float64_int
        )
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _text(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if not isinstance(value, str):
        return None
    return go_trim_space(value) or None


def trace_key(obj: object) -> str | None:
    """The event key of one parsed JSON line, or None when it is not a trace event."""
    if not isinstance(obj, dict):
        return None
    kind = _text(obj, "type") or _text(obj, "event")
    if kind is None:
        return None
    name = _text(obj, "name")
    return kind if name is None else f"{kind}:{name}"


class TraceKeys:
    """One attempt's distinct trace event keys, in the order first seen, bounded.

    The checks test presence (PVYai's `requiredTraceEvents`), so a repeated key adds
    nothing. An agent printing millions of different events, or one event whose name is
    megabytes long, must not grow assay's memory or the report without bound: past
    MAX_TRACE_KEYS keys, or past MAX_KEY_CHARS in one, a key is kept only when it is one
    of `required`, so every check still sees exactly what it asks about.
    """

    def __init__(self, required: Iterable[str] = ()) -> None:
        self.keys: list[str] = []
        self._seen: set[str] = set()
        self._required = frozenset(go_trim_space(key) for key in required)

    def add(self, key: str) -> None:
        if key in self._seen:
            return
        if key in self._required or (len(self.keys) < MAX_TRACE_KEYS and len(key) <= MAX_KEY_CHARS):
            self.keys.append(key)
            self._seen.add(key)


class StdoutReader:
    """A line callback for the agent's stdout that keeps only what assay needs from it.

    `required` are the trace events the case's checks look for (kept whatever else the
    agent prints).
    """

    def __init__(
        self,
        required: Iterable[str] = (),
        *,
        record: Callable[[str, dict[str, Any] | None, str | None], None] | None = None,
    ) -> None:
        self._trace = TraceKeys(required)
        self._record = record
        """Told each line, its object and its trace key (the attempt's transcript)."""
        self.last_findings: dict[str, Any] | None = None
        """The last line that was a JSON object with a `findings` key."""
        self.last_verdict: dict[str, Any] | None = None
        """The last line that was a JSON object with a `verdict` key."""

    def __call__(self, line: str) -> None:
        obj = parse_json_object(line)
        if obj is None:
            if self._record is not None:
                self._record(line, None, None)
            return
        if "findings" in obj:
            self.last_findings = obj
        if "verdict" in obj:
            self.last_verdict = obj
        key = trace_key(obj)
        if key is not None:
            self._trace.add(key)
        if self._record is not None:
            self._record(line, obj, key)

    @property
    def events(self) -> list[str]:
        return self._trace.keys


def trace_events_of(stdout: str, required: Iterable[str] = ()) -> list[str]:
    """PVYai's trace event keys of an agent's stdout (its `ParseTraceEventKeys`), bounded
    as TraceKeys bounds them (`required` are always kept)."""
    keys = TraceKeys(required)
    for line in stdout.split("\n"):
        key = trace_key(parse_json_object(line))
        if key is not None:
            keys.add(key)
    return keys.keys


def read_trace_file(path: Path, required: Iterable[str] = ()) -> list[str]:
    """The trace event keys of an agent's saved stdout, read as PVYai reads the stdout it
    kept: its first MiB. `required` are kept whatever else the file holds (see TraceKeys)."""
    try:
        stdout, _ = read_agent_stream(path)
    except OSError as exc:
        raise ConfigError(f"cannot read trace file: {exc.strerror}", SourcePosition(path)) from None
    return trace_events_of(stdout, required)
