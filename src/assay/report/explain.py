"""What a failed check or case says to a reviewer: expected, what the agent said, and why.

One place builds these facts as plain text; summary.md, the PR comment, junit.xml and the
terminal each escape and lay them out for their own medium.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from assay.core.checks import Check, FindingRef, check_summary
from assay.report.model import CaseResult

__all__ = [
    "FINDINGS_SHOWN",
    "CheckExplanation",
    "FindingMark",
    "explain_check",
    "explain_lines",
    "failing_checks",
    "finding_label",
    "finding_marks",
    "reason_with_source",
    "unexplained_reason",
]

FINDINGS_SHOWN = 10
"""A failed review case's findings listed in the terminal, summary.md and the PR comment,
with how many more there are; report.json and report.html have them all."""
_JUDGED = frozenset({"should_find", "should_not_find", "rubric"})
Mark = Literal["matched", "violating", "unmatched"]


@dataclass(frozen=True)
class CheckExplanation:
    """One check that did not pass, as a reviewer reads it; each part is plain text."""

    check: Check
    expected: str | None
    finding: str | None
    """The agent's finding the check is about (`title (severity) at path:line`)."""
    reason: str
    """The judge's reasoning for a judged check, else why the check did not pass."""
    reason_label: str
    output_tail: str | None


@dataclass(frozen=True)
class FindingMark:
    index: int
    label: str
    mark: Mark


def finding_label(ref: FindingRef) -> str:
    """`title (severity) at path:line`."""
    label = ref.title or f"finding {ref.index}"
    if ref.severity:
        label += f" ({ref.severity})"
    where = ref.where()
    return f"{label} at {where}" if where else label


def explain_check(check: Check) -> CheckExplanation:
    tail = (check.model_extra or {}).get("outputTail")
    finding = finding_label(check.finding) if check.finding is not None else None
    if finding is None and check.kind == "should_find":
        finding = "none of the agent's findings matched"
    return CheckExplanation(
        check=check,
        expected=check.expected,
        finding=finding,
        reason=check_summary(check),
        reason_label="judge" if check.kind in _JUDGED else "result",
        output_tail=tail if isinstance(tail, str) and tail.strip() else None,
    )


def failing_checks(case: CaseResult) -> list[CheckExplanation]:
    return [explain_check(c) for c in case.checks if c.status not in ("pass", "skipped")]


def unexplained_reason(case: CaseResult) -> str:
    """The case's reason, unless it only repeats its failing checks' messages (the graders
    join them as `id: message; ...`): then the checks say it, once. An error's reason
    says whose call failed (`reason_with_source`)."""
    if not case.reason:
        return ""
    said = set()
    for check in case.checks:
        if check.status not in ("pass", "skipped") and check.message:
            said |= {check.message, f"{check.id}: {check.message}"}
    if said and all(part in said for part in case.reason.split("; ")):
        return ""
    return reason_with_source(case)


def reason_with_source(case: CaseResult) -> str:
    """The reason, for an `error` led by whose call failed (`agent: ...`, `judge: ...`,
    `sandbox: ...`, `grader: ...`, `harness: ...`); the report keeps both apart
    (`reason`, `error_source`)."""
    if case.status == "error" and case.error_source and case.reason:
        return f"{case.error_source}: {case.reason}"
    return case.reason


def explain_lines(explanation: CheckExplanation) -> list[str]:
    """The explanation as indented plain-text lines (junit.xml, the terminal)."""
    check = explanation.check
    lines = [f"[{check.status}] {check.id} ({check.kind})"]
    if explanation.expected:
        lines.append(f"  expected: {explanation.expected}")
    if explanation.finding:
        lines.append(f"  agent's finding: {explanation.finding}")
    lines.append(f"  {explanation.reason_label}: {explanation.reason}")
    if explanation.output_tail:
        lines += ["  output:", *("    " + line for line in explanation.output_tail.splitlines())]
    return lines


def finding_marks(case: CaseResult) -> list[FindingMark]:
    """Each of the agent's findings, marked by what the judge's checks made of it."""
    marks: dict[int, Mark] = {}
    for check in case.checks:
        if check.finding is None:
            continue
        if check.kind == "should_not_find" and check.status == "fail":
            marks[check.finding.index] = "violating"
        elif check.kind == "should_find" and check.finding.index not in marks:
            marks[check.finding.index] = "matched"
    return [
        FindingMark(index, _label_of(case.findings, index), marks.get(index, "unmatched"))
        for index, finding in enumerate(case.findings)
    ]


def _label_of(findings: list[dict[str, Any]], index: int) -> str:
    ref = FindingRef.of(findings, index)
    return finding_label(ref) if ref is not None else f"finding {index}"
