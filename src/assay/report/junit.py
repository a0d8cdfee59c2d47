"""junit.xml: one testsuite per suite, one testcase per case (per model in a matrix).

CI systems read `file` and `line` of a testcase to point at the suite file that holds
the case. Text from agents may hold characters XML 1.0 cannot carry at all (most C0
controls, lone surrogates); they are removed, everything else is escaped by ElementTree.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from assay.report.model import CaseResult, Report

__all__ = ["render_junit"]

# What XML 1.0 cannot hold (the complement of its `Char` production): C0 controls but
# tab, newline and carriage return; lone surrogates; U+FFFE and U+FFFF. Written as these
# few ranges because the negated form of `Char` took 9 ms to compile at import.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("", text)


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _details(case: CaseResult) -> str:
    """The body of a failure/error element: the reason and every check that did not pass."""
    lines = [case.reason] if case.reason else []
    for check in case.checks:
        if check.status != "pass":
            lines.append(f"[{check.status}] {check.id} ({check.kind}): {check.message}")
            tail = (check.model_extra or {}).get("outputTail")
            if isinstance(tail, str) and tail.strip():
                lines.append(tail.rstrip())
    return _xml_text("\n".join(lines))


def _testcase(case: CaseResult, *, matrix: bool) -> ET.Element:
    name = f"{case.id} [{case.model}]" if matrix and case.model else case.id
    element = ET.Element(
        "testcase",
        {
            "name": _xml_text(name),
            "classname": _xml_text(case.suite),
            "file": _xml_text(case.source.path),
            "line": str(case.source.line),
            "time": _seconds(case.duration_s),
        },
    )
    message = _xml_text(case.reason.splitlines()[0] if case.reason else case.status)
    if case.status == "fail":
        failure = ET.SubElement(element, "failure", {"message": message, "type": "fail"})
        failure.text = _details(case)
    elif case.status == "error":
        error = ET.SubElement(element, "error", {"message": message, "type": "error"})
        error.text = _details(case)
    elif case.status == "skipped":
        ET.SubElement(element, "skipped", {"message": message})
    return element


def _counts(cases: list[CaseResult]) -> dict[str, str]:
    return {
        "tests": str(len(cases)),
        "failures": str(sum(c.status == "fail" for c in cases)),
        "errors": str(sum(c.status == "error" for c in cases)),
        "skipped": str(sum(c.status == "skipped" for c in cases)),
        "time": _seconds(sum(c.duration_s for c in cases)),
    }


def render_junit(report: Report) -> str:
    """The report as a JUnit XML document (UTF-8, with an XML declaration)."""
    matrix = len({case.model for case in report.cases}) > 1 or len(report.run.models) > 1
    root = ET.Element("testsuites", {"name": "assay", **_counts(report.cases)})
    root.set("time", _seconds(report.summary.duration_s))
    by_suite: dict[str, list[CaseResult]] = defaultdict(list)
    for case in report.cases:
        by_suite[case.suite].append(case)
    for suite, cases in by_suite.items():
        element = ET.SubElement(
            root,
            "testsuite",
            {"name": _xml_text(suite), **_counts(cases), "timestamp": report.run.started_at},
        )
        for case in cases:
            element.append(_testcase(case, matrix=matrix))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
