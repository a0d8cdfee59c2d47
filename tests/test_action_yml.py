"""action.yml and the workflows keep the Action contract and the security rules."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.action.inputs import ACTION_ONLY_INPUTS, input_names, read_inputs

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = {
    "ran",
    "reason",
    "score",
    "passed",
    "total",
    "failed",
    "errors",
    "report-path",
    "regressions",
}
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s+[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*\s*$")


def _load(relative: str) -> dict[str, Any]:
    # YAML 1.1 reads a bare `on:` key as True; GitHub means the string.
    data = yaml.safe_load((ROOT / relative).read_text())
    if True in data:
        data["on"] = data.pop(True)
    return data


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    return _load("action.yml")


def _steps(action: dict[str, Any]) -> list[dict[str, Any]]:
    return action["runs"]["steps"]


def test_inputs_are_exactly_what_assay_ci_reads(action: dict[str, Any]) -> None:
    declared = set(action["inputs"])
    assert declared == set(input_names()) | set(ACTION_ONLY_INPUTS)
    for name, spec in action["inputs"].items():
        assert spec.get("description"), name
        assert "default" in spec and spec.get("required") is False, name


def test_defaults_match_the_python_defaults(action: dict[str, Any]) -> None:
    defaults = {
        f"INPUT_{name.upper().replace('-', '_')}": str(spec["default"])
        for name, spec in action["inputs"].items()
        if name not in ACTION_ONLY_INPUTS and "${{" not in str(spec["default"])
    }
    assert read_inputs(defaults) == read_inputs({})
    assert action["inputs"]["threshold"]["default"] == "0.75"
    assert action["inputs"]["label"]["default"] == "run-evals"
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"


def test_outputs_come_from_the_assay_step(action: dict[str, Any]) -> None:
    assert set(action["outputs"]) == OUTPUTS
    for name, spec in action["outputs"].items():
        assert spec["value"] == f"${{{{ steps.assay.outputs.{name} }}}}"
        assert spec["description"]
    assert action["branding"]["icon"] and action["branding"]["color"]


def test_every_input_reaches_assay_through_the_environment(action: dict[str, Any]) -> None:
    (step,) = [s for s in _steps(action) if s.get("id") == "assay"]
    env = step["env"]
    for name in input_names():
        assert env[f"INPUT_{name.upper().replace('-', '_')}"] == f"${{{{ inputs.{name} }}}}"
    assert step["run"].strip() == '"$RUNNER_TEMP/assay-venv/bin/assay" ci'


def test_run_steps_use_bash_and_never_expand_expressions(action: dict[str, Any]) -> None:
    runs = [s for s in _steps(action) if "run" in s]
    assert len(runs) >= 3
    for step in runs:
        assert step["shell"] == "bash", step["name"]
        assert "${{" not in step["run"], step["name"]


def test_python_is_private_and_assay_is_installed_from_the_action(action: dict[str, Any]) -> None:
    (setup,) = [s for s in _steps(action) if "setup-python" in s.get("uses", "")]
    assert setup["with"]["update-environment"] is False
    (install,) = [s for s in _steps(action) if s.get("name") == "Install assay"]
    assert '"$GITHUB_ACTION_PATH"' in install["run"] and "$RUNNER_TEMP/assay-venv" in install["run"]
    (cache,) = [s for s in _steps(action) if "actions/cache" in s.get("uses", "")]
    assert "steps.deps.outputs.hash" in cache["with"]["key"]


@pytest.mark.parametrize(
    "relative", ["action.yml", ".github/workflows/ci.yml", ".github/workflows/evals.yml"]
)
def test_remote_actions_are_pinned_to_a_full_sha_with_the_tag(relative: str) -> None:
    for line in (ROOT / relative).read_text().splitlines():
        if re.match(r"^\s*(-\s+)?uses:", line) and "uses: ./" not in line:
            assert PINNED.match(line), line


@pytest.mark.parametrize("relative", [".github/workflows/ci.yml", ".github/workflows/evals.yml"])
def test_workflow_jobs_are_bounded_and_do_not_persist_credentials(relative: str) -> None:
    workflow = _load(relative)
    for name, job in workflow["jobs"].items():
        assert isinstance(job.get("timeout-minutes"), int), name
        for step in job["steps"]:
            if "actions/checkout" in step.get("uses", ""):
                assert step["with"]["persist-credentials"] is False, name


def test_ci_workflow_is_read_only_and_runs_every_check() -> None:
    workflow = _load(".github/workflows/ci.yml")
    assert workflow["permissions"] == {"contents": "read"}
    assert set(workflow["on"]) == {"push", "pull_request"}
    commands = "\n".join(
        step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]
    )
    for tool in ("ruff check", "ruff format --check", "mypy", "pytest", "actionlint", "zizmor"):
        assert tool in commands


def test_evals_workflow_dogfoods_the_action_with_least_privilege() -> None:
    workflow = _load(".github/workflows/evals.yml")
    assert workflow["on"]["pull_request"]["types"] == [
        "opened",
        "synchronize",
        "reopened",
        "labeled",
    ]
    assert workflow["on"]["push"]["branches"] == ["main"] and "workflow_dispatch" in workflow["on"]
    assert workflow["permissions"] == {}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "read", "pull-requests": "write", "checks": "write"}
    group = job["concurrency"]["group"]
    assert "github.event.label.name" in group  # an unrelated label gets its own group
    assert job["concurrency"]["cancel-in-progress"] == "${{ github.event.action == 'synchronize' }}"
    (evals,) = [s for s in job["steps"] if s.get("uses") == "./"]
    assert evals["with"]["anthropic-api-key"] == "${{ secrets.ANTHROPIC_API_KEY }}"


def test_no_source_file_hands_text_to_a_shell() -> None:
    """PR-controlled strings must never reach a shell: no shell=True, os.system, popen."""
    shell_calls = {"system", "popen", "create_subprocess_shell", "getoutput", "getstatusoutput"}
    offenders = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            shell = any(
                k.arg == "shell"
                and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                for k in node.keywords
            )
            if shell or name in shell_calls:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
