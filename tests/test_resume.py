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

pytest.importorskip("assay.suites.load")

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


def test_a_line_appended_by_the_agent_is_refused_on_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, ["honest", "forger"])
    assert main(run_args(root)) == 1  # both give up; the run's own report is not fooled
    assert "score 0.00 < threshold" in capsys.readouterr().out
    results = root / "report" / "results.jsonl"
    assert len(results.read_text().splitlines()) == 3  # honest, the forgery, forger

    assert main(run_args(root, "--resume", str(root / "report"))) == 2
    err = capsys.readouterr().err
    assert f"{results}:2: calc/honest already finished on line 1" in err
    assert "Traceback" not in err


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
