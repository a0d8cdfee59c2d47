"""action.yml and the workflows keep the Action contract and the security rules."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.action.inputs import ACTION_ONLY_INPUTS, input_names, read_inputs
from tests.requires import INSTALL_BUBBLEWRAP

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = {
    "ran",
    "reason",
    "score",
    "passed",
    "total",
    "failed",
    "errors",
    "verdict",
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


def test_outputs_come_from_the_decision_and_the_assay_step(action: dict[str, Any]) -> None:
    assert set(action["outputs"]) == OUTPUTS
    for name, spec in action["outputs"].items():
        step = "decide" if name in ("ran", "reason") else "assay"
        assert spec["value"] == f"${{{{ steps.{step}.outputs.{name} }}}}"
        assert spec["description"]
    assert action["branding"]["icon"] and action["branding"]["color"]


def test_every_input_reaches_assay_through_the_environment(action: dict[str, Any]) -> None:
    (step,) = [s for s in _steps(action) if s.get("id") == "assay"]
    env = step["env"]
    for name in input_names():
        assert env[f"INPUT_{name.upper().replace('-', '_')}"] == f"${{{{ inputs.{name} }}}}"
    assert env["ASSAY_ISOLATION"] == "${{ inputs.isolation }}"
    assert env["ASSAY_RUN_REASON"] == "${{ steps.decide.outputs.reason }}"
    assert env["PYCACHE_PREFIX"] == "${{ steps.install.outputs.pycache-prefix }}"


def _run_the_evals_step(action: dict[str, Any], tmp_path: Path, prefix: str) -> list[str]:
    """The argv the "Run the evals" script starts, against a venv whose python records it."""
    (step,) = [s for s in _steps(action) if s.get("id") == "assay"]
    bin_dir = tmp_path / "assay-venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$RUNNER_TEMP/argv"\n')
    python.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(tmp_path), "PYCACHE_PREFIX": prefix}
    done = _bash(step["run"], env)
    assert done.returncode == 0, done.stderr
    return (tmp_path / "argv").read_text().splitlines()


def test_assay_keeps_its_bytecode_in_the_install_cache_when_uv_installed_it(
    action: dict[str, Any], tmp_path: Path
) -> None:
    (install,) = [s for s in _steps(action) if s.get("id") == "install"]
    # Only uv's branch says where: pip's venv has its own .pyc files, compiled at install.
    uv_branch = install["run"].split("\n        else\n")[0]
    assert 'pycache-prefix=$RUNNER_TEMP/assay-install-cache/pycache" >> "$GITHUB_OUTPUT"' in (
        uv_branch
    )
    (cache,) = [s for s in _steps(action) if "actions/cache/restore" in s.get("uses", "")]
    assert cache["with"]["path"] == "${{ runner.temp }}/assay-install-cache"
    assay = str(tmp_path / "assay-venv" / "bin" / "assay")
    argv = _run_the_evals_step(action, tmp_path, "/cache/pycache")
    assert argv == ["-P", "-X", "pycache_prefix=/cache/pycache", assay, "ci"]
    (tmp_path / "argv").unlink()
    shutil.rmtree(tmp_path / "assay-venv")
    assert _run_the_evals_step(action, tmp_path, "") == ["-P", assay, "ci"]


def test_run_steps_use_bash_and_never_expand_expressions(action: dict[str, Any]) -> None:
    runs = [s for s in _steps(action) if "run" in s]
    assert len(runs) >= 3
    for step in runs:
        assert step["shell"] == "bash", step["name"]
        assert "${{" not in step["run"], step["name"]


def test_python_is_private_and_assay_is_installed_from_the_lock(action: dict[str, Any]) -> None:
    (setup,) = [s for s in _steps(action) if "setup-python" in s.get("uses", "")]
    assert setup["with"]["update-environment"] is False
    (install,) = [s for s in _steps(action) if s.get("name") == "Install assay"]
    script = install["run"]
    assert '"$GITHUB_ACTION_PATH"' in script and "$RUNNER_TEMP/assay-venv" in script
    # Both installers take only hash-pinned packages, and assay itself pulls in nothing.
    installs = [line.strip() for line in script.splitlines() if " install " in line]
    with_lock = [line for line in installs if "-r " in line]
    assert len(with_lock) == 2 and all("--require-hashes" in line for line in with_lock)
    assert sum("$lock" in line for line in with_lock) == 2
    own = [line for line in installs if line.endswith('"$GITHUB_ACTION_PATH"')]
    assert len(own) == 2 and all("--no-deps --no-build-isolation" in line for line in own)
    assert "requirements-uv.lock" in script and "--require-hashes" in script
    assert install["env"]["UV_NO_CONFIG"] == "1"  # a uv.toml in the PR cannot steer it
    (cache,) = [s for s in _steps(action) if "actions/cache/restore" in s.get("uses", "")]
    assert "steps.deps.outputs.hash" in cache["with"]["key"]
    (key,) = [s for s in _steps(action) if s.get("id") == "deps"]
    assert "requirements.lock" in key["run"] and "requirements-uv.lock" in key["run"]
    # The cache holds the standard library's bytecode too: keyed on that very build of it.
    assert "sys.version" in key["run"] and "os.stat(os.__file__)" in key["run"]


def test_no_python_step_imports_from_the_prs_checkout(action: dict[str, Any]) -> None:
    """The working directory is the PR's checkout: `python -`, `-c` and `-m` would put it
    first on sys.path, so each step either runs with -P or somewhere else."""
    calls = 0
    for step in _steps(action):
        elsewhere = step.get("working-directory") == "${{ runner.temp }}"
        for call in re.findall(r'"\$(?:PYTHON|venv/bin/python)" (\S+)', step.get("run", "")):
            calls += 1
            assert call == "-P" or elsewhere, (step["name"], call)
    assert calls >= 5


def test_the_decision_comes_before_anything_is_installed(action: dict[str, Any]) -> None:
    steps = _steps(action)
    names = [s.get("id") or s.get("name") for s in steps]
    decide = names.index("decide")
    assert names.index("python") < decide
    before = steps[:decide]
    assert not any("actions/cache" in s.get("uses", "") for s in before)
    assert not any("install" in s.get("run", "") for s in before)
    # The bare interpreter, with neither the checkout nor any site-packages on sys.path.
    run = steps[decide]["run"]
    assert '"$PYTHON" -P -S -m assay.action.decide' in run
    assert 'PYTHONPATH="$GITHUB_ACTION_PATH/src"' in run
    assert set(steps[decide]["env"]) == {
        "PYTHON",
        "INPUT_LABEL",
        "INPUT_TRIGGER_PATHS",
        "INPUT_GITHUB_TOKEN",
    }  # no model key reaches the decision
    for step in steps[decide + 1 :]:
        assert step["if"].startswith("steps.decide.outputs.ran == 'true'"), step["name"]


def _bash(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run(
        [bash, "-c", script], env=env, capture_output=True, text=True, timeout=30, check=False
    )


def test_the_history_is_uploaded_after_the_evals_and_never_fails_the_job(
    action: dict[str, Any],
) -> None:
    steps = _steps(action)
    names = [s.get("id") or s.get("name") for s in steps]
    (upload,) = [s for s in steps if "upload-artifact" in s.get("uses", "")]
    assert steps.index(upload) == len(steps) - 1 and names.index("assay") < steps.index(upload)
    # After a failed gate too (not after a cancel), only when `assay ci` named the history.
    assert "!cancelled()" in upload["if"]
    assert "steps.assay.outputs.history-dir != ''" in upload["if"]
    assert upload["continue-on-error"] is True
    assert upload["with"] == {
        "name": "${{ inputs.history-artifact }}",
        "path": "${{ steps.assay.outputs.history-dir }}",
        "include-hidden-files": True,  # the directory is `.assay-history`
        "if-no-files-found": "ignore",
        "overwrite": True,
    }


def test_windows_runners_get_a_clear_error(action: dict[str, Any]) -> None:
    first = _steps(action)[0]
    assert first["if"] == "runner.os == 'Windows'"
    done = _bash(first["run"], {"PATH": os.environ["PATH"]})
    assert done.returncode == 1
    assert done.stdout.startswith("::error title=assay::assay runs on Linux and macOS runners")


PREPARE_BWRAP = ROOT / "scripts" / "prepare-bwrap.sh"


def _sandbox_step(action: dict[str, Any]) -> dict[str, Any]:
    (step,) = [s for s in _steps(action) if s.get("name") == "Prepare the bubblewrap sandbox"]
    return step


def _prepare_bwrap(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _bash(f'source "{PREPARE_BWRAP}"', env)


def test_the_sandbox_step_runs_on_linux_unless_isolation_is_none(action: dict[str, Any]) -> None:
    step = _sandbox_step(action)
    assert "runner.os == 'Linux'" in step["if"] and "inputs.isolation != 'none'" in step["if"]
    assert step["env"] == {"ISOLATION": "${{ inputs.isolation }}"}
    assert step["run"] == 'bash "$GITHUB_ACTION_PATH/scripts/prepare-bwrap.sh"'
    names = [s.get("name") for s in _steps(action)]
    assert names.index("Install assay") < names.index(step["name"]) < names.index("Run the evals")
    assert action["inputs"]["isolation"]["default"] == "auto"


def test_the_sandbox_step_does_nothing_when_isolation_is_none(
    action: dict[str, Any], tmp_path: Path
) -> None:
    # An empty PATH: any command the script tried (bwrap, sudo, apt-get) would fail loudly.
    done = _prepare_bwrap({"ISOLATION": "none", "PATH": str(tmp_path)})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


_PROBE = [
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "true",
]  # fmt: skip


def test_a_working_bwrap_is_left_alone(action: dict[str, Any], tmp_path: Path) -> None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip(f"bwrap is not installed ({INSTALL_BUBBLEWRAP})")
    if subprocess.run([bwrap, *_PROBE], capture_output=True).returncode != 0:
        pytest.skip("bwrap cannot build a sandbox here")
    # PATH holds bwrap alone: reaching for apt-get, sudo or apparmor_parser would fail.
    (tmp_path / "bwrap").symlink_to(bwrap)
    done = _prepare_bwrap({"ISOLATION": "auto", "PATH": str(tmp_path)})
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "assay: bwrap can build its sandbox\n"


def test_no_way_to_install_bwrap_is_a_warning_not_a_failure(
    action: dict[str, Any], tmp_path: Path
) -> None:
    done = _prepare_bwrap({"ISOLATION": "bwrap", "PATH": str(tmp_path)})
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        "assay: installing bubblewrap for the agent sandbox",
        "::warning title=assay: sandbox::could not install bubblewrap with apt-get",
    ]


def test_the_sandbox_step_prefers_a_bwrap_profile_to_the_global_sysctl() -> None:
    script = PREPARE_BWRAP.read_text()
    assert "apt-get install -y -qq bubblewrap" in script
    profile = script.index("apparmor_parser -r")
    sysctl = script.index("kernel.apparmor_restrict_unprivileged_userns=0")
    assert profile < sysctl
    assert "'  userns,'" in script and "flags=(unconfined)" in script
    notice = script[sysctl:].splitlines()[1]
    assert notice.strip().startswith('echo "::notice title=assay: sandbox::')
    # It prepares and never fails the job: assay decides what auto and bwrap mean.
    assert "exit 1" not in script


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
    tests = "\n".join(step.get("run", "") for step in workflow["jobs"]["tests"]["steps"])
    assert tests.index("bash scripts/prepare-bwrap.sh") < tests.index("pytest")


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
    assert job["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "checks": "write",
        "actions": "read",  # the run history's artifact (keep-history)
    }
    group = job["concurrency"]["group"]
    assert "github.event.label.name" in group  # an unrelated label gets its own group
    assert job["concurrency"]["cancel-in-progress"] == "${{ github.event.action == 'synchronize' }}"
    (evals,) = [s for s in job["steps"] if s.get("uses") == "./"]
    assert evals["with"]["anthropic-api-key"] == "${{ secrets.ANTHROPIC_API_KEY }}"
    # The key is an environment's secret: only jobs that name the environment get it.
    assert job["environment"] == "evals"


@pytest.mark.slow
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


def test_the_install_cache_is_saved_after_the_evals_whatever_the_gate_said(
    action: dict[str, Any],
) -> None:
    """actions/cache saves only when the job succeeds: a PR failing the gate would reinstall
    and recompile on every push. Restore before the install, save after the evals."""
    steps = _steps(action)
    uses = [s.get("uses", "").partition("@") for s in steps]
    names = [s.get("id") or s.get("name") for s in steps]
    assert not any(name == "actions/cache" for name, _, _ in uses)  # not the saving-on-success one
    (restore,) = [i for i, (name, _, _) in enumerate(uses) if name == "actions/cache/restore"]
    (save,) = [i for i, (name, _, _) in enumerate(uses) if name == "actions/cache/save"]
    assert uses[restore][2] == uses[save][2]  # one pinned commit of actions/cache
    assert restore < names.index("install") < names.index("assay") < save
    assert steps[restore]["id"] == "cache"
    assert steps[save]["with"]["path"] == steps[restore]["with"]["path"]
    assert steps[save]["with"]["key"] == "${{ steps.cache.outputs.cache-primary-key }}"
    condition = steps[save]["if"]
    # A status function anywhere in `if:` replaces the implicit success().
    assert " && always() && " in condition
    assert "steps.install.outcome == 'success'" in condition
    assert "steps.cache.outputs.cache-hit != 'true'" in condition
