"""Changed files whose names hold `:`, a newline or a CR (issue 34, point 5).

PVYai's path rule refuses a name holding `:`, so its `changedFiles` drop such a change and
it is never unexpected: an agent could hide any file behind a colon. assay reports it,
under the name PVYai's parser gives it (git's quoted form, read back unquoted, `\\` made
`/`), so it is an unexpected change. Newlines and CRs reach the list as PVYai reads them
(`"p/nq.txt"`). Real git, a real command agent, `assay run` and `assay score` alike.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli import main
from tests.test_pvyai_conformance import GIT_ENV
from tests.test_pvyai_task_parity import _run, _suite, _task

NAMES = ("x:y.txt", "sub:dir/conftest.py", "p\nq.txt", "r\rs.txt", "a b:c.txt")
REPORTED = ['"a b:c.txt"', '"p/nq.txt"', '"r/rs.txt"', "sub:dir/conftest.py", "x:y.txt"]
"""What each name is in the list: what PVYai's parser makes of `git status --porcelain`."""
AGENT = (
    "pathlib.Path('a.txt').write_text('changed\\n')\n"
    f"for name in {NAMES!r}:\n"
    "    pathlib.Path(name).parent.mkdir(exist_ok=True)\n"
    "    pathlib.Path(name).write_text('unexpected\\n')\n"
)


def test_assay_run_reports_every_such_name_as_an_unexpected_change(tmp_path: Path) -> None:
    suite = _suite(tmp_path, [_task("names", AGENT)], {"fx": {"a.txt": "a\n"}})
    code, benchmark, report = _run(tmp_path, suite)
    (case,) = report["cases"]
    changed = next(check for check in case["checks"] if check["id"] == "changed_files")
    assert code == 1 and case["status"] == "fail" and changed["status"] == "fail"
    assert changed["unexpectedFiles"] == REPORTED
    assert changed["actualFiles"] == sorted([*REPORTED, "a.txt"])
    assert benchmark["tasks"][0]["report"]["changedFiles"] == sorted([*REPORTED, "a.txt"])


def test_assay_score_reports_them_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = _suite(tmp_path, [_task("names", "scored")], {"fx": {}})
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=workspace, env=GIT_ENV, check=True)
    subprocess.run([sys.executable, "-c", f"import pathlib\n{AGENT}"], cwd=workspace, check=True)
    argv = ["score", "--suite", str(suite), "--task", "names", "--workspace", str(workspace)]
    capsys.readouterr()
    assert main([*argv, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    changed = next(r for r in report["results"] if r["id"] == "changed_files")
    assert changed["unexpectedFiles"] == REPORTED
    assert report["changedFiles"] == sorted([*REPORTED, "a.txt"])
