"""No silent wrong answers: every run either does what was asked or says why not (#15)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from assay.cli import main
from assay.report.model import Report

REVIEW_AGENT = """\
import json, os
with open(os.environ["ASSAY_FINDINGS_FILE"], "w") as out:
    json.dump({"findings": []}, out)
"""


def warden_project(root: Path, *, runtime: str | None = "pi", cases: int = 1) -> Path:
    """A Warden YAML suite (with `runtime: pi` by default) and a command agent beside it."""
    (root / "skills").mkdir(parents=True)
    (root / "skills" / "security.md").write_text("# Security review\nFind injections.\n")
    (root / "fixtures").mkdir()
    (root / "fixtures" / "app.py").write_text("def find(db, n):\n    return db.execute(n)\n")
    (root / "agent.py").write_text(REVIEW_AGENT)
    header = "skill: skills/security.md\n" + (f"runtime: {runtime}\n" if runtime else "")
    evals = "".join(
        f"  - name: case-{n}\n"
        "    given: query built from user input\n"
        "    files:\n"
        "      - fixtures/app.py\n"
        "    should_find:\n"
        "      - finding: SQL injection\n"
        for n in range(cases)
    )
    (root / "security.yaml").write_text(header + "evals:\n" + evals)
    return root


def agent_command(root: Path) -> str:
    return f"{sys.executable} {root / 'agent.py'}"


def read_report(path: Path) -> Report:
    return Report.model_validate_json(path.read_text())


# -- (1) an explicit CLI choice beats a suite's default ------------------------------------


@pytest.mark.parametrize("via_env", [False, True])
def test_agent_command_beats_a_suite_runtime_default(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    via_env: bool,
) -> None:
    root = warden_project(tmp_path / "proj")
    argv = ["run", str(root), "--report-dir", str(root / "report")]
    if via_env:
        monkeypatch.setenv("ASSAY_AGENT_COMMAND", agent_command(root))
    else:
        argv += ["--agent-command", agent_command(root)]
    main(argv)
    capsys.readouterr()
    (case,) = read_report(root / "report" / "report.json").cases
    assert case.runtime == "command"


def test_runtime_builtin_with_an_agent_command_no_case_runs_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = warden_project(tmp_path / "proj")
    argv = ["run", str(root), "--runtime", "builtin", "--agent-command", agent_command(root)]
    assert main([*argv, "--report-dir", str(root / "report")]) == 2
    err = capsys.readouterr().err
    assert "--agent-command is never used: --runtime builtin" in err
    assert not (root / "report").exists()


# -- (9) a missing agent binary is exit 2 before any sandbox is built ------------------------


def test_a_missing_agent_program_is_exit_2_before_any_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = warden_project(tmp_path / "proj", cases=5)
    work = tmp_path / "work"
    argv = ["run", str(root), "--agent-command", "no-such-agent-xyz {workspace}"]
    code = main([*argv, "--report-dir", str(root / "report"), "--work-root", str(work)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("no-such-agent-xyz") == 1 and "not found on PATH" in err
    assert "security/case-0" in err and "and 2 more" in err
    assert not work.exists() or not any(work.iterdir())
