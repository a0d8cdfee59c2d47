"""One graded assertion of a case, and what it explains to a reviewer of a failure."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from assay.core._contract import ContractModel
from assay.core.statuses import CheckStatus

__all__ = ["Check", "FindingRef", "check_summary"]


class FindingRef(ContractModel):
    """The agent's finding a check is about, as a reviewer reads it (title, severity, place)."""

    index: int
    """Its index in the case's `findings`."""
    title: str = ""
    severity: str | None = None
    path: str | None = None
    line: int | None = None

    @classmethod
    def of(cls, findings: list[dict[str, Any]], index: int | None) -> FindingRef | None:
        """Finding `index` of an agent's `findings`; None for no (or no such) finding."""
        if index is None or not 0 <= index < len(findings):
            return None
        finding = findings[index]
        location = finding.get("location")
        location = location if isinstance(location, dict) else {}
        path, line = location.get("path"), location.get("startLine")
        severity = finding.get("severity")
        return cls(
            index=index,
            title=str(finding.get("title") or ""),
            severity=str(severity) if severity is not None else None,
            path=path if isinstance(path, str) else None,
            line=line if isinstance(line, int) and not isinstance(line, bool) else None,
        )

    def where(self) -> str:
        """`path:line`, `path`, or empty when the finding names no place."""
        if not self.path:
            return ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path


class Check(ContractModel):
    """One graded assertion of a case: a command, a judge assertion, a file rule, a trace event."""

    model_config = ConfigDict(extra="allow")
    id: str
    kind: str
    """command | changed_files | context | trace | should_find | should_not_find |
    severity | verdict | rubric"""
    status: CheckStatus
    """`blocked`: a task check that never ran because the agent failed (PVYai's word)."""
    message: str = ""
    """Why it passed or failed; for a judge's check, the judge's reasoning."""
    expected: str | None = None
    """What the expectation asked, in the suite's own words: the should_find finding, the
    should_not_find line, the rubric, the expected verdict or severity, the command."""
    finding: FindingRef | None = None
    """The agent's finding that met a should_find (or its severity) or violated a
    should_not_find."""


def check_summary(check: Check) -> str:
    """One line saying why `check` did not pass: its message, else what its PVYai fields say
    (PVYai leaves most messages empty), else its status."""
    if check.message:
        return check.message
    fields = check.model_extra or {}
    parts = []
    for key, label in (
        ("missingFiles", "missing"),
        ("unexpectedFiles", "unexpected"),
        ("missingEvents", "missing events"),
    ):
        if fields.get(key):
            parts.append(f"{label}: {_listed(fields[key])}")
    if not parts and isinstance(fields.get("timedOutAfterS"), int | float):
        parts.append(f"timed out after {fields['timedOutAfterS']:g}s")  # PVYai: exit code -1
    if not parts and "exitCode" in fields:
        parts.append(f"exit code {fields['exitCode']}")
    return "; ".join(parts) or check.status


_LISTED = 10
"""Names a one-line summary shows; the check keeps the whole list."""


def _listed(names: list[object]) -> str:
    """The first names, and how many more: an agent that writes 100,000 files must not
    make every report's reason line megabytes long."""
    shown = ", ".join(map(str, names[:_LISTED]))
    return shown if len(names) <= _LISTED else f"{shown} and {len(names) - _LISTED:,} more"
