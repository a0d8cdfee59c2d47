"""Control characters, and text made safe to print, in one place.

Untrusted text (model output, fixture names, PR titles) reaches terminals, CI logs,
Markdown and file names. One set of characters counts as control characters: C0
(line breaks, ESC), DEL, C1 (the one-byte CSI and OSC), the Unicode line and paragraph
separators, and the bidirectional formatting characters (marks, embeddings, overrides,
isolates), with which a finding title or a case id can display in another order than it
reads ("Trojan Source", CVE-2021-42574); right-to-left scripts need none of them to show
right to left. Two readings of it:
- one line (ids, names, terminal lines): every one of them goes;
- multi-line text (reviews, Markdown, judge rationales): tab and newline are layout and stay.

A wider set, `INVISIBLE_CHARACTERS`, is what secret redaction looks through: the control
characters above, every Unicode format character (category Cf: the zero-width space and
joiners, the soft hyphen, the byte order mark, tag characters), the other default-ignorable
code points (variation selectors, Hangul fillers) and the bytes 0x80-0x9F that a
`surrogateescape` decoding of non-UTF-8 bytes makes (a raw C1 byte). Displayed, none of
them shows, so a key with one inside reads as the key. Text is never stripped of the
format characters for display (emoji and some scripts need the joiners).

And one rule for text printed where a GitHub Actions runner reads it (every line a step
prints, stdout and stderr): `defuse_workflow_commands`. The runner obeys a line that starts
with `::` after leading whitespace, or that holds the legacy `##[` anywhere, and it ends a
line at LF, CR and CRLF alike.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "BIDI_FORMATTING",
    "CONTROL_CHARACTERS",
    "FORMAT_CHARACTERS",
    "INVISIBLE_CHARACTERS",
    "defuse_workflow_commands",
    "has_control",
    "one_line",
    "strip_control",
    "strip_invisible",
]

BIDI_FORMATTING: Final = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""The bidirectional formatting characters, a class body (report.html shows them as code points)."""
_BEYOND_C0: Final = "\x7f-\x9f\u2028\u2029" + BIDI_FORMATTING
CONTROL_CHARACTERS: Final = "\x00-\x1f" + _BEYOND_C0
"""A regex character-class body (no brackets), for composing larger classes."""

FORMAT_CHARACTERS: Final = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
"""Unicode's format characters (Cf) and other default-ignorable code points, a class body."""
_UNDECODED_C1: Final = "\udc80-\udc9f"
"""Raw bytes 0x80-0x9F as `surrogateescape` decodes them: a one-byte CSI (0x9B) in a file."""
INVISIBLE_CHARACTERS: Final = CONTROL_CHARACTERS + FORMAT_CHARACTERS + _UNDECODED_C1
"""What redaction looks through: a class body, every character of CONTROL_CHARACTERS included."""

_CONTROL: Final = re.compile(f"[{CONTROL_CHARACTERS}]")
_CONTROL_RUN: Final = re.compile(f"[{CONTROL_CHARACTERS}]+")
_CONTROL_BUT_LAYOUT: Final = re.compile(f"[\x00-\x08\x0b-\x1f{_BEYOND_C0}]")


_INVISIBLE_RUN: Final = re.compile(f"[{INVISIBLE_CHARACTERS}]+")


def strip_invisible(text: str) -> str:
    """`text` without any of INVISIBLE_CHARACTERS, line breaks included: for matching, never
    for display."""
    return _INVISIBLE_RUN.sub("", text)


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def one_line(text: str, replacement: str = " ", *, collapse: bool = False) -> str:
    """`text` with each control character (each run of them, with `collapse`) replaced."""
    return (_CONTROL_RUN if collapse else _CONTROL).sub(replacement, text)


def strip_control(text: str, replacement: str = "") -> str:
    """Multi-line `text` with its control characters replaced, tab and newline kept."""
    return _CONTROL_BUT_LAYOUT.sub(replacement, text)


_LINE_BREAK: Final = re.compile(r"(\r\n|\r|\n)")
_DEFUSED_COMMAND_START: Final = ": :"
_LEGACY_MARKER: Final = "##["
_DEFUSED_LEGACY_MARKER: Final = "##\\["


def _defuse_line(line: str) -> str:
    # str.lstrip removes every character the runner's TrimStart does, and more.
    stripped = line.lstrip()
    if stripped.startswith("::"):
        indent = line[: len(line) - len(stripped)]
        line = indent + _DEFUSED_COMMAND_START + stripped[2:]
    # One pass suffices: the replacement puts a backslash before every `[` it touches.
    return line.replace(_LEGACY_MARKER, _DEFUSED_LEGACY_MARKER)


def defuse_workflow_commands(text: str) -> str:
    """`text` rewritten so none of its lines can start a workflow command or hold `##[`.

    Line breaks are kept; only a leading `::` (becomes `: :`) and `##[` (becomes `##\\[`)
    change, so ordinary output is printed exactly as it was. Idempotent.
    """
    parts = _LINE_BREAK.split(text)
    # split() with a capture group alternates text, separator, text, ...
    parts[::2] = [_defuse_line(p) for p in parts[::2]]
    return "".join(parts)
