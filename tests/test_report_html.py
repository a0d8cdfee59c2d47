"""report.html without a browser: self-contained, escaped, written by run and merge, `view`."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path

import pytest

from assay.cli import main
from assay.core.files import ATTEMPT_DIFF_FILE, artifacts_dir
from assay.core.text import BIDI_FORMATTING
from assay.report import html
from assay.report.html import embed_json, model_matrix, render_html, trend_points
from assay.report.html_data import MAX_ARTIFACT_CHARS, viewer_data
from tests.viewer_reports import HOSTILE, viewer_report


def _embedded(page: str) -> str:
    match = re.search(r'<script type="application/json" id="assay-data">(.*?)</script>', page, re.S)
    assert match is not None
    return match.group(1)


def test_the_page_is_self_contained_and_escapes_every_untrusted_text(tmp_path: Path) -> None:
    page = render_html(viewer_report(10, tmp_path), report_dir=tmp_path)
    # Nothing is fetched: no external script, style, font or image.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<script>window.__pwned" not in page
    data = _embedded(page)
    assert "</" not in data and "<!--" not in data and "\u2028" not in data
    decoded = json.loads(data)
    assert decoded["cases"][0]["findings"][0]["title"] == HOSTILE
    assert decoded["cases"][0]["diff"].startswith("diff --git")
    assert decoded["cases"][0]["attempts"][0]["transcript"]["messages"][0]["role"] == "user"
    assert page.count("<script") == 2  # the data and the viewer's own script


def test_embed_json_cannot_close_its_script_element() -> None:
    text = str(embed_json({"x": "</script><script>alert(1)</script>", "y": "a & b"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"x": "</script><script>alert(1)</script>", "y": "a & b"}


def test_pictures_summarise_suites_models_and_the_trend() -> None:
    report = viewer_report(30)
    matrix = model_matrix(report.cases)
    assert matrix["models"] == ["model-a", "model-b"]
    assert {row["suite"] for row in matrix["rows"]} == {"review", "tasks", "rubric"}
    cell = matrix["rows"][0]["cells"][0]
    assert cell is not None and cell["pass"] + cell["fail"] + cell["error"] + cell["skipped"] > 0
    assert trend_points([{"score": 0.5}]) is None
    trend = trend_points([{"run_id": "a", "score": 0.0}, {"run_id": "b", "score": 1.0}])
    assert trend is not None and trend["points"] == "10.0,110.0 590.0,10.0"
    page = render_html(
        report,
        report_dir=None,
        history=[{"run_id": "a", "score": 0.2}, {"run_id": "b", "score": 0.9}],
    )
    assert 'id="trend"' in page and "<polyline" in page
    assert 'id="suite-scores"' in page and 'id="model-matrix"' in page


def test_view_prints_the_path_when_there_is_no_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report_dir = tmp_path / "assay-report"
    report_dir.mkdir()
    (report_dir / "report.html").write_text("<!DOCTYPE html>", encoding="utf-8")
    monkeypatch.setenv("BROWSER", "false")  # a browser command that fails: none to open
    for display in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(display, raising=False)
    assert main(["view", str(report_dir)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {(report_dir / 'report.html').resolve()}"
    assert main(["view", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "no report.html here" in err and "Traceback" not in err


def test_the_page_spells_out_the_bidirectional_characters_assay_strips_elsewhere() -> None:
    template = (Path(html.__file__).parent / "templates" / "report.html.j2").read_text("utf-8")
    shown_in_js = BIDI_FORMATTING.encode("ascii", "backslashreplace").decode()
    assert f"const BIDI = /[{shown_in_js}]/g;" in template


@pytest.mark.slow
def test_a_huge_artifact_is_read_no_further_than_the_page_shows(tmp_path: Path) -> None:
    # An agent's stdout is kept up to 64 MiB; the page embeds 100,000 characters of it.
    report = viewer_report(3, tmp_path)
    huge = artifacts_dir(tmp_path, report.cases[0].id, report.cases[0].model, 0)
    (huge / ATTEMPT_DIFF_FILE).write_text("+x\n" * 10_000_000, encoding="utf-8")  # 30 MB
    tracemalloc.start()
    try:
        data = viewer_data(report, tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    diff = data["cases"][0]["diff"]
    assert diff.startswith("+x\n") and diff.endswith("[…cut]")
    assert len(diff) == MAX_ARTIFACT_CHARS + len("\n[…cut]")
    assert peak < 8 * 2**20, f"{peak / 2**20:.0f} MiB held to embed 100 kB"


_MESSAGE = {"role": "assistant", "content": [{"type": "text", "text": "all tests pass"}]}


def _with_transcript(tmp_path: Path, document: object) -> dict[str, object]:
    """Case 0's first transcript as report.html's data has it, its file holding `document`."""
    report = viewer_report(1, tmp_path)
    folder = artifacts_dir(tmp_path, report.cases[0].id, report.cases[0].model, 0)
    (folder / "transcript.json").write_text(json.dumps(document), encoding="utf-8")
    transcript = viewer_data(report, tmp_path)["cases"][0]["attempts"][0]["transcript"]
    assert isinstance(transcript, dict)
    return transcript


@pytest.mark.parametrize(
    "document",
    [
        {"messages": [_MESSAGE, None, 5]},
        {"messages": [{"content": "no role"}]},
        {"messages": [{"role": 1, "content": "x"}]},
        {"messages": [{"role": "user", "content": 5}]},
        {"messages": [{"role": "user", "content": [None]}]},
        {"messages": [{"role": "user", "content": [{"text": "no type"}]}]},
        {"messages": [_MESSAGE], "error": {"not": "a string"}},
    ],
)
def test_agent_stdout_shaped_almost_like_a_transcript_is_shown_as_text(
    tmp_path: Path, document: object
) -> None:
    # A command agent's stdout is its transcript, and the agent chooses what it prints.
    assert _with_transcript(tmp_path, document) == {"text": json.dumps(document)}


def test_a_well_formed_conversation_is_shown_as_messages(tmp_path: Path) -> None:
    document = {"messages": [{"role": "user", "content": "review"}, _MESSAGE], "error": "x"}
    transcript = _with_transcript(tmp_path, document)
    assert json.loads(transcript["messages"].text) == document["messages"]  # type: ignore[attr-defined]
    assert transcript["error"] == "x"
