"""`assay run` on a PVYai task suite: exit codes, report files, signals, resume, shards."""

from __future__ import annotations

import json
import math
import os
import shlex
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.report.history import read_history
from assay.report.model import CaseResult, Report
from assay.runner.results import parse_result_line
from tests.test_runner_e2e import agent_argv, set_plans, suite_json, write_project

ASSAY = [sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())"]


def project(tmp_path: Path, plans: dict[str, dict[str, Any]]) -> Path:
    root = write_project(tmp_path / "proj", plans)
    suite_json(root, list(plans))
    return root


def run_args(root: Path, *extra: str, report: str = "report") -> list[str]:
    return [
        "run",
        str(root / "calc.json"),
        "--agent-command",
        " ".join(agent_argv(root)),
        "--report-dir",
        str(root / report),
        "--work-root",
        str(root / "work"),
        *extra,
    ]


def load_report(path: Path) -> Report:
    return Report.model_validate_json(path.read_text())


def result_lines(path: Path) -> list[CaseResult]:
    return [parse_result_line(line) for line in path.read_text().splitlines()]


def outcome(report: Report) -> list[tuple[str, str, float | None]]:
    return sorted((c.id, c.status, c.score) for c in report.cases)


def started_pids(root: Path) -> list[int]:
    folder = root / "started"
    # The pid is in the marker's name: its content may not be written yet.
    return [int(p.name.rsplit("-", 1)[1]) for p in folder.iterdir()] if folder.exists() else []


def wait_for(predicate: Any, *, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def kill_leftovers(root: Path) -> None:
    for pid in started_pids(root):
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)


# -- end to end ----------------------------------------------------------------------------


@pytest.mark.slow
def test_pvyai_suite_end_to_end_gate_fails_and_reports_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import jsonschema

    root = project(tmp_path, {"solves": {}, "gives-up": {"solve": False}})
    code = main(run_args(root, "--pvyai-report"))
    out = capsys.readouterr().out
    assert code == 1
    assert "PASS  calc/solves" in out and "FAIL  calc/gives-up" in out
    assert "gate: FAIL  score 0.50 < threshold 0.75" in out
    assert f"report: {root / 'report'}" in out

    report_dir = root / "report"
    document = json.loads((report_dir / "report.json").read_text())
    jsonschema.validate(document, Report.model_json_schema())
    report = Report.model_validate(document)
    assert outcome(report) == [("calc/gives-up", "fail", 0.0), ("calc/solves", "pass", 1.0)]
    gave_up = next(c for c in report.cases if c.id == "calc/gives-up")
    assert {c.id: c.status for c in gave_up.checks}["test"] == "fail"
    assert report.cases[0].source.path.endswith("calc.json") and report.cases[0].source.line > 1

    assert len(result_lines(report_dir / "results.jsonl")) == 2
    assert "calc/gives-up" in (report_dir / "summary.md").read_text()
    testcases = ET.parse(report_dir / "junit.xml").getroot().iter("testcase")
    by_name = {t.get("name"): t for t in testcases}
    assert set(by_name) == {"calc/solves", "calc/gives-up"}
    assert by_name["calc/gives-up"].find("failure") is not None
    assert all(t.get("file", "").endswith("calc.json") and t.get("line") for t in by_name.values())
    pvyai = json.loads((report_dir / "agent-eval-report.json").read_text())
    assert pvyai["contract"] == "pvyai.agenteval.report.v1"
    assert (pvyai["suiteId"], pvyai["ok"]) == ("calc", False)
    assert pvyai["summary"]["passedTasks"] == 1 and pvyai["summary"]["failedTasks"] == 1
    assert {t["taskId"]: t["agent"]["exitCode"] for t in pvyai["tasks"]} == {
        "gives-up": 0,
        "solves": 0,
    }


@pytest.mark.slow
def test_gate_passes_with_exit_0_and_json_prints_only_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"a": {}, "b": {}})
    assert main(run_args(root, "--json")) == 0
    captured = capsys.readouterr()
    report = Report.model_validate_json(captured.out)
    assert report.summary.gate == "pass" and report.summary.total == 2
    assert "PASS  calc/a" in captured.err and "gate: PASS" in captured.err


@pytest.mark.slow
def test_selection_and_shards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = ["alpha", "beta", "gamma", "delta", "epsilon"]
    root = project(tmp_path, {name: {} for name in names})
    assert main(run_args(root, "-t", "*a", "-t", "beta", report="selected")) == 0
    selected = load_report(root / "selected/report.json")
    assert sorted(c.id for c in selected.cases) == [
        "calc/alpha",
        "calc/beta",
        "calc/delta",
        "calc/gamma",
    ]

    seen: list[str] = []
    for index in (1, 2):
        assert main(run_args(root, "--shard", f"{index}/2", report=f"shard{index}")) == 0
        shard = load_report(root / f"shard{index}/report.json")
        assert shard.run.shard == f"{index}/2"
        seen += [c.id for c in shard.cases]
    assert sorted(seen) == sorted(f"calc/{n}" for n in names)
    assert len(seen) == len(set(seen))
    # A shard is a part of a run: the history gets the merged report, not the parts.
    history = root / ".assay-history"
    assert [e.run_id for e in read_history(history)] == [selected.run.id]
    shards = [str(root / f"shard{index}") for index in (1, 2)]
    assert main(["merge", *shards, "-o", str(root / "merged" / "report.json")]) == 0
    merged = load_report(root / "merged/report.json")
    assert [e.run_id for e in read_history(history)] == [selected.run.id, merged.run.id]
    assert (merged.summary.total, read_history(history)[-1].total) == (5, 5)
    capsys.readouterr()


@pytest.mark.slow
def test_matrix_and_repeats_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"t": {"solve_models": ["good"]}})
    code = main(run_args(root, "--model", "good", "--model", "bad,good", "--repeat", "2"))
    assert code == 1
    report = load_report(root / "report/report.json")
    assert sorted((c.model, c.status, len(c.attempts)) for c in report.cases) == [
        ("bad", "fail", 2),
        ("good", "pass", 2),
    ]
    assert "PASS  calc/t [good]" in capsys.readouterr().out


@pytest.mark.slow
def test_config_values_apply_unless_given_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, {"solves": {}, "gives-up": {"solve": False}})
    (root / "pyproject.toml").write_text(
        '[tool.assay]\nthreshold = 0.5\nreport_dir = "configured-report"\n'
    )
    assert main(run_args(root)[:-4]) == 0  # no --report-dir, no --work-root
    assert load_report(root / "configured-report/report.json").run.threshold == 0.5
    assert main(run_args(root, "--threshold", "0.9")) == 1
    monkeypatch.setenv("ASSAY_THRESHOLD", "0.25")  # the environment beats the config file
    assert main(run_args(root)) == 0
    assert load_report(root / "report/report.json").run.threshold == 0.25
    capsys.readouterr()


def test_a_model_without_a_name_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"t": {}})
    assert main(run_args(root, "--model", "openai/")) == 2
    assert "--model 'openai/': no model name after the provider" in capsys.readouterr().err


def test_sandboxes_cannot_be_made_inside_a_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The sandbox copies the fixture: inside it, the copy would contain itself.
    root = project(tmp_path, {"t": {}})
    inside = root / "fixtures" / "calc" / "work"
    assert main([*run_args(root)[:-2], "--work-root", str(inside)]) == 2
    assert "is inside the fixture" in capsys.readouterr().err
    assert not inside.exists()


def test_a_bad_agent_command_stops_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"t": {}})
    assert main([*run_args(root)[:-2], "--agent-command", "/bin/echo 'unclosed"]) == 2
    assert "No closing quotation" in capsys.readouterr().err
    assert not (root / "report").exists()


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("ASSAY_TIMEOUT", "abc", "ASSAY_TIMEOUT='abc': not a number"),
        ("ASSAY_CONCURRENCY", "1.5", "ASSAY_CONCURRENCY='1.5': not a whole number"),
        (
            "ASSAY_RUNTIME",
            "foo",
            "ASSAY_RUNTIME='foo': unknown runtime 'foo'; known runtimes: aider, builtin, claude, "
            "claude-code, codex, command",
        ),
        ("ASSAY_KEEP_WORKSPACES", "maybe", "ASSAY_KEEP_WORKSPACES='maybe': expected 1/0"),
    ],
)
def test_a_bad_environment_default_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    message: str,
) -> None:
    monkeypatch.setenv(variable, value)
    assert main(["--version"]) == 2
    assert capsys.readouterr().err.startswith(f"assay: error: {message}")


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        ("run", "--threshold", "1_0"),  # float() reads it as 10
        ("run", "--concurrency", "1_6"),
        ("run", "--repeat", "1_0"),
        ("run", "--timeout", "6_0"),
        ("run", "--max-cost", "0_5"),
        ("merge", "--max-errors", "1_0"),
        ("cache", "--older-than", "3_0"),
    ],
)
def test_digit_separators_in_a_number_are_a_usage_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    option: str,
    value: str,
) -> None:
    root = project(tmp_path, {"t": {}})
    given = {
        "run": run_args(root),
        "merge": ["merge", str(root), "-o", str(tmp_path / "merged")],
        "cache": ["cache", "stats", "--cache", str(tmp_path / "cache")],
    }[command]
    with pytest.raises(SystemExit) as typed:
        main([*given, option, value])
    assert typed.value.code == 2
    assert f"argument {option}: {value!r} is " in capsys.readouterr().err
    # The same value in the option's variable, read by the same rule.
    variable = "ASSAY_" + option.lstrip("-").upper().replace("-", "_")
    monkeypatch.setenv(variable, value)
    assert main(given) == 2
    err = capsys.readouterr().err
    assert f"assay: error: {variable}={value!r}: not a " in err
    assert "digit separators (_) are not accepted" in err
    assert started_pids(root) == [] and not (root / "report").exists()


@pytest.mark.slow
def test_a_threshold_of_minus_zero_is_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"t": {}})
    assert main(run_args(root, "--threshold", "-0")) == 0
    # Only the gate line: the report path printed below it holds pytest's "pytest-0".
    gate = next(line for line in capsys.readouterr().out.splitlines() if "gate:" in line)
    assert "gate: PASS  score 1.00 >= threshold 0.00" in gate and "-0" not in gate
    assert math.copysign(1.0, load_report(root / "report/report.json").run.threshold) == 1.0
    monkeypatch.setenv("ASSAY_THRESHOLD", "-0.0")
    assert main(run_args(root)) == 0
    assert "threshold 0.00" in capsys.readouterr().out


@pytest.mark.parametrize(
    "option",
    ["--report-dir", "--root", "--history", "--work-root", "--cache", "--resume", "--skill"],
)
def test_an_empty_path_given_is_a_usage_error_not_the_default(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: str,
) -> None:
    root = project(tmp_path, {"t": {}})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as typed:
        main([*run_args(root), option, ""])
    assert typed.value.code == 2
    assert f"argument {option}: empty path" in capsys.readouterr().err
    assert started_pids(root) == []


def test_an_empty_path_argument_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["list", ""], ["merge", "", "-o", str(tmp_path / "m")], ["view", ""]):
        with pytest.raises(SystemExit) as typed:
            main(argv)
        assert typed.value.code == 2, argv
        assert "empty path" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_without_a_key_review_cases_are_skipped_and_tasks_still_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"t": {}})
    (root / "skills").mkdir()
    (root / "skills" / "security.md").write_text("# Security review\nFind injections.\n")
    (root / "fixtures" / "sqli").mkdir()
    (root / "fixtures" / "sqli" / "app.py").write_text(
        "def find(db, name):\n    return db.execute(f\"SELECT * FROM t WHERE n = '{name}'\")\n"
    )
    (root / "security.yaml").write_text(
        "skill: skills/security.md\n"
        "evals:\n"
        "  - name: sql-injection\n"
        "    given: query built from user input\n"
        "    files:\n"
        "      - fixtures/sqli/app.py\n"
        "    should_find:\n"
        "      - finding: SQL injection through name\n"
        "        severity: high\n"
    )
    argv = json.dumps(list(agent_argv(root)))
    (root / "pyproject.toml").write_text(f"[tool.assay]\nagent_command = {argv}\n")
    code = main(["run", str(root), "--report-dir", str(root / "report")])
    out = capsys.readouterr().out
    assert code == 0, out
    report = load_report(root / "report/report.json")
    by_id = {c.id: c for c in report.cases}
    review = by_id["security/sql-injection"]
    assert (review.status, review.runtime) == ("skipped", "builtin")
    # A Warden YAML suite that names no model runs Warden's default (EvalFileSchema).
    assert review.reason == (
        "no credentials for openrouter/anthropic/claude-sonnet-4.6: set OPENROUTER_API_KEY"
    )
    assert by_id["calc/t"].status == "pass"
    assert "SKIP  security/sql-injection" in out


def test_dry_run_builds_the_sandboxes_and_runs_no_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"a": {}, "b": {}})
    assert main(run_args(root, "--dry-run", "-t", "calc/a")) == 0
    out = capsys.readouterr().out
    assert "calc/a" in out and "calc/b" not in out
    assert not (root / "started").exists() and not (root / "report").exists()


# -- exit code 2 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--shard", "3/2"], "--shard 3/2: need 1 <= I <= N"),
        (["--shard", "x"], "--shard must look like I/N"),
        (["--concurrency", "0"], "--concurrency must be at least 1"),
        (["--threshold", "2"], "--threshold must be between 0 and 1"),
        (["--offline"], "--offline replays recorded model calls: it needs --cache DIR"),
        (["-t", "nothing-like-this"], "no cases match -t 'nothing-like-this'"),
        (["--agent-command", "'unbalanced"], "--agent-command"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    root = project(tmp_path, {"t": {}})
    assert main(run_args(root, *extra)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (root / "started").exists()


def test_resume_needs_a_results_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path, {"t": {}})
    assert main(run_args(root, "--resume", str(root / "nowhere"), report="nowhere")) == 2
    assert "nothing to resume" in capsys.readouterr().err
    assert not (root / "nowhere").exists()


def test_an_unwritable_report_dir_exits_2_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"t": {}})
    (root / "blocker").write_text("a file, not a directory")
    args = run_args(root)
    args[args.index("--report-dir") + 1] = str(root / "blocker" / "report")
    assert main(args) == 2
    assert "cannot write the report directory" in capsys.readouterr().err
    assert not (root / "started").exists()


# -- signals, kills, resume --------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.slow
def test_a_signal_stops_the_run_writes_a_partial_report_and_exits_130(
    tmp_path: Path, signum: signal.Signals
) -> None:
    root = project(tmp_path, {"done": {}, "slow1": {"sleep": 60}, "slow2": {"sleep": 60}})
    process = subprocess.Popen(
        [*ASSAY, *run_args(root, "--concurrency", "3")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: len(started_pids(root)) == 3)
        wait_for(
            lambda: (
                (root / "report/results.jsonl").exists()
                and len(result_lines(root / "report/results.jsonl")) == 1
            )
        )
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
        kill_leftovers(root)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    # The exact command that continues the run: the same arguments, --resume instead.
    given = run_args(root, "--concurrency", "3")
    at = given.index("--report-dir")
    again = shlex.join(["assay", *given[:at], *given[at + 2 :], "--resume", str(root / "report")])
    assert f"continue with: {again}\n" in out
    report = load_report(root / "report/report.json")
    assert report.run.interrupted is True
    assert outcome(report) == [
        ("calc/done", "pass", 1.0),
        ("calc/slow1", "skipped", None),
        ("calc/slow2", "skipped", None),
    ]
    assert all(c.reason == "interrupted" for c in report.cases if c.status == "skipped")
    assert "incomplete: 2 of 3 case(s) not run (interrupted: 2)" in report.summary.gate_reason
    assert report.summary.gate == "fail"
    summary_md = (root / "report/summary.md").read_text()
    assert summary_md.splitlines()[0].endswith(
        "(incomplete: 2 of 3 case(s) not run (interrupted: 2))"
    )
    # The agents' process groups were killed, and their sandboxes removed.
    wait_for(lambda: all(gone(pid) for pid in started_pids(root)), timeout_s=10)
    assert not any((root / "work").iterdir())


@pytest.mark.slow
def test_results_survive_sigkill_and_resume_matches_an_uninterrupted_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plans: dict[str, dict[str, Any]] = {
        "first": {},
        "second": {"sleep": 60},
        "third": {"solve": False},
    }
    root = project(tmp_path, plans)
    results = root / "report/results.jsonl"
    process = subprocess.Popen(
        [*ASSAY, *run_args(root, "--concurrency", "1")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: results.exists() and results.read_text().count("\n") >= 1)
        wait_for(lambda: len(started_pids(root)) == 2)  # `second` is running
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        process.kill()
        kill_leftovers(root)
    survived = result_lines(results)
    assert [r.id for r in survived] == ["calc/first"]

    plans["second"] = {}
    set_plans(root, plans)
    # Another --report-dir beside it would be ignored: refused, nothing written there.
    assert main(run_args(root, "--resume", str(root / "report"), report="ignored")) == 2
    assert not (root / "ignored").exists()
    assert main(run_args(root, "--resume", str(root / "report"))) == 1
    resumed = load_report(root / "report/report.json")
    lines = [r.id for r in result_lines(results)]
    assert lines[0] == "calc/first"  # kept, then the rest appended
    assert sorted(lines) == ["calc/first", "calc/second", "calc/third"]
    first_runs = [p for p in (root / "started").iterdir() if p.name.startswith("first-")]
    assert len(first_runs) == 1  # finished work is not redone

    assert main(run_args(root, report="fresh")) == 1
    fresh = load_report(root / "fresh/report.json")
    assert (
        outcome(resumed)
        == outcome(fresh)
        == [
            ("calc/first", "pass", 1.0),
            ("calc/second", "pass", 1.0),
            ("calc/third", "fail", 0.0),
        ]
    )
    assert resumed.summary.score == fresh.summary.score
    capsys.readouterr()
