"""The one place that decides which environment variables hold credentials.

Two uses, one rule: a child process that needs no credentials (a verification command)
must not see them, and no text assay writes (error messages, agent output tails,
transcripts, reports) may contain their values.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["MASK", "holds_credential", "redact", "scrubbed_environ", "secret_values"]

MASK = "[redacted]"
_CREDENTIAL_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
_CREDENTIAL_NAMES = frozenset({"GITHUB_TOKEN", "GH_TOKEN"})
# Whole families a verification command has no business seeing, credentials or not
# (base URLs and org ids of the providers, the Actions runtime's own endpoints).
_WITHHELD_PREFIXES = ("ANTHROPIC_", "OPENAI_", "OPENROUTER_", "ACTIONS_")
_MIN_SECRET_LENGTH = 8
"""Shorter values ("1", "on", "abc") are not real secrets, and replacing them would
mangle ordinary text."""


def holds_credential(name: str) -> bool:
    """Whether the variable's name says it holds a credential (its value is redacted)."""
    upper = name.upper()
    return upper in _CREDENTIAL_NAMES or upper.endswith(_CREDENTIAL_SUFFIXES)


def scrubbed_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `base` (default os.environ) for a child that needs no credentials."""
    source = os.environ if base is None else base
    return {
        name: value
        for name, value in source.items()
        if not holds_credential(name) and not name.upper().startswith(_WITHHELD_PREFIXES)
    }


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the credential variables of `environ` (default os.environ), longest first."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if holds_credential(name) and len(value) >= _MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str, environ: Mapping[str, str] | None = None, *, mask: str = MASK) -> str:
    """`text` with every credential value of `environ` replaced by `mask`.

    Longest first, so a secret that contains another is replaced whole. Configuration such
    as ANTHROPIC_BASE_URL is not a credential and stays readable.
    """
    for value in secret_values(environ):
        text = text.replace(value, mask)
    return text
