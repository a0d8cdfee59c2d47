"""`assay merge`: shard reports back into the report of the whole run, gate re-applied."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.errors import ConfigError
from assay.report.gate.stats import summarize
from assay.report.merge import merge_reports
from assay.report.model import Attempt, CaseResult, Report, RunInfo, Source, Usage
from assay.report.read import find_reports, read_report

# -- building reports by hand ----------------------------------------------------------------


def make_case(
    case_id: str,
    status: str = "pass",
    *,
    model: str | None = None,
    path: str = "evals/calc.json",
    line: int = 1,
    score: float | None = None,
    attempts: int = 1,
    cost: float | None = 0.01,
    **fields: Any,
) -> CaseResult:
    if score is None:
        score = {"pass": 1.0, "fail": 0.0}.get(status)
    usage = Usage(input_tokens=100, output_tokens=10, cost_usd=cost)
    return CaseResult(
        id=case_id,
        suite=case_id.split("/")[0],
        kind=fields.pop("kind", "task"),
        source=Source(path=path, line=line),
        model=model,
        status=status,  # type: ignore[arg-type]
        score=score,
        usage=usage,
        duration_s=2.0,
        attempts=[
            Attempt(status=status, score=score, duration_s=2.0 / attempts)  # type: ignore[arg-type]
            for _ in range(attempts)
        ],
        **fields,
    )


def make_report(
    cases: list[CaseResult],
    *,
    shard: str | None = None,
    threshold: float = 0.75,
    max_errors: int = 0,
    models: list[str] | None = None,
    started: str = "2025-03-01T10:00:00Z",
    finished: str | None = "2025-03-01T10:05:00Z",
    duration_s: float = 10.0,
    **run: Any,
) -> Report:
    return Report(
        run=RunInfo(
            id=f"run-{shard or 'all'}",
            started_at=started,
            finished_at=finished,
            assay_version="0.1.0",
            threshold=threshold,
            models=models or [],
            shard=shard,
            max_errors=max_errors,
            **run,
        ),
        summary=summarize(cases, threshold=threshold, max_errors=max_errors, duration_s=duration_s),
        cases=cases,
    )


def order(report: Report) -> list[tuple[str, str | None]]:
    return [(c.id, c.model) for c in report.cases]


def write(path: Path, report: Report) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.model_dump_json(indent=2))
    return path


def write_tampered(path: Path, report: Report, score: float) -> Path:
    """`report` with its first case's score replaced, written the way json.dump does
    (a NaN as the bare token `NaN`, which Python's json module reads back)."""
    data = json.loads(report.model_dump_json())
    data["cases"][0]["score"] = score
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


# -- merge_reports ---------------------------------------------------------------------------


def test_shards_merge_into_the_runner_order_with_totals_summed() -> None:
    # The runner reports suite files in path order, each file's cases in document order
    # (not id order) and each case across the model matrix in --model order.
    models = ["zeta-model", "alpha-model"]
    unsharded = [
        make_case(f"calc/{name}", status, model=model, line=line, path="evals/calc.json")
        for line, name, status in ((3, "zeta", "pass"), (9, "alpha", "fail"), (15, "mid", "pass"))
        for model in models
    ] + [
        make_case("web/b", "error", model=m, path="evals/sub/web.json", line=2, score=None)
        for m in models
    ]
    shard_of = {"calc/alpha": "1/3", "calc/mid": "2/3", "calc/zeta": "3/3", "web/b": "3/3"}
    shards = [
        make_report(
            [c for c in unsharded if shard_of[c.id] == shard],
            shard=shard,
            models=models,
            started=f"2025-03-01T10:0{n}:00Z",
            finished=f"2025-03-01T10:1{n}:00+00:00",
            duration_s=float(n),
        )
        for n, shard in ((2, "2/3"), (1, "1/3"), (3, "3/3"))
    ]
    warnings: list[str] = []
    merged = merge_reports(
        shards, labels=["b.json", "a.json", "c.json"], on_warning=warnings.append
    )

    assert warnings == []
    assert order(merged) == order(make_report(unsharded))
    assert merged.run.shard is None and merged.run.id not in {s.run.id for s in shards}
    assert merged.run.started_at == "2025-03-01T10:01:00Z"
    assert merged.run.finished_at == "2025-03-01T10:13:00+00:00"
    assert merged.run.models == models and merged.run.threshold == 0.75
    expected = summarize(unsharded, threshold=0.75, max_errors=0, duration_s=6.0)
    assert merged.summary == expected
    assert merged.summary.tokens.input == 100 * len(unsharded)
    assert merged.summary.cost_usd == pytest.approx(0.01 * len(unsharded))
    assert merged.summary.gate == "fail" and merged.summary.errors == 2


def test_a_case_in_two_shards_is_an_error_naming_both_files() -> None:
    first = make_report([make_case("calc/a"), make_case("calc/b")], shard="1/2")
    second = make_report([make_case("calc/b")], shard="2/2")
    with pytest.raises(ConfigError, match=r"calc/b is in both one\.json and two\.json"):
        merge_reports([first, second], labels=["one.json", "two.json"])


def test_the_same_case_for_another_model_is_no_overlap() -> None:
    first = make_report([make_case("calc/a", model="m1")], models=["m1"])
    second = make_report([make_case("calc/a", model="m2")], models=["m2"])
    warnings: list[str] = []
    merged = merge_reports([first, second], on_warning=warnings.append)
    assert order(merged) == [("calc/a", "m1"), ("calc/a", "m2")]
    assert warnings == ["the reports differ in models: report 1: m1; report 2: m2"]


@pytest.mark.parametrize(
    ("shards", "message"),
    [
        (["1/3", "3/3"], r"missing shard 2/3: got 2 of 3 shards \(1/3 from s1, 3/3 from s2\)"),
        (["1/2", "2/3"], r"shards of different splits \(s1 is 1/2, s2 is 2/3\)"),
        (["1/2", "1/2"], r"shard 1/2 is given twice: s1 and s2"),
        (["1/2", "two of two"], r"s2: run.shard must look like I/N"),
        (["0/2", "2/2"], r"s1: run.shard must look like I/N .*'0/2'"),
    ],
)
def test_shards_must_cover_one_split_exactly_once(shards: list[str], message: str) -> None:
    reports = [make_report([make_case(f"calc/{n}")], shard=shard) for n, shard in enumerate(shards)]
    with pytest.raises(ConfigError, match=message):
        merge_reports(reports, labels=["s1", "s2"])


def test_unsharded_reports_merge_as_is_and_warn_when_they_overlap() -> None:
    first = make_report([make_case("calc/a", "fail"), make_case("calc/b", line=2)])
    second = make_report([make_case("calc/a", "pass"), make_case("calc/c", line=3)])
    warnings: list[str] = []
    merged = merge_reports([first, second], labels=["old", "new"], on_warning=warnings.append)
    assert [(c.id, c.status) for c in merged.cases] == [
        ("calc/a", "pass"),
        ("calc/b", "pass"),
        ("calc/c", "pass"),
    ]
    assert warnings == ["1 case(s) are in both old and new (calc/a): keeping the results from new"]


def test_a_case_listed_twice_in_one_report_is_an_error() -> None:
    broken = make_report([make_case("calc/a"), make_case("calc/a")])
    with pytest.raises(ConfigError, match=r"^dup\.json: case calc/a appears twice$"):
        merge_reports([broken], labels=["dup.json"])


def test_reports_of_different_suites_cannot_be_merged() -> None:
    review = make_report([make_case("calc/a", kind="review")], shard="1/2")
    task = make_report([make_case("calc/a", model="m", kind="task")], shard="2/2")
    with pytest.raises(ConfigError, match="calc/a is not the same case in r1 .* and r2"):
        merge_reports([review, task], labels=["r1", "r2"])


def test_the_gate_is_reapplied_with_the_given_threshold_and_max_errors() -> None:
    shards = [
        make_report(
            [make_case("calc/a"), make_case("calc/b", "fail", line=2)], shard="1/2", threshold=0.5
        ),
        make_report(
            [make_case("calc/c", "error", line=3, score=None)],
            shard="2/2",
            threshold=0.5,
            max_errors=1,
        ),
    ]
    warnings: list[str] = []
    strictest = merge_reports(shards, on_warning=warnings.append)
    assert strictest.run.max_errors == 0 and strictest.summary.gate == "fail"
    assert strictest.summary.gate_reason == "errors 1 > max-errors 0"
    assert any(w.startswith("the reports differ in max-errors") for w in warnings)

    lenient = merge_reports(shards, max_errors=1)
    assert lenient.summary.gate == "pass" and lenient.summary.score == 0.5
    assert lenient.summary.gate_reason == "score 0.50 >= threshold 0.50"

    strict = merge_reports(shards, threshold=0.9, max_errors=1)
    assert strict.run.threshold == 0.9 and strict.summary.gate == "fail"
    assert strict.summary.gate_reason == "score 0.50 < threshold 0.90"


def test_differing_thresholds_warn_and_the_highest_applies() -> None:
    shards = [
        make_report([make_case("calc/a")], shard="1/2", threshold=0.5),
        make_report([make_case("calc/b", line=2)], shard="2/2", threshold=0.8, repeat=2),
    ]
    warnings: list[str] = []
    merged = merge_reports(shards, labels=["x", "y"], on_warning=warnings.append)
    assert merged.run.threshold == 0.8 and merged.run.repeat == 2
    assert "the reports differ in repeat: x: 1; y: 2" in warnings
    assert any(w.startswith("the reports differ in threshold") for w in warnings)
    quiet: list[str] = []
    merge_reports(shards, threshold=0.7, labels=["x", "y"], on_warning=quiet.append)
    assert not any("threshold" in w for w in quiet)


def test_interruptions_carry_over_with_their_counts_added_up() -> None:
    shards = []
    for index, name in ((1, "a"), (2, "b")):
        cases = [
            make_case(f"calc/{name}", line=index),
            make_case(f"calc/{name}2", "skipped", line=10 + index, reason="interrupted"),
        ]
        shards.append(make_report(cases, shard=f"{index}/2", interrupted=True))
    assert shards[0].summary.gate == "fail"
    assert shards[0].summary.gate_reason.startswith(
        "incomplete: 1 of 2 case(s) not run (interrupted: 1); "
    )
    merged = merge_reports(shards)
    assert merged.run.interrupted
    assert merged.summary.gate == "fail"
    assert merged.summary.gate_reason == (
        "incomplete: 2 of 4 case(s) not run (interrupted: 2); "
        "score 1.00 >= threshold 0.75 over the cases that ran"
    )


def test_the_shards_notes_are_kept_once_each() -> None:
    note = "codex runs openai/ models, not claude-x: its cases ran with codex's own default"
    shards = [
        make_report([make_case("calc/a", line=1)], shard="1/2", notes=[note]),
        make_report([make_case("calc/b", line=2)], shard="2/2", notes=[note, "another"]),
    ]
    assert merge_reports(shards).run.notes == [note, "another"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"threshold": 1.5}, "--threshold must be between 0 and 1, got 1.5"),
        ({"threshold": float("nan")}, "--threshold must be between 0 and 1"),
        ({"max_errors": -1}, "--max-errors must be 0 or more, got -1"),
    ],
)
def test_gate_options_are_checked(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        merge_reports([make_report([make_case("calc/a")])], **options)


def test_an_unreadable_run_time_names_the_report() -> None:
    report = make_report([make_case("calc/a")], started="yesterday")
    with pytest.raises(ConfigError, match="r.json: run time 'yesterday' is not an ISO 8601"):
        merge_reports([report], labels=["r.json"])


# -- reading reports -------------------------------------------------------------------------


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text('{\n  "contract": "assay.report.v1",\n  "run": {,\n}')
    with pytest.raises(ConfigError) as caught:
        read_report(path)
    message = "not a report: invalid JSON: Expecting property name enclosed in double quotes"
    assert str(caught.value) == f"{path}:3:11: {message}"


def test_schema_errors_name_the_json_path_and_its_line(tmp_path: Path) -> None:
    report = make_report([make_case("calc/a"), make_case("calc/b")])
    data = json.loads(report.model_dump_json())
    data["cases"][1]["status"] = "passed"
    del data["summary"]["gate"]
    path = tmp_path / "report.json"
    text = json.dumps(data, indent=2)
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        read_report(path)
    lines = str(caught.value).splitlines()
    status_line = next(
        n for n, line in enumerate(text.splitlines(), 1) if '"status": "passed"' in line
    )
    summary_line = next(n for n, line in enumerate(text.splitlines(), 1) if '"summary"' in line)
    assert lines[0] == f"{path}:{summary_line}:3: summary.gate: Field required"
    assert lines[1].startswith(f"{path}:{status_line}:7: cases[1].status: Input should be 'pass'")


def test_another_contract_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"contract": "pvyai.agenteval.report.v1"}))
    with pytest.raises(
        ConfigError, match=r"other\.json:1:2: contract: Input should be 'assay\.report\.v1'"
    ):
        read_report(path)


def test_find_reports_searches_directories_and_skips_the_output(tmp_path: Path) -> None:
    one = write(tmp_path / "artifacts" / "shard-1" / "report.json", make_report([]))
    two = write(tmp_path / "artifacts" / "shard-2" / "nested" / "report.json", make_report([]))
    write(tmp_path / "artifacts" / ".hidden" / "report.json", make_report([]))
    out = write(tmp_path / "artifacts" / "merged" / "report.json", make_report([]))
    extra = write(tmp_path / "elsewhere.json", make_report([]))
    (tmp_path / "artifacts" / "shard-2" / "nested" / "empty").mkdir()
    found = find_reports([tmp_path / "artifacts", extra, one], exclude=out)
    assert found == [one, two, extra]
    with pytest.raises(ConfigError, match="no report.json found under this directory"):
        find_reports([tmp_path / "artifacts" / "shard-2" / "nested" / "empty"])
    with pytest.raises(ConfigError, match="under this directory is also the output"):
        find_reports([tmp_path / "artifacts" / "merged"], exclude=out)
    with pytest.raises(ConfigError, match="missing.json: no such file or directory"):
        find_reports([tmp_path / "missing.json"])


# -- the command line ------------------------------------------------------------------------


def shard_files(root: Path, *, threshold: float = 0.75) -> list[Path]:
    shards = [
        make_report(
            [make_case("calc/a"), make_case("calc/c", "fail", line=3)],
            shard="1/2",
            threshold=threshold,
        ),
        make_report([make_case("calc/b", line=2)], shard="2/2", threshold=threshold),
    ]
    return [write(root / f"shard-{n}" / "report.json", r) for n, r in enumerate(shards, 1)]


def test_cli_writes_report_summary_and_junit_and_exits_with_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = shard_files(tmp_path, threshold=0.5)
    out = tmp_path / "out" / "merged.json"
    assert main(["merge", *map(str, paths), "-o", str(out)]) == 0
    merged = Report.model_validate_json(out.read_text())
    assert [c.id for c in merged.cases] == ["calc/a", "calc/b", "calc/c"]
    assert (out.parent / "summary.md").read_text().startswith("## ✅ Evaluation Results")
    assert 'tests="3"' in (out.parent / "junit.xml").read_text()
    assert sorted(p.name for p in out.parent.iterdir()) == [
        ".assay.lock",  # marks the directory as assay's: the next merge may replace these
        "junit.xml",
        "merged.json",
        "report.html",
        "summary.md",
    ]
    stdout = capsys.readouterr().out
    assert "merged 2 report(s)" in stdout and "gate: PASS" in stdout

    assert main(["merge", *map(str, paths), "-o", str(out), "--threshold", "0.9"]) == 1
    assert Report.model_validate_json(out.read_text()).summary.gate == "fail"
    assert "gate: FAIL  score 0.67 < threshold 0.90" in capsys.readouterr().out


def test_cli_merges_every_report_under_a_directory_into_it_again_and_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    artifacts = tmp_path / "artifacts"
    shard_files(artifacts)
    (artifacts / "merged").mkdir()
    for _ in range(2):  # the second time, the first merge's output must not be read
        assert main(["merge", str(artifacts), "-o", str(artifacts / "merged")]) == 1
    merged = read_report(artifacts / "merged" / "report.json")
    assert [c.id for c in merged.cases] == ["calc/a", "calc/b", "calc/c"]
    assert "warning" not in capsys.readouterr().err


def test_cli_copies_case_artifacts_but_no_symlinks(tmp_path: Path) -> None:
    paths = shard_files(tmp_path)
    attempt_dir = paths[1].parent / "cases" / "calc" / "b" / "attempt-1"
    attempt_dir.mkdir(parents=True)
    (attempt_dir / "stdout.txt").write_text("agent output\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the artifact\n")
    os.symlink(secret, attempt_dir / "leak.txt")
    out = tmp_path / "merged" / "report.json"
    assert main(["merge", *map(str, paths), "-o", str(out)]) == 1
    copied = out.parent / "cases" / "calc" / "b" / "attempt-1"
    assert (copied / "stdout.txt").read_text() == "agent output\n"
    assert not (copied / "leak.txt").exists()


def test_cli_invalid_reports_exit_2_naming_every_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = shard_files(tmp_path)
    paths[0].write_text("{not json")
    bad_schema = write(tmp_path / "third.json", make_report([]))
    bad_schema.write_text(bad_schema.read_text().replace('"gate": "fail"', '"gate": "maybe"'))
    out = tmp_path / "out.json"
    assert main(["merge", str(paths[0]), str(paths[1]), str(bad_schema), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{paths[0]}:1:2: not a report: invalid JSON" in err
    assert f"{bad_schema}:" in err and "summary.gate: Input should be 'pass' or 'fail'" in err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("score", [math.nan, math.inf, 7.5, -1.0])
def test_cli_refuses_a_score_the_gate_cannot_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], score: float
) -> None:
    # A NaN used to pass any gate (`nan < threshold` is False), and 7.5 to lift the mean.
    good = make_report([make_case("calc/b", "fail")])
    tampered = write_tampered(
        tmp_path / "a" / "report.json", make_report([make_case("calc/a")]), score
    )
    out = tmp_path / "out" / "report.json"
    other = write(tmp_path / "b" / "report.json", good)
    assert main(["merge", str(tampered.parent), str(other), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    lines = tampered.read_text().splitlines()
    cases_at = next(n for n, text in enumerate(lines) if '"cases"' in text)
    line = next(n for n, text in enumerate(lines[cases_at:], cases_at + 1) if '"score"' in text)
    assert f"{tampered}:{line}:" in err and "cases[0].score: Input should be" in err
    assert "Traceback" not in err and not out.exists()


def test_cli_refuses_an_output_that_would_overwrite_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = (write(tmp_path / name / "report.json", make_report([make_case(f"calc/{name}")]))
                for name in ("a", "b"))  # fmt: skip
    before = one.read_text()
    for given in (one.parent, one):
        assert main(["merge", str(given), str(two), "-o", str(one)]) == 2
        err = capsys.readouterr().err
        assert f"{given}: " in err
        assert "is also the output, which the merge would overwrite" in err
    assert one.read_text() == before


def test_cli_missing_shard_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = shard_files(tmp_path)
    assert main(["merge", str(paths[0]), "-o", str(tmp_path / "out.json")]) == 2
    assert "missing shard 2/2: got 1 of 2 shards" in capsys.readouterr().err


# -- a real sharded run ----------------------------------------------------------------------


@pytest.mark.slow
def test_a_real_sharded_run_merges_into_the_unsharded_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_runner_e2e import agent_argv, suite_json, write_project

    # Suite order differs from id order; one task solves for one model only.
    plans = {"zeta": {}, "alpha": {"solve": False}, "mid": {"solve_models": ["m2"]}, "beta": {}}
    root = write_project(tmp_path / "proj", plans)
    suite_json(root, list(plans))

    def run(report: str, *extra: str, gate: int) -> Report:
        argv = [
            "run", str(root / "calc.json"), "--agent-command", " ".join(agent_argv(root)),
            "--model", "m2,m1", "--report-dir", str(root / report),
            "--work-root", str(root / "work"), "--concurrency", "4", *extra,
        ]  # fmt: skip
        assert main(argv) == gate
        return read_report(root / report / "report.json")

    whole = run("whole", gate=1)  # alpha never passes
    shards = [run(f"shard{i}", "--shard", f"{i}/2", gate=2 - i) for i in (2, 1)]
    assert {c.id for c in shards[0].cases}.isdisjoint({c.id for c in shards[1].cases})
    out = root / "merged" / "report.json"
    merge_args = ["merge", str(root / "shard2"), str(root / "shard1"), "-o", str(out)]
    assert main(merge_args) == 1
    merged = read_report(out)
    capsys.readouterr()

    assert order(merged) == order(whole)
    assert [c.id for c in whole.cases][::2] == ["calc/zeta", "calc/alpha", "calc/mid", "calc/beta"]
    assert without_timings(merged) == without_timings(whole)
    assert merged.run.id != whole.run.id
    for case in merged.cases:
        for attempt in case.attempts:
            assert attempt.transcript and (out.parent / attempt.transcript).is_file()


@pytest.mark.slow
def test_a_shard_without_cases_passes_and_still_merges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_runner_e2e import agent_argv, suite_json, write_project

    root = write_project(tmp_path / "proj", {"a": {}, "b": {}})
    suite_json(root, ["a", "b"])
    for index in (1, 2, 3):  # a CI matrix with more shards than cases
        argv = [
            "run", str(root / "calc.json"), "--agent-command", " ".join(agent_argv(root)),
            "--shard", f"{index}/3", "--report-dir", str(root / f"shard{index}"),
            "--work-root", str(root / "work"),
        ]  # fmt: skip
        assert main(argv) == 0
    out = capsys.readouterr().out
    assert "gate: PASS  shard 3/3 has no cases (there are more shards than cases)" in out
    empty = read_report(root / "shard3" / "report.json")
    assert (empty.run.shard, empty.cases, empty.summary.score) == ("3/3", [], None)

    merged_path = root / "merged" / "report.json"
    shards = [str(root / f"shard{i}") for i in (1, 2, 3)]
    assert main(["merge", *shards, "-o", str(merged_path)]) == 0
    merged = read_report(merged_path)
    assert [c.id for c in merged.cases] == ["calc/a", "calc/b"]
    assert merged.summary.gate_reason == "score 1.00 >= threshold 0.75"
    capsys.readouterr()


def without_timings(report: Report) -> Any:
    """The report without run id, times and every duration (checks have theirs too)."""
    data = report.model_dump()
    for key in ("id", "started_at", "finished_at"):
        data["run"].pop(key)
    return _drop_durations(data)


def _drop_durations(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _drop_durations(v) for k, v in value.items() if k not in ("duration_s", "durationS")
        }
    if isinstance(value, list):
        return [_drop_durations(v) for v in value]
    return value


@pytest.mark.parametrize("given", ["merged", "merged/", "merged/report.json"])
def test_cli_output_to_a_new_directory_puts_every_file_in_it(
    given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-o merged/` wrote report.json as a file named `merged`, and the other renderings
    into the current directory."""
    paths = shard_files(tmp_path / "in")
    monkeypatch.chdir(tmp_path)
    assert main(["merge", *map(str, paths), "-o", given]) == 1
    assert sorted(p.name for p in (tmp_path / "merged").iterdir()) == [
        ".assay.lock",
        "junit.xml",
        "report.html",
        "report.json",
        "summary.md",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".assay-history", "in", "merged"]


def test_cli_costs_that_add_up_past_any_number_are_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = [
        make_report([make_case("calc/a", cost=1e308)], shard="1/2"),
        make_report([make_case("calc/b", cost=1e308, line=2)], shard="2/2"),
    ]
    paths = [write(tmp_path / f"s{n}" / "report.json", r) for n, r in enumerate(shards)]
    assert main(["merge", *map(str, paths), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "cost_usd add up to inf" in err and "Traceback" not in err


def test_shards_cut_from_different_selections_are_refused(tmp_path: Path) -> None:
    """Shard 1/2 of one selection and 2/2 of another merged into a passing report that
    silently lacked the cases neither ran."""

    def shard(case: CaseResult, index: int, split: str) -> Report:
        report = make_report([case], shard=f"{index}/2")
        return report.model_copy(update={"run": report.run.model_copy(update={"split": split})})

    same = [shard(make_case("calc/a"), 1, "s1"), shard(make_case("calc/b", line=2), 2, "s1")]
    assert len(merge_reports(same).cases) == 2
    mixed = [shard(make_case("calc/a"), 1, "s1"), shard(make_case("calc/b", line=2), 2, "s2")]
    with pytest.raises(ConfigError, match="cut from different selections"):
        merge_reports(mixed)


@pytest.mark.slow
def test_a_sharded_run_records_its_split(tmp_path: Path) -> None:
    from tests.test_cli_run import project, run_args

    root = project(tmp_path, {"a": {}, "b": {}, "c": {}})
    splits = []
    for index, pattern in ((1, "calc/*"), (2, "calc/*"), (2, "calc/[ab]")):
        out = f"shard-{index}-{len(splits)}"
        main(run_args(root, "--shard", f"{index}/2", "-t", pattern, report=out))
        splits.append(read_report(root / out / "report.json").run.split)
    assert splits[0] == splits[1] != splits[2] and splits[0] is not None


def test_a_report_missing_cases_its_summary_counts_is_refused() -> None:
    whole = make_report([make_case("calc/a"), make_case("calc/c", "fail", line=3)], shard="1/2")
    cut = whole.model_copy(update={"cases": whole.cases[:1]})  # calc/c (a failure) lost
    other = make_report([make_case("calc/b", line=2)], shard="2/2")
    with pytest.raises(ConfigError, match="holds 1 case.s. but its summary counts 2"):
        merge_reports([cut, other], labels=["one.json", "two.json"])


# -- cases no run could have written ----------------------------------------------------------

# Each edit of a failing case's shard (calc/b: status fail, score 0, its attempt and checks
# failed) that would let the merged gate count it as something else, and what merge says.
_EDITS: list[tuple[str, dict[str, Any], str]] = [
    (
        "pass with score 0 (the summary recounted)",
        {"status": "pass", "recount": True},
        "cases[0] calc/b: it is pass with score 0, where a task pass scores 1; it is pass but "
        "its attempts make it fail (fail 0); it is pass but check test (fail), changed_files "
        "(fail) did not pass: edited or damaged after the run",
    ),
    (
        "pass with score 1, its attempts left",
        {"status": "pass", "score": 1.0, "recount": True},
        "cases[0] calc/b: it is pass but its attempts make it fail (fail 0)",
    ),
    (
        "pass everywhere, its checks left failed",
        {"status": "pass", "score": 1.0, "attempts": True, "recount": True},
        "cases[0] calc/b: it is pass but check test (fail), changed_files (fail) did not pass",
    ),
    (
        "fail without its score, which drops it out of the mean",
        {"score": None},
        "cases[0] calc/b: it is fail without a score",
    ),
    (
        "skipped, as if no key had been set",
        {"status": "skipped", "score": None, "reason": "no credentials", "recount": True},
        "cases[0] calc/b: it is skipped (no credentials) but its attempts were scored",
    ),
    (
        "pass, the summary's counts left as the run wrote them",
        {"status": "pass"},
        "holds 1 pass case(s) but its summary counts 0 (passed): it was edited",
    ),
]


def _edited(report: Path, edit: dict[str, Any]) -> None:
    data = json.loads(report.read_text())
    case = data["cases"][0]
    for key in ("status", "score", "reason"):
        if key in edit:
            case[key] = edit[key]
    if edit.get("attempts"):
        for attempt in case["attempts"]:
            attempt["status"], attempt["score"] = case["status"], case["score"]
    if edit.get("recount"):
        summary = data["summary"]
        summary["failed"] -= 1
        summary[{"pass": "passed", "skipped": "skipped"}[case["status"]]] += 1
    report.write_text(json.dumps(data, indent=2))


@pytest.mark.slow
def test_cli_refuses_a_case_whose_status_contradicts_its_score_attempts_or_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_runner_e2e import agent_argv, suite_json, write_project

    root = write_project(tmp_path / "proj", {"a": {}, "b": {"solve": False}})
    suite_json(root, ["a", "b"])
    for index in (1, 2):  # calc/a passes in shard 1/2, calc/b fails in shard 2/2
        argv = [
            "run", str(root / "calc.json"), "--agent-command", " ".join(agent_argv(root)),
            "--shard", f"{index}/2", "--report-dir", str(root / f"shard{index}"),
        ]  # fmt: skip
        main(argv)
    shard2 = root / "shard2" / "report.json"
    as_run = shard2.read_text()
    out = root / "merged" / "report.json"
    assert main(["merge", str(root / "shard1"), str(shard2), "-o", str(out)]) == 1
    capsys.readouterr()
    for label, edit, message in _EDITS:
        shard2.write_text(as_run)
        _edited(shard2, edit)
        out.unlink(missing_ok=True)
        code = main(["merge", str(root / "shard1"), str(shard2), "-o", str(out)])
        err = capsys.readouterr().err
        assert (code, message in err) == (2, True), f"{label}: {err}"
        assert f"{shard2}" in err and "Traceback" not in err, label
        assert not out.exists(), label


def test_cli_merges_what_assay_itself_writes_though_it_looks_odd(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.core.checks import Check
    from assay.report.gate.stats import INTERRUPTED

    # A rubric's score is the judge's (score 1 of 5 is 0) whatever met_rubric says.
    rubric = make_case("style/a", "pass", score=0.0, kind="rubric")
    # An optional should_find that was not met fails nothing.
    optional = Check.model_validate(
        {"id": "should_find[0]", "kind": "should_find", "status": "fail", "required": False}
    )
    review = make_case("sec/a", kind="review", checks=[optional])
    # A case the run stopped before is skipped whatever had run (runner/combine.py).
    stopped = make_case("calc/c", "skipped", reason=INTERRUPTED, line=3).model_copy(
        update={"attempts": [Attempt(status="pass", score=1.0)]}
    )
    paths = [
        write(tmp_path / "one" / "report.json", make_report([rubric, review])),
        write(tmp_path / "two" / "report.json", make_report([stopped])),
    ]
    out = tmp_path / "merged" / "report.json"
    assert main(["merge", *map(str, paths), "-o", str(out)]) == 1  # incomplete: interrupted
    err = capsys.readouterr().err
    assert "error" not in err
    assert sorted(c.id for c in read_report(out).cases) == ["calc/c", "sec/a", "style/a"]


def test_cli_threshold_of_negative_zero_is_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # From the command line, and from a report that holds one.
    paths = shard_files(tmp_path, threshold=-0.0)
    for extra in (["--threshold", "-0"], []):
        out = tmp_path / f"merged{len(extra)}" / "report.json"
        assert main(["merge", *map(str, paths), "-o", str(out), *extra]) == 0
        printed = capsys.readouterr().out
        assert "threshold 0.00" in printed and "-0.00" not in printed
        assert math.copysign(1.0, read_report(out).run.threshold) == 1.0
