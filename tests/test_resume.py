"""`assay run --resume DIR`: only results.jsonl lines assay itself could have written count.

The agent under test runs as the same user as assay and can reach the report directory,
so a line it appends must not turn a failed case into a pass on resume.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from assay.cli import main
from tests.test_runner_e2e import suite_json, write_project

# Gives up on every task; the one named `forger` first appends a passing copy of the
# first finished result to the results stream, as a hostile agent could.
FORGER = r"""
import json, sys
from pathlib import Path

task, results = sys.argv[1], Path(sys.argv[2])
if task == "forger":
    finished = json.loads(results.read_text().splitlines()[0])
    finished.update(status="pass", score=1.0, reason="")
    with open(results, "a") as stream:
        stream.write(json.dumps(finished) + "\n")
"""


def project(tmp_path: Path, names: list[str]) -> Path:
    root = write_project(tmp_path / "proj", {})
    suite_json(root, names)
    (root / "forger.py").write_text(FORGER)
    return root


def run_args(root: Path, *extra: str) -> list[str]:
    results = root / "report" / "results.jsonl"
    return [
        "run", str(root / "calc.json"),
        "--agent-command", f"{sys.executable} {root / 'forger.py'} {{task_id}} {results}",
        "--report-dir", str(root / "report"), "--work-root", str(root / "work"),
        "--concurrency", "1", *extra,
    ]  # fmt: skip


@pytest.mark.slow
def test_a_line_appended_by_the_agent_is_refused_on_resume_and_its_case_runs_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without a sandbox the agent reaches the report dir; the signature still catches it.
    root = project(tmp_path, ["honest", "forger"])
    assert main(run_args(root, "--isolation", "none")) == 1
    assert "score 0.00 < threshold" in capsys.readouterr().out
    results = root / "report" / "results.jsonl"
    assert len(results.read_text().splitlines()) == 3  # honest, the forgery, forger

    assert main(run_args(root, "--isolation", "none", "--resume", str(root / "report"))) == 1
    err = capsys.readouterr().err
    assert f"{results}:2: calc/honest: the line's signature does not verify" in err
    assert "Traceback" not in err
    report = json.loads((root / "report" / "report.json").read_text())
    assert {c["id"]: c["status"] for c in report["cases"]} == {
        "calc/honest": "fail",
        "calc/forger": "fail",
    }


@pytest.mark.slow
def test_an_unsigned_line_is_refused_and_runs_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, ["only"])
    assert main(run_args(root)) == 1
    results = root / "report" / "results.jsonl"
    line = json.loads(results.read_text())
    del line["signature"]
    line.update(status="pass", score=1.0)
    results.write_text(json.dumps(line) + "\n")
    capsys.readouterr()
    assert main(run_args(root, "--resume", str(root / "report"))) == 1
    assert "calc/only: the line's signature does not verify" in capsys.readouterr().err


@pytest.mark.slow
def test_a_report_dir_without_its_key_runs_every_case_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, ["only"])
    assert main(run_args(root)) == 1
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "elsewhere"))
    capsys.readouterr()
    assert main(run_args(root, "--resume", str(root / "report"))) == 1
    assert "no signing key for this report directory" in capsys.readouterr().err


def test_the_key_file_is_private_and_outside_the_report_dir(tmp_path: Path) -> None:
    from assay.runner.signing import key_file, load_key, new_key

    report = tmp_path / "report"
    key = new_key(report)
    path = key_file(report)
    assert path.stat().st_mode & 0o777 == 0o600
    assert report not in path.parents
    assert load_key(report) == key
    path.chmod(0o644)  # readable by others: not trusted
    assert load_key(report) is None


@pytest.mark.slow
def test_a_changed_case_or_setting_runs_again_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, ["only"])
    assert main(run_args(root)) == 1
    capsys.readouterr()
    assert main(run_args(root, "--resume", str(root / "report"))) == 1
    assert "runs again" not in capsys.readouterr().err  # nothing changed: reused

    assert main(run_args(root, "--resume", str(root / "report"), "--repeat", "2")) == 1
    assert "calc/only: the case or the settings that shape it changed" in capsys.readouterr().err
    suite = root / "calc.json"
    suite.write_text(suite.read_text().replace("so that it adds", "so that it sums"))
    assert main(run_args(root, "--resume", str(root / "report"), "--repeat", "2")) == 1
    assert "calc/only: the case or the settings that shape it changed" in capsys.readouterr().err


@pytest.mark.slow
def test_resuming_another_suites_directory_warns_and_keeps_its_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, ["only"])
    assert main(run_args(root)) == 1
    results = root / "report" / "results.jsonl"
    before = results.read_text()
    suite_json(root, ["other"], suite_id="second")
    args = run_args(root, "--resume", str(root / "report"))
    args[1] = str(root / "second.json")
    capsys.readouterr()
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "holds 1 result(s) of suites not in this run (calc): kept in the file" in err
    assert results.read_text().startswith(before)
    report = json.loads((root / "report" / "report.json").read_text())
    assert [c["id"] for c in report["cases"]] == ["second/other"]


@pytest.mark.slow
def test_a_score_out_of_range_is_refused_on_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `"score": 50.0, "status": "fail"` used to resume into `score 50.00`, gate PASS.
    root = project(tmp_path, ["only"])
    assert main(run_args(root)) == 1
    results = root / "report" / "results.jsonl"
    line = json.loads(results.read_text())
    line.update(score=50.0, status="fail")
    results.write_text(json.dumps(line) + "\n")
    capsys.readouterr()

    assert main(run_args(root, "--resume", str(root / "report"))) == 2
    err = capsys.readouterr().err
    assert f"{results}:1: not a results.jsonl line: score: Input should be less" in err
    assert "Traceback" not in err
