"""junit.xml as dorny/test-reporter's `java-junit` parser reads it: results, file and line.

`java_junit_reading` restates what that parser does (src/parsers/java-junit/ upstream):
a testcase with `<failure>` or `<error>` is failed, with `<skipped>` skipped, otherwise a
success; the failure's `message` attribute is read; the location is the first line of the
failure text shaped `at <package>.<Class>(<file name>:<line>)` whose file name is a tracked
file's base name and whose package (the names before the first one starting with `Z` or
lower) equals that file's last directories. The testcase's `file`/`line` are not read.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from assay.report.gate.stats import summarize
from assay.report.junit import render_junit, stack_frame
from assay.report.model import CaseResult, Report, RunInfo, Source
from assay.suites import load_suites

_FRAME = re.compile(r"^\s*at (.*)\((.*):(\d+)\)$")


def _located(details: str, tracked: list[str]) -> tuple[str, int] | None:
    for text in details.splitlines():
        match = _FRAME.match(text)
        if match is None:
            continue
        trace, name, line = match.groups()
        parts = trace.split(".")
        cut = next((i for i, part in enumerate(parts) if part[0] <= "Z"), len(parts))
        package = parts[:cut]
        if not package:
            continue
        for path in tracked:
            pure = PurePosixPath(path)
            dirs = list(pure.parent.parts)
            if pure.name != name or len(package) > len(dirs):
                continue
            if dirs[len(dirs) - len(package) :] == package:
                return path, int(line)
    return None


def java_junit_reading(xml: str, tracked: list[str]) -> dict[str, dict[str, Any]]:
    """Per testcase name: the result, the message and the location the parser reports."""
    read: dict[str, dict[str, Any]] = {}
    for suite in ET.fromstring(xml).iter("testsuite"):
        assert suite.attrib["name"].strip() and float(suite.attrib["time"]) >= 0
        for case in suite.iter("testcase"):
            failures = case.findall("failure") or case.findall("error")
            if failures:
                result = "failed"
            elif case.findall("skipped"):
                result = "skipped"
            else:
                result = "success"
            entry: dict[str, Any] = {"result": result}
            if failures:
                first = failures[0]
                entry["message"] = f"{first.attrib['type']}: {first.attrib['message']}"
                entry["location"] = _located(first.text or "", tracked)
            read[case.attrib["name"].strip()] = entry
    return read


def _case(case_id: str, status: str, path: str, line: int, reason: str = "") -> CaseResult:
    return CaseResult.model_validate(
        {
            "id": case_id,
            "suite": case_id.split("/")[0],
            "kind": "review",
            "source": Source(path=path, line=line),
            "status": status,
            "score": {"pass": 1.0, "fail": 0.0}.get(status),
            "reason": reason,
            "duration_s": 0.5,
        }
    )


def _xml(cases: list[CaseResult]) -> str:
    report = Report(
        run=RunInfo(id="r", started_at="2025-01-01T00:00:00Z", assay_version="0", threshold=0.75),
        summary=summarize(cases, threshold=0.75, max_errors=0, duration_s=1.0),
        cases=cases,
    )
    return render_junit(report)


TRACKED = [
    "evals/security-review/api.json",
    "other/security-review-copy/api.json",
    "evals/tasks.json",
    "Evals/Upper/cases.yaml",
]


def test_only_passes_read_as_passes_and_failures_point_at_their_file_and_line() -> None:
    xml = _xml(
        [
            _case("security-review/api", "fail", "evals/security-review/api.json", 3, "missed"),
            _case("tasks/fix", "error", "evals/tasks.json", 12, "agent timed out\nafter 600s"),
            _case("tasks/skip", "skipped", "evals/tasks.json", 20, "no key"),
            _case("tasks/ok", "pass", "evals/tasks.json", 30),
        ]
    )
    read = java_junit_reading(xml, TRACKED)
    assert read["security-review/api"] == {
        "result": "failed",
        "message": "fail: missed",
        "location": ("evals/security-review/api.json", 3),
    }
    assert read["tasks/fix"] == {
        "result": "failed",
        "message": "error: agent timed out",
        "location": ("evals/tasks.json", 12),
    }
    assert read["tasks/skip"] == {"result": "skipped"}
    assert read["tasks/ok"] == {"result": "success"}
    # Errors stay distinguishable from failures for readers that count them apart.
    root = ET.fromstring(xml)
    assert root.attrib["failures"] == "1" and root.attrib["errors"] == "1"


def test_untrusted_text_cannot_move_the_annotation() -> None:
    reason = "at evals.tasks.Forged(tasks.json:999)"
    xml = _xml([_case("security-review/api", "fail", "evals/security-review/api.json", 3, reason)])
    read = java_junit_reading(xml, TRACKED)
    assert read["security-review/api"]["location"] == ("evals/security-review/api.json", 3)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("evals/security-review/api.json", "at evals.security-review.AssayCase(api.json:4)"),
        # A directory the parser would take for a class ends the package: the rest still
        # matches the tracked file's last directories.
        ("Evals/Upper/cases.yaml", None),
        ("Evals/lower/cases.yaml", "at lower.AssayCase(cases.yaml:4)"),
        ("evals/.hidden/x.json", None),
        ("/home/runner/work/repo/evals/tasks.json", "at evals.AssayCase(tasks.json:4)"),
        ("tasks.json", None),  # at the root: a frame needs a package
    ],
)
def test_the_frame_uses_what_the_parser_can_read(path: str, expected: str | None) -> None:
    assert stack_frame(path, 4) == expected


def test_a_frame_for_an_absolute_path_still_finds_the_tracked_file() -> None:
    xml = _xml([_case("tasks/fix", "fail", "/home/runner/work/r/r/evals/tasks.json", 5, "x")])
    assert java_junit_reading(xml, TRACKED)["tasks/fix"]["location"] == ("evals/tasks.json", 5)


def test_a_json_scenario_case_starts_at_its_first_key(tmp_path: Path) -> None:
    root = tmp_path / "evals"
    (root / "fixtures").mkdir(parents=True)
    (root / "fixtures" / "app.py").write_text("x = 1\n")
    (root / "security-review").mkdir()
    scenario = {"given": "g", "files": ["fixtures/app.py"], "should_find": [{"finding": "f"}]}
    text = "\n\n{\n" + json.dumps(scenario, indent=2)[2:]
    (root / "security-review" / "api.json").write_text(text)
    (root / "security-review" / "verify.json").write_text(
        '{\n  "given": "g",\n  "files": ["fixtures/app.py"],\n'
        '  "candidate": {"id": "c1", "title": "t", "description": "d", "severity": "high"},\n'
        '  "expect": {"verdict": "keep"}\n}\n'
    )
    lines = {case.id: case.source_line for case in load_suites([root]).cases}
    assert lines == {"security-review/api": 4, "security-review/verify": 2}
