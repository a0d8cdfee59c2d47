"""`passed 8 failed 0` above `gate: FAIL 0.50` (issue 35): the summary says why the gate
failed when no case failed; the HTML page shows the run notes; --keep-workspaces says
where the workspaces are."""

from __future__ import annotations

import io
from pathlib import Path

import assay
from assay.report.comment_markdown import render_comment
from assay.report.gate.why import gate_failed_without_failures
from assay.report.html import render_html
from assay.report.markdown import render_summary
from assay.report.model import CaseResult
from assay.report.terminal import print_summary
from tests.report.test_renderers import _case, _report
from tests.runner.test_e2e import options, task_cases, write_project


def rubric_passes(score: float, count: int) -> list[CaseResult]:
    return [_case(f"r/c{i}", "pass", kind="rubric", score=score) for i in range(count)]


def test_passing_rubric_cases_below_the_threshold_explain_the_failed_gate() -> None:
    report = _report(rubric_passes(0.5, 8))
    assert (report.summary.gate, report.summary.passed, report.summary.failed) == ("fail", 8, 0)
    why = (
        "why: no case failed, but 8 passing cases scored below the threshold 0.75 (a rubric "
        "case passes when the judge says the rubric is met, and scores (judge score - 1) / 4; "
        "the gate takes the mean score)"
    )
    assert gate_failed_without_failures(report) == why
    out = io.StringIO()
    print_summary(report, report_dir="r", stream=out, colour=False)
    lines = out.getvalue().splitlines()
    gate = next(i for i, line in enumerate(lines) if line.startswith("gate: FAIL"))
    assert lines[gate + 1] == why
    assert "8 passing cases scored below the threshold 0.75" in render_summary(report)
    assert "8 passing cases scored below the threshold 0.75" in render_comment(
        report, max_bytes=60_000
    )


def test_errors_and_skips_are_counted_in_the_reason() -> None:
    report = _report([_case("t/a", "pass"), _case("t/b", "error"), _case("t/c", "skipped")])
    assert report.summary.gate == "fail"
    assert gate_failed_without_failures(report) == (
        "why: no case failed, but 1 error (--max-errors allows 0); 1 case skipped (not scored)"
    )


def test_no_explanation_when_the_gate_passed_or_a_case_failed() -> None:
    assert gate_failed_without_failures(_report([_case("t/a", "pass")])) is None
    assert gate_failed_without_failures(_report([_case("t/a", "fail")])) is None


def test_the_html_page_shows_the_run_notes_and_counts_in_the_right_number() -> None:
    report = _report([_case("t/a", "pass"), _case("t/b", "error")])
    report.run.notes.append("a note <b>for</b> the reader")
    page = render_html(report, report_dir=None)
    assert "note: a note &lt;b&gt;for&lt;/b&gt; the reader" in page
    assert "2 cases: 1 passed, 0 failed, 1 error, 0 skipped" in page


def test_keep_workspaces_says_where_they_are(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"t": {}})
    report = assay.run(options(root, keep_workspaces=True), cases=task_cases(root, ["t"]))
    (note,) = [n for n in report.run.notes if n.startswith("--keep-workspaces")]
    kept = Path(note.split(" under ", 1)[1].split(" ", 1)[0])
    assert kept.parent == (root / "work").absolute() and kept.is_dir()
    (case,) = report.cases
    assert case.workspace is not None and Path(case.workspace).is_relative_to(kept)
    assert note in (root / "report" / "summary.md").read_text().replace("\\", "")
