"""junit.xml: one testsuite per suite, one testcase per case (per model in a matrix).

A case that fails is a `<failure>`, one that could not be run or graded an `<error>`,
one that was skipped a `<skipped>`: never a bare testcase, which every reader takes as a
pass. CI systems read `file` and `line` of a testcase to point at the suite file that
holds the case. dorny/test-reporter's `java-junit` parser does not: it finds the file
and line in the failure text, in a Java stack frame `at pkg.Class(File.java:12)` whose
package names the file's directories. So each failure and error opens with such a frame
for the suite file (`at evals.security-review.AssayCase(api.json:3)`).

Text from agents may hold characters XML 1.0 cannot carry at all (most C0 controls,
lone surrogates); they are removed, everything else is escaped by ElementTree.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from assay.report.explain import (
    explain_lines,
    failing_checks,
    finding_marks,
    reason_with_source,
    unexplained_reason,
)
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


_FRAME_UNSAFE = re.compile(r"[.()\s:]")
"""What a directory or file name in a frame may not hold: the parser splits on `.` and
on `(`, `:`, `)`; whitespace would not survive the line match."""


def _frame_part(part: str) -> bool:
    # java-junit ends the package at the first name starting with `Z` or lower (a class).
    return bool(part) and part[0] > "Z" and not _FRAME_UNSAFE.search(part)


def stack_frame(path: str, line: int) -> str | None:
    """A Java-style frame that points dorny/test-reporter's java-junit parser at `path`.

    The package is the longest run of `path`'s directories, counted from the file, that
    the parser can read as package names; the parser matches it against the last
    directories of the repository's files. None when no directory qualifies (a suite
    file at the root, say), or the file name cannot be read back.
    """
    parts = path.replace("\\", "/").split("/")
    name, directories = parts[-1], parts[:-1]
    if path.startswith("/"):
        # Outside the checkout's relative names: the file's own directory is all that can
        # match the last directory of a tracked file.
        directories = directories[-1:]
    if not name or "(" in name or ")" in name or ":" in name or line < 1:
        return None
    package: list[str] = []
    for directory in reversed(directories):
        if directory in ("", ".", "..") or not _frame_part(directory):
            break
        package.insert(0, directory)
    if not package:
        return None
    return f"at {'.'.join(package)}.AssayCase({name}:{line})"


def _details(case: CaseResult) -> str:
    """The body of a failure/error element: where the case is, its reason and every check
    that did not pass. The frame comes first: the parser takes the first one it can place."""
    frame = stack_frame(case.source.path, case.source.line)
    lines = [frame] if frame else []
    reason = unexplained_reason(case)
    if reason:
        lines.append(reason)
    for explanation in failing_checks(case):
        lines += explain_lines(explanation)
    marks = finding_marks(case) if case.kind == "review" else []
    if marks:
        lines += ["agent's findings:", *(f"  {m.mark}: {m.label}" for m in marks)]
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
    reason = reason_with_source(case)
    message = _xml_text(reason.splitlines()[0] if reason else case.status)
    if case.status == "pass":
        return element
    if case.status == "skipped":
        ET.SubElement(element, "skipped", {"message": message})
        return element
    # `fail` is an assertion that did not hold; everything else (`error`, or a status
    # added later) is an `<error>`: a testcase without either would read as a pass.
    tag = "failure" if case.status == "fail" else "error"
    problem = ET.SubElement(element, tag, {"message": message, "type": str(case.status)})
    problem.text = _details(case)
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
