"""Changed files whose names hold `:`, a newline or a CR (issue 34, point 5).

A newline or CR reaches the changed files as PVYai's parser reads `git status --porcelain`
(git's quoted form, its `\\` made `/`: `"p/nq.txt"`), so such a file is an unexpected
change. PVYai's path rule refuses a name holding `:`: its `changedFiles` drop such a
change (PVYai's verdict, kept: the conformance suite pins it), so an agent could hide any
file behind a colon. assay reports it as a hidden change: a warning naming it in every
output, and a failing check with `--hidden-changes fail`. Real git, a real command agent,
`assay run` and `assay score` alike.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from tests.upstream.test_pvyai_conformance import GIT_ENV
from tests.upstream.test_pvyai_task_parity import _run, _suite, _task

CONTROL = ("p\nq.txt", "r\rs.txt")
CONTROL_REPORTED = ['"p/nq.txt"', '"r/rs.txt"']
"""What PVYai's parser makes of these names in `git status --porcelain`."""
COLON = ("x:y.txt", "sub:dir/conftest.py", "a b:c.txt")
COLON_REPORTED = ['"a b:c.txt"', "sub:dir/conftest.py", "x:y.txt"]
"""How the warning names them: as PVYai's parser would, but for its `:` rule."""


def _agent(names: tuple[str, ...]) -> str:
    return (
        "pathlib.Path('a.txt').write_text('changed\\n')\n"
        f"for name in {names!r}:\n"
        "    pathlib.Path(name).parent.mkdir(exist_ok=True)\n"
        "    pathlib.Path(name).write_text('unexpected\\n')\n"
    )


def _changed_files(report: dict[str, Any]) -> dict[str, Any]:
    (case,) = report["cases"]
    return dict(next(check for check in case["checks"] if check["id"] == "changed_files"))


def test_a_newline_or_cr_in_a_name_is_an_unexpected_change_under_pvyais_name(
    tmp_path: Path,
) -> None:
    suite = _suite(tmp_path, [_task("names", _agent(CONTROL))], {"fx": {"a.txt": "a\n"}})
    code, benchmark, report = _run(tmp_path, suite)
    changed = _changed_files(report)
    assert code == 1 and report["cases"][0]["status"] == "fail"
    assert changed["status"] == "fail" and changed["unexpectedFiles"] == CONTROL_REPORTED
    assert benchmark["tasks"][0]["report"]["changedFiles"] == [*CONTROL_REPORTED, "a.txt"]


def test_a_colon_in_a_name_keeps_pvyais_verdict_and_is_a_hidden_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path, [_task("names", _agent(COLON))], {"fx": {"a.txt": "a\n"}})
    code, benchmark, report = _run(tmp_path, suite)
    out = capsys.readouterr().out
    changed = _changed_files(report)
    assert code == 0 and changed["status"] == "pass"  # PVYai's verdict
    assert benchmark["tasks"][0]["report"]["changedFiles"] == ["a.txt"]
    assert changed["hiddenFiles"] == COLON_REPORTED
    (warning,) = report["run"]["warnings"]
    assert all(name in warning for name in COLON_REPORTED)
    assert all(name in out for name in COLON_REPORTED)
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "sub:dir/conftest.py" in summary

    code, _, report = _run(tmp_path, suite, "--hidden-changes", "fail")
    (case,) = report["cases"]
    (failed,) = [check for check in case["checks"] if check["status"] != "pass"]
    assert code == 1 and case["status"] == "fail" and failed["id"] == "hidden_changes"
    assert failed["hiddenFiles"] == COLON_REPORTED
    assert all(name in failed["message"] for name in COLON_REPORTED)


def _scored(root: Path, names: tuple[str, ...]) -> tuple[list[str], Path]:
    suite = _suite(root, [_task("names", "scored")], {"fx": {}})
    workspace = root / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=workspace, env=GIT_ENV, check=True)
    agent = f"import pathlib\n{_agent(names)}"
    subprocess.run([sys.executable, "-c", agent], cwd=workspace, check=True)
    argv = ["score", "--suite", str(suite), "--task", "names", "--workspace", str(workspace)]
    return argv, workspace


def test_assay_score_reads_such_names_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, _ = _scored(tmp_path / "control", CONTROL)
    capsys.readouterr()
    assert main([*argv, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    changed = next(r for r in report["results"] if r["id"] == "changed_files")
    assert changed["unexpectedFiles"] == CONTROL_REPORTED

    argv, _ = _scored(tmp_path / "colon", COLON)
    capsys.readouterr()
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert all(name in err for name in COLON_REPORTED)
    assert main([*argv, "--hidden-changes", "fail"]) == 1
    assert "hidden_changes" in capsys.readouterr().out
