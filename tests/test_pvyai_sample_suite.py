"""A suite of the shape of PVYai's `testdata/sample_suite.json`, run as a new user would.

`tests/data/pvyai_sample/` is our own suite of that shape (eight tasks on one fixture,
each with tags, difficulty, expected and forbidden files, context checks, most with
required trace events). Its agent does each task's work and prints the trace events the
task asks for; PVYai's verdicts for it are known: with a scratch file left behind every
task fails on `changed_files` (an unexpected file), and an agent that exits 1 blocks
every task. assay's `agent-eval-report.json` must say the same.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from assay.cli import main

SAMPLE = Path(__file__).parent / "data" / "pvyai_sample"

AGENT = """
import json, pathlib, sys
task_id, suite, mode = sys.argv[1], sys.argv[2], sys.argv[3]
(task,) = [t for t in json.loads(pathlib.Path(suite).read_text())["tasks"] if t["id"] == task_id]
for key in task.get("requiredTraceEvents", []):
    kind, _, name = key.partition(":")
    print(json.dumps({"type": kind, "name": name}))
for name in task["expectedChangedFiles"]:
    path = pathlib.Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((path.read_text() if path.exists() else "") + "# done by the agent\\n")
if mode == "scratch":
    pathlib.Path("scratch.txt").write_text("notes the agent forgot to remove\\n")
if mode == "exit-1":
    sys.exit(1)
"""


def _run(tmp_path: Path, mode: str) -> tuple[int, dict, dict]:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    suite = root / "suite.json"
    # The suite says `python`, as a user's would; here it is this interpreter, whatever PATH has.
    suite.write_text(suite.read_text().replace('"python"', json.dumps(sys.executable)))
    command = f"{sys.executable} {agent} {{task_id}} {suite} {mode}"
    report_dir = tmp_path / "report"
    argv = ["run", str(suite), "--agent-command", command, "--report-dir", str(report_dir)]
    code = main([*argv, "--work-root", str(tmp_path / "work"), "--pvyai-report"])
    benchmark = json.loads((report_dir / "agent-eval-report.json").read_text())
    report = json.loads((report_dir / "report.json").read_text())
    return code, benchmark, report


def test_the_sample_suite_validates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(SAMPLE / "suite.json")]) == 0
    assert "8 cases" in capsys.readouterr().out


@pytest.mark.slow
def test_an_agent_that_leaves_a_scratch_file_fails_every_task(tmp_path: Path) -> None:
    code, benchmark, report = _run(tmp_path, "scratch")
    assert code == 1
    assert (benchmark["suiteId"], benchmark["ok"]) == ("mini-local-agent-quality", False)
    assert benchmark["summary"] == {
        "totalTasks": 8,
        "passedTasks": 0,
        "failedTasks": 8,
        "blockedTasks": 0,
        "errorTasks": 0,
    }
    for task in benchmark["tasks"]:
        assert task["agent"]["exitCode"] == 0
        results = {r["id"]: r for r in task["report"]["results"]}
        assert task["report"]["status"] == "fail", task["taskId"]
        assert results["changed_files"]["unexpectedFiles"] == ["scratch.txt"]
        assert results["changed_files"].get("missingFiles") is None
        assert results["forbidden_changed_files"]["status"] == "pass"
        assert results["context_checks"]["status"] == "pass"
        assert results["parse-sources"]["status"] == "pass"
        if "trace_events" in results:
            assert results["trace_events"]["status"] == "pass"
    assert {case["status"] for case in report["cases"]} == {"fail"}


@pytest.mark.slow
def test_an_agent_that_exits_1_blocks_every_task(tmp_path: Path) -> None:
    code, benchmark, report = _run(tmp_path, "exit-1")
    assert code == 1
    assert benchmark["summary"] == {
        "totalTasks": 8,
        "passedTasks": 0,
        "failedTasks": 0,
        "blockedTasks": 8,
        "errorTasks": 0,
    }
    for task in benchmark["tasks"]:
        assert task["agent"]["exitCode"] == 1
        assert task["report"]["status"] == "blocked"
        assert {r["status"] for r in task["report"]["results"]} == {"blocked"}
    # In assay's own report a blocked task is an error: the gate never counts it a pass.
    assert {case["status"] for case in report["cases"]} == {"error"}
    assert report["summary"]["gate"] == "fail"


@pytest.mark.slow
def test_an_agent_that_does_only_the_work_passes_every_task(tmp_path: Path) -> None:
    code, benchmark, _ = _run(tmp_path, "clean")
    assert code == 0
    assert benchmark["ok"] is True and benchmark["summary"]["passedTasks"] == 8
