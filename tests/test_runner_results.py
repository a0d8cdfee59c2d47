"""results.jsonl, artifact paths, combining attempts, terminal lines."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.report.model import Attempt, CaseResult, Report, RunInfo, Source, Summary, Usage
from assay.report.terminal import PlainProgress, case_line, clean, print_summary, summary_table
from assay.runner.attempt import artifacts_dir, safe_segment
from assay.runner.outcome import AttemptOutcome
from assay.runner.plan import PlannedRun
from assay.runner.results import ResultsStream, read_results
from assay.suites.case import Case, CaseKind, TaskSpec


def result(case_id: str, model: str | None = None, **changes: object) -> CaseResult:
    fields: dict[str, object] = {
        "id": case_id,
        "suite": case_id.split("/")[0],
        "kind": "task",
        "source": Source(path="suite.json", line=1),
        "model": model,
        "status": "pass",
        "score": 1.0,
    }
    fields.update(changes)
    return CaseResult.model_validate(fields)


def test_stream_writes_whole_lines_that_read_back(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    with ResultsStream(path, append=False) as stream:
        stream.write(result("s/a"))
        stream.write(result("s/b", "m1", status="fail", score=0.0))
        # Visible before close: nothing sits in a user-space buffer.
        assert len(path.read_text().splitlines()) == 2
    read = read_results(path)
    assert set(read) == {("s/a", None), ("s/b", "m1")}
    assert read[("s/b", "m1")].status == "fail"


def test_a_fresh_stream_truncates_and_an_appending_one_does_not(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(result("old/x").model_dump_json() + "\n")
    with ResultsStream(path, append=True) as stream:
        stream.write(result("s/a"))
    assert len(path.read_text().splitlines()) == 2
    with ResultsStream(path, append=False) as stream:
        stream.write(result("s/b"))
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == ["s/b"]


def test_reader_drops_a_truncated_last_line_and_repairs_the_file(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    whole = result("s/a").model_dump_json() + "\n"
    cut = result("s/b").model_dump_json()[:40]
    path.write_text(whole + cut)
    assert set(read_results(path)) == {("s/a", None)}
    assert path.read_text() == whole + cut  # reading alone changes nothing
    read_results(path, repair=True)
    assert path.read_text() == whole
    with ResultsStream(path, append=True) as stream:
        stream.write(result("s/c"))
    assert set(read_results(path)) == {("s/a", None), ("s/c", None)}


def test_reader_completes_a_last_line_missing_only_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(result("s/a").model_dump_json())
    assert set(read_results(path, repair=True)) == {("s/a", None)}
    assert path.read_text().endswith("\n")


def planned(case_id: str, model: str | None = None, *, kind: CaseKind = "task") -> PlannedRun:
    """A planned run of a case as `result` describes it (suite = the id's first part)."""
    suite, _, name = case_id.partition("/")
    spec = TaskSpec(prompt="", workspace=Path("fixture"), commands=())
    case = Case(case_id, suite, name, kind, "task-suite", Path("suite.json"), 1, spec)
    return PlannedRun(case, model, "command", None, None)


def write_lines(path: Path, results: list[CaseResult]) -> None:
    path.write_text("".join(r.model_dump_json() + "\n" for r in results))


def test_reader_keeps_only_planned_runs(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    write_lines(path, [result("s/a", status="fail", score=0.0), result("s/b"), result("s/a", "m")])
    read = read_results(path, plan=[planned("s/a"), planned("s/c")])
    assert list(read) == [("s/a", None)]
    assert read[("s/a", None)].status == "fail"


def test_reader_refuses_a_second_line_for_a_case(tmp_path: Path) -> None:
    # assay writes a case once; a later line (an agent appending a pass) must not win.
    path = tmp_path / "results.jsonl"
    write_lines(path, [result("s/a", status="fail", score=0.0), result("s/b"), result("s/a")])
    with pytest.raises(ConfigError) as caught:
        read_results(path, plan=[planned("s/a")])
    assert str(caught.value).startswith(f"{path}:3: s/a already finished on line 1")


def test_reader_refuses_a_line_describing_another_case_than_planned(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    write_lines(path, [result("s/a")])
    with pytest.raises(ConfigError) as caught:
        read_results(path, plan=[planned("s/a", kind="review")])
    assert str(caught.value) == (
        f"{path}:1: s/a is a task case of suite s here, but a review case of suite s in this "
        "run: resume with the suites the run was started with"
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"score": 50.0, "status": "fail"}, "score: Input should be less than or equal to 1"),
        ({"score": math.nan}, "score: Input should be a finite number"),
        ({"duration_s": -1}, "duration_s: Input should be greater than or equal to 0"),
    ],
)
def test_reader_refuses_a_whole_line_with_numbers_out_of_range(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    # Even as the last line: it ends with its newline, so no kill cut it short.
    path = tmp_path / "results.jsonl"
    good = result("s/a").model_dump_json()
    bad = json.dumps({**result("s/b").model_dump(mode="json"), **changes})  # NaN as json.dump does
    path.write_text(f"{good}\n{bad}\n")
    with pytest.raises(ConfigError) as caught:
        read_results(path, plan=[planned("s/a"), planned("s/b")], repair=True)
    assert str(caught.value) == f"{path}:2: not a results.jsonl line: {message}"
    assert path.read_text() == f"{good}\n{bad}\n"  # refused, not repaired away


def test_reader_rejects_a_damaged_line_in_the_middle(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text("not json\n" + result("s/a").model_dump_json() + "\n")
    with pytest.raises(ConfigError) as caught:
        read_results(path)
    assert str(caught.value).startswith(f"{path}:1: not a results.jsonl line")


def test_reader_needs_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nothing to resume"):
        read_results(tmp_path / "results.jsonl")


def test_safe_segments_keep_safe_names_and_disambiguate_cleaned_ones() -> None:
    assert safe_segment("add-format_function.v2") == "add-format_function.v2"
    cleaned = safe_segment("anthropic/claude x")
    assert cleaned.startswith("anthropic_claude_x-") and "/" not in cleaned
    assert safe_segment("a b") != safe_segment("a_b")
    assert safe_segment("..").startswith("_-")
    fits = "a" * 255
    assert safe_segment(fits) == fits
    cut, other = safe_segment("a" * 256), safe_segment("a" * 257)
    assert len(cut) == len(other) == 255 and cut != other  # cut, and told apart by the hash
    path = artifacts_dir(Path("/r"), "suite/../case", "openai/gpt", 0)
    assert path.parts[:3] == ("/", "r", "cases")
    assert ".." not in path.parts and path.name == "attempt-1"


def test_case_line_formats() -> None:
    assert case_line(result("tasks/add", "m", duration_s=3.21)) == "PASS  tasks/add [m]  1.00  3.2s"
    failed = result("tasks/x", status="fail", score=0.0, reason="checks failed: test\nmore")
    assert case_line(failed) == "FAIL  tasks/x  0.00  0.0s  checks failed: test"
    skipped = result("r/y", status="skipped", score=None, reason="no credentials")
    assert case_line(skipped) == "SKIP  r/y  no credentials"
    errored = result("r/z", status="error", score=None, reason="::error::boom \x1b[2J##[x")
    line = case_line(errored)
    assert line.startswith("ERROR r/z  0.0s  ") and "\x1b" not in line and "##[" not in line


def test_clean_cuts_long_text() -> None:
    assert clean("x" * 500, limit=10) == "xxxxxxx..."
    assert clean("") == ""


def test_plain_progress_and_summary() -> None:
    out = io.StringIO()
    progress = PlainProgress(out)
    cases = [
        result("a/1"),
        result("a/2", status="fail", score=0.0, flaky=True),
        result("b/1", status="skipped", score=None),
    ]
    progress.run_started(3)
    for case in cases:
        progress.case_finished(case)
    progress.run_finished()
    assert out.getvalue().splitlines()[1:] == [case_line(c) for c in cases]

    table = summary_table(cases).splitlines()
    assert table[0].split() == ["suite", "cases", "passed", "failed", "errors", "skipped", "score"]
    assert table[1].split() == ["a", "2", "1", "1", "0", "0", "0.50"]
    assert table[2].split() == ["b", "1", "0", "0", "0", "1", "-"]
    assert table[3].split() == ["total", "3", "1", "1", "0", "1", "0.50"]

    summary = Summary(
        total=3,
        passed=1,
        failed=1,
        errors=0,
        skipped=1,
        score=0.5,
        gate="fail",
        gate_reason="score 0.50 < threshold 0.75",
    )
    report = Report(
        run=RunInfo(id="x", started_at="t", assay_version="0", threshold=0.75),
        summary=summary,
        cases=cases,
    )
    out = io.StringIO()
    print_summary(report, report_dir="out/dir", stream=out)
    text = out.getvalue()
    assert "flaky (1): a/2" in text
    assert text.rstrip().splitlines()[-2:] == [
        "gate: FAIL  score 0.50 < threshold 0.75",
        "report: out/dir",
    ]


def test_combining_outcomes_takes_details_from_the_last_scored_attempt() -> None:
    from assay.runner.combine import case_result
    from assay.runner.plan import PlannedRun
    from tests.test_runner_plan import task_case

    run = PlannedRun(task_case(), None, "command", ("a",), None)
    passing = AttemptOutcome(
        Attempt(status="pass", score=1.0, duration_s=1.0, usage=Usage(input_tokens=3)),
        findings=[{"title": "first"}],
    )
    failing = AttemptOutcome(
        Attempt(status="fail", score=0.0, reason="test failed", duration_s=2.0),
        findings=[{"title": "second"}],
    )
    errored = AttemptOutcome(Attempt(status="error", reason="agent crashed", duration_s=0.5))
    combined = case_result(run, [passing, failing, errored])
    assert combined.status == "fail" and combined.flaky and combined.score == 0.5
    assert combined.reason == "test failed"
    assert combined.findings == [{"title": "second"}]
    assert combined.duration_s == 3.5 and combined.usage.input_tokens == 3
    assert len(combined.attempts) == 3
    cut = case_result(run, [passing], forced_reason="interrupted")
    assert (cut.status, cut.score, cut.reason) == ("skipped", None, "interrupted")


def test_make_listener_picks_plain_lines_off_a_terminal_and_live_on_one() -> None:
    from assay.report.terminal import LiveProgress, make_listener

    assert isinstance(make_listener(io.StringIO()), PlainProgress)
    out = io.StringIO()
    live = make_listener(out, live=True)
    assert isinstance(live, LiveProgress)
    live.run_started(2)
    live.case_started("a/1", None)
    live.case_started("a/2", "m")
    live.case_finished(result("a/1"))
    live.case_finished(result("a/2", "m", status="error", score=None, reason="agent crashed"))
    live.run_finished()
    text = out.getvalue()
    assert "ERROR a/2 [m]" in text and "agent crashed" in text
