"""With a baseline, summary.md (and the job summary) and report.html lead with what changed:
the verdict, the comparison, then the full summary, each failing case once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assay.report.compare import compare_reports
from assay.report.summary_compared import render_compared_summary
from assay.runner.writer import write_report_dir
from tests.viewer_reports import baseline_of, viewer_report


def _positions(text: str, *needles: str) -> list[int]:
    found = [text.find(needle) for needle in needles]
    assert -1 not in found, [n for n, at in zip(needles, found, strict=True) if at == -1]
    return found


def test_the_verdict_and_the_comparison_lead_and_each_failure_is_listed_once() -> None:
    head = viewer_report(20)
    text = render_compared_summary(
        head, compare_reports(baseline_of(head), head), comparison_title="Compared with main"
    )
    order = _positions(
        text,
        "## ❌ Evaluation Results",
        "**Score 0.",
        "Compared with main: score",
        "| | Base | Head | Change |",
        "### ❌ Newly failing",
        "### ✅ Newly passing",
        "### Results by suite",
        "### Flaky cases",
        "### Other errors",
        "### Skipped",
        "base run `base1`",
    )
    assert order == sorted(order)
    # Every failing or erroring case has one collapsed block, wherever it is listed.
    failing = [c for c in head.cases if c.status in ("fail", "error")]
    for case in failing:
        assert text.count(f"<summary>{'❌' if case.status == 'fail' else '⚠️'} <code>{case.id}") == 1
    assert text.count("<details>") == len(failing)
    assert "Still failing" not in text and "### Failures" not in text
    # The newly failing ones say how they moved; the newly passing are one line each.
    assert "<code>review/case-0000</code> [model-a] ✅ → ❌" in text
    assert re.search(r"- `tasks/case-0001` \\\[model-b\\\]: ❌ → ✅ newly passing", text)


@pytest.mark.slow
def test_it_keeps_to_its_size_with_the_headline_first() -> None:
    head = viewer_report(400)
    text = render_compared_summary(head, compare_reports(baseline_of(head), head), max_bytes=6000)
    assert len(text.encode()) <= 6000
    assert text.startswith("## ❌ Evaluation Results") and "Compared with baseline" in text
    assert "Truncated:" in text


@pytest.mark.slow
def test_a_run_with_a_baseline_writes_both_led_by_the_comparison(tmp_path: Path) -> None:
    head = viewer_report(10, tmp_path)
    write_report_dir(head, tmp_path, cases=(), baseline=baseline_of(head))
    summary = (tmp_path / "summary.md").read_text()
    assert summary.index("Evaluation Results") < summary.index("Compared with baseline")
    assert summary.index("### ❌ Newly failing") < summary.index("### Results by suite")
    page = (tmp_path / "report.html").read_text()
    data = re.search(r'id="assay-data">(.*?)</script>', page, re.S)
    assert data is not None and "</" not in data.group(1)
    comparison = json.loads(data.group(1))["comparison"]
    assert comparison["base"]["run_id"] == "base1"
    assert comparison["counts"]["newly_failing"] == 2 and comparison["counts"]["newly_passing"] == 2
    first = comparison["changes"][0]
    assert (first["change"], first["base_status"], first["head_status"]) == (
        "newly_failing",
        "pass",
        "fail",
    )
    assert comparison["verdict"] and comparison["explanation"]


def test_without_a_baseline_nothing_is_compared(tmp_path: Path) -> None:
    write_report_dir(viewer_report(5, tmp_path), tmp_path, cases=())
    assert "Compared with" not in (tmp_path / "summary.md").read_text()
    data = re.search(r'id="assay-data">(.*?)</script>', (tmp_path / "report.html").read_text())
    assert data is not None and json.loads(data.group(1))["comparison"] is None
