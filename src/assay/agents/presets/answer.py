"""Finding the JSON answer in an agent CLI's final message, leniently.

An agent CLI answers in prose; asked for a JSON block, it usually writes one, but not
always fenced, and not always alone. The answer is the last fenced ```json block that
holds the key asked for, else the last JSON object anywhere in the text that does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from assay._util import json_text

__all__ = ["json_answer", "without_json_blocks"]

_FENCED = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)


def json_answer(text: str, key: str) -> dict[str, Any] | None:
    """The last JSON object in `text` that has `key`, or None."""
    for block in reversed(_FENCED.findall(text)):
        value = _loads(block)
        if isinstance(value, dict) and key in value:
            return value
    decoder = json.JSONDecoder()
    found: dict[str, Any] | None = None
    index = text.find("{")
    while index != -1:
        try:
            value, end = json_text.raw_decode(decoder, text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict) and key in value:
            found = value
        index = text.find("{", end)
    return found


def _loads(text: str) -> Any:
    try:
        return json_text.loads(text)
    except ValueError:
        return None


def without_json_blocks(text: str) -> str:
    """The prose of a message: fenced JSON blocks removed (a rubric review's text)."""
    return _FENCED.sub("", text).strip()
