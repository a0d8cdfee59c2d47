"""The forms a secret value can be written in, each one a string to look for.

An agent (or a judge quoting it) rarely prints a key only as it is: JSON escapes it,
a URL percent-encodes it, a debugging print shows its hex, a header or a config dump
base64-encodes it, often inside a longer value. Each form here is a string that appears
in the text whenever the value was written that way:

- as it is, and as JSON writes it (`\\"`, `\\\\`, `\\t`; `\\u` escapes with ensure_ascii);
- percent-encoded: `urllib.parse.quote` (the unreserved characters as they are) and
  every byte as `%XX` (upper case, as encoders write it);
- hex, lower and upper case;
- base64 (standard and URL-safe alphabets) at each of the three offsets the value can
  start at in a longer encoded stream: only the characters that depend on the value's
  bytes alone, so `b64(anything + value + anything)` holds one of them.

Every form is stripped of `core.text.INVISIBLE_CHARACTERS`: matching looks through those.
"""

from __future__ import annotations

import base64
import binascii
import json
from urllib.parse import quote

from assay.core.text import strip_invisible

__all__ = ["json_forms", "secret_forms"]


def json_forms(value: str) -> set[str]:
    """`value` and the two ways JSON writes it (ensure_ascii off and on)."""
    return {value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1]}


def secret_forms(value: str, *, min_length: int) -> set[str]:
    """Every form of `value` (see the module docstring) at least `min_length` characters
    long once stripped of invisible characters: a shorter one would match ordinary text."""
    data = value.encode("utf-8", "surrogatepass")
    forms = json_forms(value) | _encoded(data)
    stripped = {strip_invisible(form) for form in forms}
    return {form for form in stripped if len(form) >= min_length}


def _encoded(data: bytes) -> set[str]:
    hexed = binascii.hexlify(data).decode()
    forms = {
        quote(data, safe=""),
        "".join(f"%{b:02X}" for b in data),
        hexed,
        hexed.upper(),
    }
    for offset in range(3):
        # `offset` bytes before the value shift it within the 3-byte groups; the first
        # characters then also hold bits of those bytes, the last ones of what follows.
        encoded = base64.b64encode(bytes(offset) + data).decode()
        first = -(-8 * offset // 6)  # ceil: the first character of the value's bits only
        last = 8 * (offset + len(data)) // 6  # past the last such character
        stable = encoded[first:last]
        forms.add(stable)
        forms.add(stable.replace("+", "-").replace("/", "_"))
    return forms
