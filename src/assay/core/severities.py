"""Severities: assay's five levels, the words agents use for them, and Warden's scale.

Two readings, one table:
- what an agent reports (`normalise_severity`) is forgiving: case, spaces and the words
  other tools use (`major`, `warning`, `nit`, ...) map onto the five levels;
- what a Warden suite declares (`warden_severity`) follows Warden's schema: three levels,
  `critical` read as `high` and `info` as `low`, anything else refused.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "SEVERITIES",
    "SEVERITY_ALIASES",
    "WARDEN_SEVERITIES",
    "WARDEN_SEVERITY_WORDS",
    "Severity",
    "normalise_severity",
    "warden_severity",
]

Severity = Literal["critical", "high", "medium", "low", "info"]
SEVERITIES: Final[tuple[Severity, ...]] = get_args(Severity)

SEVERITY_ALIASES: Final[dict[str, Severity]] = {
    "crit": "critical",
    "blocker": "critical",
    "error": "high",
    "major": "high",
    "moderate": "medium",
    "warning": "medium",
    "warn": "medium",
    "minor": "low",
    "note": "info",
    "informational": "info",
    "information": "info",
    "nit": "info",
}
"""Words agents use for the five levels (SARIF, linters, other review bots)."""

WARDEN_SEVERITIES: Final[tuple[Severity, ...]] = ("high", "medium", "low")
"""Warden's severity scale (src/types `SeveritySchema`): three levels."""
_WARDEN_LEGACY: Final[dict[str, Severity]] = {"critical": "high", "info": "low"}
WARDEN_SEVERITY_WORDS: Final[tuple[str, ...]] = (*WARDEN_SEVERITIES, *_WARDEN_LEGACY)
"""Every word a Warden suite may write as a severity (what its JSON Schema lists)."""


def normalise_severity(value: object) -> Severity | None:
    """One of critical|high|medium|low|info for the ways agents spell them; None when unknown."""
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    if word in SEVERITIES:
        return word  # type: ignore[return-value]
    return SEVERITY_ALIASES.get(word)


def warden_severity(value: object) -> Severity | None:
    """A severity as Warden's schema reads it: `critical` is `high`, `info` is `low`.

    Suite files (should_find, candidates) and the severity check of a matched finding
    both go through it. Anything else (`High`, `warning`) is None: Warden refuses it.
    """
    if not isinstance(value, str):
        return None
    word = _WARDEN_LEGACY.get(value, value)
    return word if word in WARDEN_SEVERITIES else None  # type: ignore[return-value]
