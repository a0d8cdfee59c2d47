"""JSON that comes from outside assay (an agent's answer and stdout, a model's tool input,
an HTTP body), decoded with one rule: a document nested too deeply is invalid JSON.

CPython's decoder raises RecursionError past the interpreter's recursion limit (about
1,000 levels of `[`), which every caller's `except ValueError` let through as an internal
error. Go's decoder, which PVYai reads trace lines with, refuses such a line the same way
it refuses any other invalid one.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads", "raw_decode"]

_TOO_DEEP = "JSON nested too deeply"


def loads(text: str | bytes, **options: Any) -> Any:
    """`json.loads`; ValueError for invalid JSON, too deep a nesting included."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None


def raw_decode(decoder: json.JSONDecoder, text: str, index: int) -> tuple[Any, int]:
    """`decoder.raw_decode(text, index)`; ValueError for too deep a nesting too."""
    try:
        return decoder.raw_decode(text, index)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
