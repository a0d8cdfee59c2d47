"""Run history: kept runs bounded by count, `assay history`, `compare @last`, the trend."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from assay.cli import main
from assay.errors import ConfigError
from assay.report.history import (
    flaky_cases,
    history_dir_for,
    history_keep,
    read_history,
    record_run,
    resolve_ref,
)
from assay.report.model import Report
from assay.runner.writer import write_report_dir
from tests.viewer_reports import viewer_report


def _run(run_id: str, *, flip: bool = False) -> Report:
    report = viewer_report(6, run_id=run_id)
    if flip:
        case = report.cases[1].model_copy(update={"status": "fail", "score": 0.0})
        report = report.model_copy(update={"cases": [report.cases[0], case, *report.cases[2:]]})
    return report


@pytest.mark.slow
def test_runs_are_kept_newest_last_and_bounded(tmp_path: Path) -> None:
    where = tmp_path / ".assay-history"
    for n in range(5):
        record_run(_run(f"r{n}"), where, branch="main" if n < 3 else "feature", keep=3)
    runs = read_history(where)
    assert [e.run_id for e in runs] == ["r2", "r3", "r4"]
    assert sorted(p.name for p in (where / "reports").iterdir()) == [
        "r2.json",
        "r3.json",
        "r4.json",
    ]
    assert runs[-1].total == 6 and runs[-1].branch == "feature"
    assert resolve_ref("@last", where) == where / "reports" / "r4.json"
    assert resolve_ref("@main", where) == where / "reports" / "r2.json"
    assert resolve_ref("r3", where) == where / "reports" / "r3.json"
    with pytest.raises(Exception, match="no such run in the history"):
        resolve_ref("@nowhere", where)


def test_flaky_lists_the_cases_that_flipped(tmp_path: Path) -> None:
    where = tmp_path / "h"
    record_run(_run("a"), where, branch="main")
    record_run(_run("b", flip=True), where, branch="main")
    assert flaky_cases(where) == [("tasks/case-0001 [model-b]", ["pass", "fail"])]


def test_the_default_place_is_beside_the_report_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_HISTORY", raising=False)
    assert history_dir_for(tmp_path / "out") == tmp_path.resolve() / ".assay-history"
    monkeypatch.setenv("ASSAY_HISTORY", str(tmp_path / "elsewhere"))
    assert history_dir_for(tmp_path / "out") == tmp_path / "elsewhere"
    assert history_dir_for(tmp_path / "out", tmp_path / "given") == tmp_path / "given"


def test_the_writer_records_the_run_and_report_html_draws_the_trend(tmp_path: Path) -> None:
    where = tmp_path / "h"
    record_run(_run("old"), where, branch="main")
    out = tmp_path / "out"
    out.mkdir()
    write_report_dir(_run("new"), out, cases=[], history_dir=where)
    assert [e.run_id for e in read_history(where)] == ["old", "new"]
    assert 'id="trend"' in (out / "report.html").read_text(encoding="utf-8")


def test_history_and_compare_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "h"
    record_run(_run("base1"), where, branch="main")
    record_run(_run("head1", flip=True), where, branch="feature")
    assert main(["history", "--history", str(where)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0].startswith("RUN")
    assert listing[1].startswith("head1") and "feature" in listing[1]
    assert listing[2].startswith("base1") and "main" in listing[2]
    assert main(["history", "--flaky", "--history", str(where)]) == 0
    flaky_out = capsys.readouterr().out
    assert "tasks/case-0001 [model-b]  pass fail" in flaky_out
    # ... and the list that quarantines them, ready for [tool.assay]
    assert flaky_out.endswith('quarantine = [\n    "tasks/case-0001",\n]\n')
    assert main(["compare", "@main", "@last", "--json", "--history", str(where)]) == 0
    comparison = json.loads(capsys.readouterr().out)
    assert (comparison["base"]["run_id"], comparison["head"]["run_id"]) == ("base1", "head1")
    assert comparison["counts"]["newly_failing"] == 1
    assert main(["compare", "@nope", "@last", "--history", str(where)]) == 2
    assert "no such run in the history" in capsys.readouterr().err
    (where / "index.json").write_text("{", encoding="utf-8")
    assert main(["history", "--history", str(where)]) == 2
    assert "not a readable history index" in capsys.readouterr().err


def test_history_prints_a_hand_edited_index_harmlessly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "h"
    for run_id, flip in (("a", False), ("b", True)):
        report = _run(run_id, flip=flip)
        run = report.run.model_copy(update={"git_sha": "\x1b]0;PWN\x07\x1b[2J##[error]x"})
        cases = [report.cases[0], report.cases[1].model_copy(update={"id": "tasks/c ##[x"})]
        record_run(report.model_copy(update={"run": run, "cases": cases}), where, branch="m")
    assert main(["history", "--history", str(where)]) == 0
    listing = capsys.readouterr().out
    assert "\x1b" not in listing and "\x07" not in listing and "##[" not in listing
    assert main(["history", "--flaky", "--history", str(where)]) == 0
    flaky = capsys.readouterr().out
    assert "##[" not in flaky
    snippet = flaky[flaky.index("quarantine = [") :]
    assert tomllib.loads(snippet) == {"quarantine": ["tasks/c ##[x"]}  # the same id, quoted


def test_trend_mermaid_needs_two_scored_runs_and_keeps_labels_harmless(tmp_path: Path) -> None:
    from assay.report.history import trend_mermaid

    where = tmp_path / "h"
    record_run(_run('a"]\nline'), where, branch="main")
    assert trend_mermaid(read_history(where)) is None
    record_run(_run("b"), where, branch="main")
    chart = trend_mermaid(read_history(where))
    assert chart is not None
    assert 'x-axis ["aline", "b"]' in chart


def test_an_edited_index_cannot_send_trimming_or_compare_outside_the_history(
    tmp_path: Path,
) -> None:
    where = tmp_path / ".assay-history"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    record_run(_run("r0"), where, keep=3)
    index = json.loads((where / "index.json").read_text())
    index["runs"][0]["report"] = "../victim.txt"
    (where / "index.json").write_text(json.dumps(index))
    with pytest.raises(Exception, match=r"names '../victim.txt', not a report of the history"):
        resolve_ref("@last", where)
    for n in range(1, 4):  # r0 is trimmed: its "report" is not unlinked
        record_run(_run(f"r{n}"), where, keep=3)
    assert victim.read_text() == "keep me"
    assert [e.run_id for e in read_history(where)] == ["r1", "r2", "r3"]


@pytest.mark.parametrize("text", ["0", "-1", "x", "2_0"])
def test_a_history_size_that_is_no_whole_number_of_runs_is_refused(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_HISTORY_KEEP", text)
    with pytest.raises(ConfigError, match="ASSAY_HISTORY_KEEP"):
        history_keep()
