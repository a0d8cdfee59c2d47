"""Keep credential values out of every message assay builds from a provider's answer.

Provider error bodies are untrusted text; a proxy or a misconfigured server may echo the
request headers back. Anything assay turns into an exception message or a log line goes
through `redact` first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["redact", "secret_values"]

_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
# Shorter values would redact ordinary words (and a key this short is not a real key).
_MIN_SECRET_LENGTH = 8
_MASK = "***"


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the environment variables that hold credentials, longest first."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if name.upper().endswith(_SECRET_SUFFIXES) and len(value) >= _MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every credential value from the environment replaced by `***`."""
    for value in secret_values(environ):
        text = text.replace(value, _MASK)
    return text
