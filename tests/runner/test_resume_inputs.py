"""`--resume` reuses a result only while every file the case is made of is unchanged.

The fingerprint held the skill's path and the fixtures' paths, not what they hold: a
skill edited between a run and its resume was never tried (issue 34).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import main
from tests.fakes.anthropic_api import FakeAnthropic
from tests.runner.test_no_silent_wrong_answers import warden_project
from tests.runner.test_resume import project, run_args

KEY = "sk-ant-resume-inputs-0123456789"
CHANGED = "the case or the settings that shape it changed since it ran: it runs again"
# Writes no findings and counts its runs beside the project (no sandbox: --isolation none).
COUNTING_AGENT = """\
import json, os, pathlib
counter = pathlib.Path(__file__).with_name("runs")
counter.write_text(str(int(counter.read_text()) + 1) if counter.exists() else "1")
with open(os.environ["ASSAY_FINDINGS_FILE"], "w") as out:
    json.dump({"findings": []}, out)
"""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=KEY) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def review_args(root: Path, *extra: str) -> list[str]:
    return [
        "run", str(root), "--agent-command", f"{sys.executable} {root / 'agent.py'}",
        "--judge-model", "anthropic/claude-sonnet-4-6", "--isolation", "none",
        "--report-dir", str(root / "report"), *extra,
    ]  # fmt: skip


def runs(root: Path) -> int:
    return int((root / "runs").read_text())


@pytest.mark.parametrize("edited", ["skills/security.md", "fixtures/app.py"])
def test_an_edited_skill_or_fixture_file_runs_the_case_again_on_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeAnthropic, edited: str
) -> None:
    root = warden_project(tmp_path / "proj", runtime=None)
    (root / "agent.py").write_text(COUNTING_AGENT)
    main(review_args(root))
    assert runs(root) == 1
    resume = review_args(root, "--resume", str(root / "report"))
    capsys.readouterr()
    main(resume)
    assert runs(root) == 1 and CHANGED not in capsys.readouterr().err  # unchanged: reused

    with (root / edited).open("a") as file:
        file.write("# edited after the run\n")
    main(resume)
    assert runs(root) == 2
    err = capsys.readouterr().err
    assert "security/case-0 [" in err and CHANGED in err
    main(resume)
    assert runs(root) == 2  # the new result is reused while nothing changes again


def test_an_edited_skill_override_runs_the_case_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeAnthropic
) -> None:
    root = warden_project(tmp_path / "proj", runtime=None)
    (root / "agent.py").write_text(COUNTING_AGENT)
    skill = root / "other-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("# Other\nLook for races.\n")
    main(review_args(root, "--skill", str(skill)))
    (skill / "SKILL.md").write_text("# Other\nLook for deadlocks.\n")
    capsys.readouterr()
    main(review_args(root, "--skill", str(skill), "--resume", str(root / "report")))
    assert runs(root) == 2
    err = capsys.readouterr().err
    assert "security/case-0 [" in err and CHANGED in err


def test_a_file_edited_inside_a_task_workspace_runs_the_task_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, ["only"])
    assert main(run_args(root)) == 1
    capsys.readouterr()
    assert main(run_args(root, "--resume", str(root / "report"))) == 1
    assert CHANGED not in capsys.readouterr().err
    (root / "fixtures" / "calc" / "calc.py").write_text("def add(a, b):\n    return a * b\n")
    assert main(run_args(root, "--resume", str(root / "report"))) == 1
    assert f"calc/only: {CHANGED}" in capsys.readouterr().err
    # a new file in the workspace is an edit too
    (root / "fixtures" / "calc" / "notes.txt").write_text("new\n")
    assert main(run_args(root, "--resume", str(root / "report"))) == 1
    assert f"calc/only: {CHANGED}" in capsys.readouterr().err
