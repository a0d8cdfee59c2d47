"""report.html in a real headless browser: Debian's chromium driven by Playwright.

Never downloads a browser (`playwright install` is not run): the test uses
chromium (Debian's, on PATH) and skips, saying why, when it or the playwright package is absent.
It also takes the README's screenshots: into the test's temp dir, and over
docs/img/report-html.png and report-html-comparison.png when ASSAY_UPDATE_SCREENSHOT=1 (a
test run never edits the tree).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.core.files import artifacts_dir
from assay.report.compare import compare_reports
from assay.report.html import render_html
from tests.requires import INSTALL_CHROMIUM
from tests.viewer_reports import HOSTILE, baseline_of, viewer_report

pytestmark = pytest.mark.slow  # a real browser for each test

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOT = Path(__file__).resolve().parents[1] / "docs" / "img" / "report-html.png"
COMPARISON_SCREENSHOT = SCREENSHOT.with_name("report-html-comparison.png")
UPDATE_SCREENSHOTS = os.environ.get("ASSAY_UPDATE_SCREENSHOT") == "1"
"""Read at import: tests/conftest.py clears every ASSAY_* variable before each test."""

REQUIRED = os.environ.get("ASSAY_REQUIRE_BROWSER") == "1"
"""Set by CI: a missing browser or playwright fails the run instead of skipping the viewer."""


def _chromium() -> str | None:
    # Found on PATH, so a PATH without it runs the suite as a machine without chromium would.
    # GitHub's Ubuntu runners link their Chromium snapshot under these names, and carry
    # Google Chrome (the same engine) whatever they call Chromium.
    names = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
    return next((found for name in names if (found := shutil.which(name))), None)


def _unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"ASSAY_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


try:
    from playwright import sync_api
except ImportError:
    _unavailable("the playwright package is not installed (dev extra)")
if _chromium() is None:
    _unavailable(f"no chromium ({INSTALL_CHROMIUM})")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=_chromium(),
            args=ARGS,
        )
        try:
            yield chromium
        finally:
            chromium.close()


def _open(browser: Any, page_path: Path) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(page_path.as_uri())
    return page, problems


def test_loads_clean_filters_and_keeps_script_as_text(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.html").write_text(
        render_html(viewer_report(40, out), report_dir=out), encoding="utf-8"
    )
    page, problems = _open(browser, out / "report.html")
    rows = page.locator("#cases tbody tr.row")
    assert rows.count() == 40
    page.select_option("#f-status", "fail")
    assert rows.count() == 8
    assert all(s == "fail" for s in rows.evaluate_all("rs => rs.map(r => r.dataset.status)"))
    page.select_option("#f-model", "model-a")
    page.select_option("#f-suite", "review")
    assert page.locator("#count").inner_text().endswith("of 40 cases")
    page.select_option("#f-model", "")
    page.select_option("#f-suite", "")
    page.select_option("#f-sort", "id")
    rows.first.click()  # case 0: the hostile finding, its diff and transcript
    detail = page.locator("tr.detail")
    assert "<script>window.__pwned = 1</script>" in detail.inner_text()
    assert page.evaluate("window.__pwned === undefined")
    assert detail.locator(".diff .hit").count() == 1  # the finding's line, linked
    assert "Repeats (flaky: they disagree)" in detail.inner_text()
    assert problems == []
    shot = SCREENSHOT if UPDATE_SCREENSHOTS else tmp_path / "shot.png"
    page.screenshot(path=str(shot), clip={"x": 0, "y": 0, "width": 1200, "height": 900})
    assert shot.stat().st_size > 10_000  # a real picture, not an empty page


def test_bidirectional_overrides_show_as_code_points(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    report = viewer_report(3, out)
    report.cases[0].findings[0]["title"] = "admin check \u202eexif\u202c done"
    (out / "report.html").write_text(render_html(report, report_dir=out), encoding="utf-8")
    page, problems = _open(browser, out / "report.html")
    page.select_option("#f-sort", "id")
    page.locator("#cases tbody tr.row").first.click()
    shown = page.locator("tr.detail").inner_text()
    assert "admin check <U+202E>exif<U+202C> done" in shown
    assert "\u202e" not in shown and problems == []


def test_a_thousand_cases_open_in_under_two_seconds(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "big"
    out.mkdir()
    (out / "report.html").write_text(
        render_html(viewer_report(1000, out), report_dir=out), encoding="utf-8"
    )
    # The best of three opens: one open on a machine busy with other work measures the
    # machine, not the page.
    timings = []
    for _ in range(3):
        started = time.monotonic()
        page, problems = _open(browser, out / "report.html")
        page.wait_for_selector("#cases tbody tr.row")
        timings.append(time.monotonic() - started)
        assert page.locator("#cases tbody tr.row").count() == 1000
        assert problems == []
        page.close()
        if timings[-1] < 2.0:
            break
    assert min(timings) < 2.0, timings


def test_the_baseline_comparison_shows_and_filters(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "compared"
    out.mkdir()
    head = viewer_report(40, out)
    comparison = compare_reports(baseline_of(head), head)
    (out / "report.html").write_text(
        render_html(head, report_dir=out, comparison=comparison), encoding="utf-8"
    )
    page, problems = _open(browser, out / "report.html")
    section = page.locator("#comparison")
    assert section.is_visible()
    assert "Compared with the baseline (run base1 at bbbbbbbbbbbb)" in section.inner_text()
    headline = page.locator("#cmp-headline").inner_text()
    assert "8 newly failing · 8 newly passing" in headline
    assert "significantly" in headline or "no significant change" in headline
    rows = page.locator("#cmp-cases tbody tr")
    changed = comparison.changes
    unchanged = ("still_passing", "still_skipped", "still_failing")
    assert rows.count() == sum(c.change not in unchanged for c in changed) == 16
    shot = COMPARISON_SCREENSHOT if UPDATE_SCREENSHOTS else tmp_path / "comparison.png"
    page.screenshot(path=str(shot), clip={"x": 0, "y": 0, "width": 1200, "height": 720})
    assert shot.stat().st_size > 10_000
    page.select_option("#f-change", "newly_failing")
    assert rows.count() == 8
    assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.change)")) == {"newly_failing"}
    first = rows.first.locator("td").all_inner_texts()
    assert first[3:5] == ["pass", "fail"]  # base and head side by side
    page.select_option("#f-change", "")
    assert rows.count() == 40
    assert page.locator("#cmp-count").inner_text() == "40 of 40 cases"
    # A case's detail says what it was in the baseline; hostile text stays text.
    page.select_option("#f-sort", "id")
    page.locator("#cases tbody tr.row").first.click()
    detail = page.locator("tr.detail").inner_text()
    assert "baseline: pass → now fail (newly failing)" in detail and HOSTILE in detail
    assert page.evaluate("window.__pwned === undefined")
    assert problems == []


def test_without_a_baseline_there_is_no_comparison_view(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "plain"
    out.mkdir()
    (out / "report.html").write_text(
        render_html(viewer_report(5, out), report_dir=out), encoding="utf-8"
    )
    page, problems = _open(browser, out / "report.html")
    assert not page.locator("#comparison").is_visible()
    assert problems == []


def _first_case_detail(browser: Any, out: Path) -> tuple[str, list[str]]:
    page, problems = _open(browser, out / "report.html")
    page.locator("#cases tbody tr.row").first.click()
    for box in page.locator("tr.detail details").all():
        box.evaluate("e => e.open = true")
    return page.locator("tr.detail").inner_text(timeout=5_000), problems


def test_agent_stdout_shaped_like_a_transcript_cannot_break_the_case_view(
    browser: Any, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    out.mkdir()
    report = viewer_report(1, out)
    folder = artifacts_dir(out, report.cases[0].id, report.cases[0].model, 0)
    message = {"role": "assistant", "content": [{"type": "text", "text": "I verified it"}]}
    (folder / "transcript.json").write_text(
        json.dumps({"messages": [message, None, 5]}), encoding="utf-8"
    )
    (out / "report.html").write_text(render_html(report, report_dir=out), encoding="utf-8")
    shown, problems = _first_case_detail(browser, out)
    assert problems == []
    assert '"messages"' in shown and "I verified it" in shown  # the stdout, as text


def test_the_case_view_shows_malformed_messages_instead_of_failing(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What html_data refuses, had it let it through: the page still shows the rest.
    from assay.report import html_data

    monkeypatch.setattr(html_data, "_is_conversation", lambda document: True)
    out = tmp_path / "report"
    out.mkdir()
    report = viewer_report(1, out)
    folder = artifacts_dir(out, report.cases[0].id, report.cases[0].model, 0)
    message = {"role": "assistant", "content": [None, 7, {"type": "text", "text": "kept"}]}
    document = {"messages": [None, 5, [1], {"role": "user", "content": 3}, message]}
    (folder / "transcript.json").write_text(json.dumps(document), encoding="utf-8")
    (out / "report.html").write_text(render_html(report, report_dir=out), encoding="utf-8")
    shown, problems = _first_case_detail(browser, out)
    assert problems == []
    assert "kept" in shown and "null" in shown
