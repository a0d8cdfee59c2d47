"""Bytes as a Go program turns them into text: each byte that is not part of valid UTF-8
is one U+FFFD, where Python's `replace` writes one per run of them.

PVYai's JSON carries its agents' and commands' output this way (`encoding/json` writes a
string's invalid bytes so), and reads suites and trace lines so; assay reads every such
text through `go_text`, the one place for the rule.
"""

from __future__ import annotations

import codecs

__all__ = ["go_text"]

_GO_REPLACE = "assay.go-replace"


def _replace_each_byte(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    return "\ufffd" * (error.end - error.start), error.end


codecs.register_error(_GO_REPLACE, _replace_each_byte)


def go_text(raw: bytes) -> str:
    """`raw` as Go reads it into a string: each invalid UTF-8 byte as U+FFFD."""
    return raw.decode("utf-8", _GO_REPLACE)
