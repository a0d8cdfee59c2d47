"""Every failure explains itself: expected text, the agent's finding, the judge's reasoning."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from io import StringIO

import pytest

from assay.core.checks import FindingRef
from assay.grading.findings_judge import assertion_checks
from assay.grading.judge_verdicts import FindingsVerdict
from assay.report.gate.stats import summarize
from assay.report.junit import render_junit
from assay.report.markdown import render_summary
from assay.report.model import CaseResult, Report, RunInfo, Source
from assay.report.terminal import print_summary
from assay.suites.case import Expectation, ReviewSpec

FINDINGS = [
    {
        "severity": "high",
        "title": "SQL injection in <script>query</script>",
        "location": {"path": "app/db.py", "startLine": 12},
    },
    {"severity": "low", "title": "Style nit: long line", "location": {"path": "app/db.py"}},
    {"severity": "info", "title": "Unused import"},
]
SPEC = ReviewSpec(
    given="a handler",
    files=(),
    should_find=(
        Expectation(finding="SQL injection via string formatting", severity="high"),
        Expectation(finding="Missing auth check on /admin"),
    ),
    should_not_find=("style nits",),
)
VERDICT = FindingsVerdict.model_validate(
    {
        "should_find": [
            {"index": 0, "met": True, "matchedFindingIndex": 0, "reasoning": "finding 0 says it"},
            {"index": 1, "met": False, "reasoning": "no finding mentions the admin route"},
        ],
        "should_not_find": [
            {
                "index": 0,
                "violated": True,
                "violatingFindingIndex": 1,
                "reasoning": "finding 1 is a style nit",
            }
        ],
    }
)


def _case() -> CaseResult:
    checks = assertion_checks(SPEC, VERDICT, FINDINGS)
    failed = [c for c in checks if c.status == "fail"]
    return CaseResult(
        id="review/sqli",
        suite="review",
        kind="review",
        source=Source(path="evals/review.yaml", line=3),
        status="fail",
        score=0.0,
        reason="; ".join(f"{c.id}: {c.message}" for c in failed),
        checks=checks,
        findings=FINDINGS,
    )


def _report() -> Report:
    cases = [_case()]
    return Report(
        run=RunInfo(id="r1", started_at="2026-01-01T00:00:00Z", assay_version="0", threshold=0.75),
        summary=summarize(cases, threshold=0.75, max_errors=0, duration_s=1.0),
        cases=cases,
    )


def test_judge_checks_carry_the_expectation_and_the_finding() -> None:
    checks = {c.id: c for c in _case().checks}
    assert checks["should_find[0]"].expected == "SQL injection via string formatting"
    assert checks["should_find[0]"].finding == FindingRef(
        index=0,
        title="SQL injection in <script>query</script>",
        severity="high",
        path="app/db.py",
        line=12,
    )
    assert checks["should_find[0].severity"].expected == "severity high"
    assert checks["should_find[1]"].finding is None
    assert checks["should_not_find[0]"].expected == "style nits"
    assert checks["should_not_find[0]"].finding is not None
    assert checks["should_not_find[0]"].finding.where() == "app/db.py"
    # The contract round-trips the new fields.
    again = Report.model_validate_json(_report().model_dump_json())
    assert again.cases[0].checks[0].finding == checks["should_find[0]"].finding


def test_summary_shows_each_fact_once_and_marks_the_findings() -> None:
    text = render_summary(_report())
    assert text.count("no finding mentions the admin route") == 1
    assert text.count("finding 1 is a style nit") == 1
    assert "  - expected: Missing auth check on /admin" in text
    assert "  - agent's finding: none of the agent's findings matched" in text
    assert "  - judge: no finding mentions the admin route" in text
    assert "  - expected: style nits" in text
    assert "  - agent's finding: Style nit: long line (low) at app/db.py" in text
    assert (
        "- matched: SQL injection in &lt;script&gt;query&lt;/script&gt; (high) at app/db.py:12"
        in (text.replace("\\", ""))
    )
    assert "- violating: Style nit: long line (low) at app/db.py" in text
    assert "- unmatched: Unused import (info)" in text
    assert "<script>" not in text


def test_junit_and_terminal_show_the_explanation_once() -> None:
    root = ET.fromstring(render_junit(_report()))
    failure = root.find(".//failure")
    assert failure is not None and failure.text is not None
    body = failure.text
    assert body.count("no finding mentions the admin route") == 1
    assert "  expected: Missing auth check on /admin" in body
    assert "  agent's finding: Style nit: long line (low) at app/db.py" in body
    assert "  violating: Style nit: long line (low) at app/db.py" in body

    stream = StringIO()
    print_summary(_report(), report_dir="out", stream=stream, colour=False)
    out = stream.getvalue()
    assert "FAIL  review/sqli" in out
    assert out.count("no finding mentions the admin route") == 1
    assert "expected: Missing auth check on /admin" in out
    # The failed review case's findings, marked, as in summary.md and junit.xml.
    assert "  agent's findings:\n    matched: SQL injection in <script>query</script>" in out
    assert "    violating: Style nit: long line (low) at app/db.py" in out
    assert "    unmatched: Unused import (info)" in out


def test_task_and_verdict_checks_name_what_they_expected() -> None:
    from assay.grading.task_results import task_check

    command = task_check("test", "Run tests", "command", "fail", command=["pytest", "-q"])
    assert command.expected == "`pytest -q` exits 0"
    changed = task_check("changed_files", "Changed", "changed_files", "pass", expectedFiles=["a"])
    assert changed.expected == "changed, and nothing else: a"


# -- the PR comment leads with what this PR changed ---------------------------------------


def _with(report: Report, *cases: CaseResult) -> Report:
    every = [*report.cases, *cases]
    return report.model_copy(
        update={
            "cases": every,
            "summary": summarize(every, threshold=0.75, max_errors=0, duration_s=1.0),
        }
    )


def _plain(id: str, status: str, reason: str = "") -> CaseResult:
    return CaseResult(
        id=id,
        suite=id.split("/")[0],
        kind="verify",
        source=Source(path="evals/v.json", line=1),
        status=status,  # type: ignore[arg-type]
        score=1.0 if status == "pass" else 0.0,
        reason=reason,
    )


def test_comment_order_and_each_failing_case_once() -> None:
    from assay.action.comment import COMMENT_LIMIT, comment_body
    from assay.report.compare import compare_reports

    head = _with(_report(), _plain("verify/old", "fail", "expected keep, got reject"))
    base = _with(_report(), _plain("verify/old", "fail", "expected keep, got reject"))
    base = base.model_copy(update={"cases": [_plain("review/sqli", "pass"), base.cases[1]]})
    body = comment_body(
        head,
        marker="<!-- m -->",
        run_url="https://example.invalid/run/1",
        comparison=compare_reports(base, head),
    )
    order = [
        "Score 0.00",
        "threshold 0.75",
        "### Compared with the base branch",
        "### ❌ Newly failing",
        "### Other failures",
        "<summary>Results by suite</summary>",
        "run `r1`",
        "https://example.invalid/run/1",
    ]
    positions = [body.index(text) for text in order]
    assert positions == sorted(positions)
    assert body.count("<code>review/sqli</code>") == 1
    assert body.count("<code>verify/old</code>") == 1
    assert "<code>verify/old</code> — expected keep, got reject</summary>" in body
    assert body.count("no finding mentions the admin route") == 2  # summary line, then the row
    assert len(body) < COMMENT_LIMIT


@pytest.mark.slow
def test_a_huge_comment_is_cut_with_a_link_to_the_full_report() -> None:
    from assay.action.comment import COMMENT_LIMIT, comment_body

    many = [_plain(f"verify/case-{i:05d}", "fail", "x" * 150) for i in range(3000)]
    body = comment_body(
        _with(_report(), *many), marker="<!-- m -->", run_url="https://example.invalid/run/2"
    )
    assert len(body) < COMMENT_LIMIT
    assert "Truncated:" in body
    assert body.rstrip().endswith("(https://example.invalid/run/2)</sub>")
