"""The one place that writes GitHub workflow commands, and the guard that stops anyone else.

The runner reads every line a step prints (stdout and stderr) and obeys any line that
starts with `::` (after leading whitespace) or contains the legacy `##[`. Case ids,
failure reasons, model output, PR titles and file names are attacker-controlled, so:

- `escape_data` / `escape_property` encode text placed *inside* a command, the way the
  runner decodes it (`%`, CR, LF; plus `:` and `,` in properties);
- `neutralise` rewrites untrusted *log* text so no line of it can be a command (the rule
  is `assay.core.text.defuse_workflow_commands`, which the terminal output uses too);
- `guarded_output()` routes `sys.stdout` / `sys.stderr` through `neutralise` for the whole
  of `assay ci`, so text printed by any component (the runner's progress lines included)
  is neutralised too; only the functions below reach the real stream unmodified.

The runner splits output into lines on LF, CR and CRLF, so every one of them ends a line here.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, TextIO

from assay.core.text import defuse_workflow_commands, strip_control

__all__ = [
    "add_mask",
    "error",
    "escape_data",
    "escape_property",
    "guarded_output",
    "log",
    "neutralise",
    "notice",
    "on_runner",
    "warning",
]


def escape_data(text: str) -> str:
    """Encode the message part of a workflow command (`::name::<data>`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Encode a property value (`::name key=<value>::`): data escapes plus `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


neutralise = defuse_workflow_commands
"""Rewrite untrusted log text so none of its lines can start a workflow command or hold `##[`."""


def _redact(text: str) -> str:
    from assay._util.secrets import redact  # lazy: start-up (not loaded with this module)

    return redact(text)


class _NeutralisingStream(io.TextIOBase):
    """A text stream that passes whole lines to `raw` after `neutralise`.

    A partial line is held back until its line break arrives: written early, its start
    could combine with the rest into a command.
    """

    def __init__(self, raw: TextIO, lock: threading.RLock) -> None:
        super().__init__()
        self.raw = raw
        self._lock = lock
        self._pending = ""

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", None) or "utf-8"

    def isatty(self) -> bool:
        # A TTY would invite live redrawing (cursor movement, no line breaks).
        return False

    def write(self, s: str) -> int:
        with self._lock:
            text = self._pending + s
            # Cut at LF only: what follows a CR waits for its LF (the runner ends a line at
            # a CR too, but `neutralise` reads the held text whole), so a secret with a CR
            # inside is masked whole rather than in two halves.
            cut = text.rfind("\n") + 1
            self._pending = text[cut:]
            if cut:
                self.raw.write(neutralise(_redact(text[:cut])))
        return len(s)

    def end_line(self) -> None:
        """Finish a held-back partial line so the next write starts a fresh line."""
        with self._lock:
            if self._pending:
                self.raw.write(neutralise(_redact(self._pending)) + "\n")
                self._pending = ""

    def flush(self) -> None:
        with self._lock:
            self.raw.flush()


@dataclass
class _Guard:
    """One `guarded_output` block (one `assay ci` run): its streams and what it said once."""

    out: _NeutralisingStream
    err: _NeutralisingStream
    said_once: set[str] = field(default_factory=set)


_lock = threading.RLock()
_guards: list[_Guard] = []


@contextmanager
def guarded_output() -> Iterator[None]:
    """Neutralise everything written to sys.stdout / sys.stderr inside the block."""
    out = _NeutralisingStream(sys.stdout, _lock)
    err = _NeutralisingStream(sys.stderr, _lock)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    _guards.append(_Guard(out, err))
    try:
        yield
    finally:
        _guards.pop()
        sys.stdout, sys.stderr = saved
        out.end_line()
        err.end_line()
        out.raw.flush()
        err.raw.flush()


def _emit(line: str) -> None:
    """Write one trusted command line to the real stdout, at the start of a line."""
    with _lock:
        if _guards:
            out, err = _guards[-1].out, _guards[-1].err
            out.end_line()
            err.end_line()
            err.raw.flush()
            stream = out.raw
        else:
            stream = sys.stdout
        stream.write(line + "\n")
        stream.flush()


Level = Literal["error", "warning", "notice"]


def _annotation(
    level: Level,
    message: str,
    *,
    file: str | None,
    line: int | None,
    title: str | None,
    once: bool = False,
) -> None:
    # Masked before escaping: `escape_data` writes a CR inside a secret as `%0D`, which
    # the runner turns back into a CR that the log viewer drops.
    message, title, file = _redact(message), title and _redact(title), file and _redact(file)
    props = []
    if file:
        props.append(f"file={escape_property(file)}")
        if line:
            props.append(f"line={int(line)}")
    if title:
        props.append(f"title={escape_property(strip_control(title))}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    # A message can quote the model (a judge's rationale in a case's reason): the log
    # viewer and the diff would render its escape sequences and bidirectional overrides.
    command = f"{head}::{escape_data(strip_control(message))}"
    if once and _said_before(command):
        return
    _emit(command)


def _said_before(command: str) -> bool:
    """Whether this run already made `command`, remembering it if not. Outside a
    `guarded_output` block there is no run to remember in: never."""
    with _lock:
        if not _guards:
            return False
        said = _guards[-1].said_once
        if command in said:
            return True
        said.add(command)
        return False


def error(
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
    once: bool = False,
) -> None:
    """An error annotation (shown on the run and, with `file`, on that line of the diff).

    `once`: not repeated if this run (the `guarded_output` block) already made it, for a
    fault every later attempt would meet again.
    """
    _annotation("error", message, file=file, line=line, title=title, once=once)


def warning(
    message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> None:
    _annotation("warning", message, file=file, line=line, title=title)


def notice(
    message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> None:
    _annotation("notice", message, file=file, line=line, title=title)


def add_mask(value: str) -> None:
    """Ask the runner to replace `value` with *** in every later log line.

    Callers emit it only on a GitHub runner (`on_runner`): anywhere else nothing reads
    the command, and the line itself would print the secret. assay's own redaction covers
    the value from now on either way (`remember_secret`).
    """
    from assay._util.secrets import remember_secret  # lazy: start-up (not loaded with this module)

    remember_secret(value)
    if value.strip():
        _emit(f"::add-mask::{escape_data(value)}")


def on_runner(environ: Mapping[str, str]) -> bool:
    """Whether a GitHub Actions runner reads this process's output (GITHUB_ACTIONS=true)."""
    return environ.get("GITHUB_ACTIONS") == "true"


def log(text: str) -> None:
    """Print a plain log line that may hold untrusted text (ids, reasons, titles, names)."""
    with _lock:
        if _guards:
            _guards[-1].out.end_line()
        stream = _guards[-1].out.raw if _guards else sys.stdout
        stream.write(neutralise(_redact(text)) + "\n")
        stream.flush()
