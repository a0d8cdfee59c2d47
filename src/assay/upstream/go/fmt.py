"""What the Go harnesses write as Go's standard library writes it: `%q` quoting, an
errno's text, `filepath.Abs` paths and `json.MarshalIndent`'s text.

Where assay reproduces a message of PVYai's word for word (a context check that could
not look a path up, a fixture entry its copy refuses), or a file of PVYai's or Cassandra's
byte for byte, the pieces Go formats are formatted here. (Reading bytes as Go does is
`go_text`.)
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import unicodedata
from typing import Any

__all__ = ["go_abs", "go_errno_text", "go_json_indent", "go_quote"]

_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
}  # fmt: skip
_PRINTABLE_CATEGORIES = frozenset("LMNPS")
"""Go's `strconv.IsPrint`: letters, marks, numbers, punctuation, symbols (and ASCII space)."""


def go_quote(text: str) -> str:
    """`text` as Go's `%q` (`strconv.Quote`) writes it: in double quotes, `"` and `\\`
    escaped, printable characters as they are (`café`), the others as Go escapes them
    (`\\n`, `\\x00`, `\\u00a0`, `\\U000e0001`); a byte that is not UTF-8 (a lone surrogate
    of `os.fsdecode`) as `\\xNN`."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as surrogateescape keeps it
            out.append(f"\\x{code - 0xDC00:02x}")
        elif char == " " or (
            code > 0x20 and unicodedata.category(char)[0] in _PRINTABLE_CATEGORIES
        ):
            out.append(char)
        elif char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:  # a lone surrogate: Go's string would hold U+FFFD
            out.append("\ufffd")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_errno_text(number: int) -> str:
    """An errno as Go's `syscall.Errno` words it: the C library's text, its first letter in
    lower case unless the second is upper case (`exec format error`)."""
    text = os.strerror(number)
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text


def go_abs(path: str) -> str:
    """`path` made absolute as Go's `filepath.Abs` makes it: joined to the working directory
    (`$PWD` when it names it, as `os.Getwd` prefers, else the real one) and cleaned, with no
    symlink resolved."""
    if not posixpath.isabs(path):
        path = posixpath.join(_go_getwd(), path)
    cleaned = posixpath.normpath(path)
    # POSIX keeps a leading `//`, Go's Clean does not.
    return "/" + cleaned.lstrip("/") if cleaned.startswith("//") else cleaned


def _go_getwd() -> str:
    pwd = os.environ.get("PWD", "")
    if pwd.startswith("/"):
        try:
            if os.path.samestat(os.stat(pwd), os.stat(".")):
                return pwd
        except OSError:
            pass
    return os.getcwd()


_GO_JSON_ESCAPES = str.maketrans(
    {
        "<": "\\u003c",
        ">": "\\u003e",
        "&": "\\u0026",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def go_json_indent(value: Any) -> str:
    """`value` as Go's `json.MarshalIndent(value, "", "  ")` writes it (no newline at the
    end): text is raw UTF-8 but for what Go's encoder escapes in every string (`<`, `>`,
    `&`, U+2028, U+2029) and what is not text at all (half a surrogate pair: U+FFFD, as Go
    writes an invalid byte)."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    # Outside strings JSON holds none of these characters: replacing them everywhere
    # replaces them in strings alone.
    return _LONE_SURROGATE.sub("\ufffd", text.translate(_GO_JSON_ESCAPES))
