"""`assay score`: PVYai's run mode on a workspace the user already changed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A PVYai suite (seed 003 shape) with a tiny Python fixture."""
    fixture = tmp_path / "evals" / "fixtures" / "adder"
    fixture.mkdir(parents=True)
    (fixture / "adder.py").write_text("def add(a, b):\n    return a - b\n")
    (fixture / "setup.cfg").write_text("[metadata]\nname = adder\n")
    (fixture / ".gitignore").write_text("__pycache__/\n")  # what the commands leave behind
    check = "import sys; from adder import add; sys.exit(0 if add(2, 3) == 5 else 1)"
    document = {
        "id": "python-tasks",
        "name": "Python tasks",
        "tasks": [
            {
                "id": "fix-add",
                "name": "Fix add",
                "prompt": "add() subtracts; make it add.",
                "workspaceFixture": "fixtures/adder",
                "verificationCommands": [
                    {"id": "test", "name": "Run tests", "command": [sys.executable, "-c", check]}
                ],
                "expectedChangedFiles": ["adder.py"],
                "forbiddenChangedFiles": ["setup.cfg"],
                "requiredTraceEvents": ["tool:edit_file"],
            },
            {
                "id": "other-task",
                "name": "Other",
                "prompt": "p",
                "workspaceFixture": "fixtures/adder",
                "verificationCommands": [
                    {"id": "noop", "name": "No-op", "command": [sys.executable, "-c", "pass"]}
                ],
                "expectedChangedFiles": ["adder.py"],
            },
        ],
    }
    path = tmp_path / "evals" / "python-tasks.json"
    path.write_text(json.dumps(document, indent=2))
    return path


def _workspace(suite: Path, tmp_path: Path, *, solve: bool) -> Path:
    """Copy the fixture, commit it as the baseline, then play the agent."""
    workspace = tmp_path / "workspace"
    shutil.copytree(suite.parent / "fixtures" / "adder", workspace)
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "fixture")
    if solve:
        (workspace / "adder.py").write_text("def add(a, b):\n    return a + b\n")
    return workspace


def _trace(tmp_path: Path) -> Path:
    trace = tmp_path / "agent-stdout.jsonl"
    trace.write_text('thinking\n{"type": "tool", "name": "edit_file", "path": "adder.py"}\n')
    return trace


@pytest.mark.slow
def test_a_solved_task_exits_0_with_a_check_table(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = _workspace(suite, tmp_path, solve=True)
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    assert main([*argv, "--trace", str(_trace(tmp_path))]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "PASS  python-tasks/fix-add  score 1.00"
    assert lines[1].split()[:3] == ["PASS", "command", "test"]
    assert any(line.split()[:3] == ["PASS", "changed_files", "changed_files"] for line in lines)
    assert any(line.split()[:3] == ["PASS", "trace", "trace_events"] for line in lines)


def test_file_names_the_agent_chose_print_no_workflow_command(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = _workspace(suite, tmp_path, solve=True)
    # No `:` (PVYai counts no such file as a change), but line breaks and `##[`.
    (workspace / "evil\n##[error]forged\r  ##[warning]x").write_text("x")
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    assert main([*argv, "--trace", str(_trace(tmp_path))]) == 1
    out = capsys.readouterr().out
    lines = re.split(r"\r\n|\r|\n", out)
    assert [line for line in lines if line.lstrip().startswith("::") or "##[" in line] == []
    # The name as PVYai reports it: git's quoting, its backslashes read as separators.
    assert 'unexpected: "evil/n##\\[error]forged/r  ##\\[warning]x"' in out


@pytest.mark.slow
def test_the_required_event_counts_after_a_flood_of_others(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trace file keeps its distinct events bounded; the ones the task requires, never.
    workspace = _workspace(suite, tmp_path, solve=True)
    trace = tmp_path / "flood.jsonl"
    junk = "".join(f'{{"type": "tool", "name": "junk-{n}"}}\n' for n in range(12_000))
    trace.write_text(junk + '{"type": "tool", "name": "edit_file"}\n')
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    assert main([*argv, "--trace", str(trace)]) == 0
    assert any(
        line.split()[:3] == ["PASS", "trace", "trace_events"]
        for line in capsys.readouterr().out.splitlines()
    )


@pytest.mark.slow
def test_an_unsolved_task_exits_1_and_json_is_pvyais_task_report(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = _workspace(suite, tmp_path, solve=False)
    (workspace / "setup.cfg").write_text("changed\n")
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    assert main([*argv, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert {k: report[k] for k in ("contract", "suiteId", "taskId", "status", "ok")} == {
        "contract": "pvyai.agenteval.report.v1",
        "suiteId": "python-tasks",
        "taskId": "fix-add",
        "status": "fail",
        "ok": False,
    }
    assert report["summary"] == {"total": 4, "passed": 0, "failed": 4, "blocked": 0, "errors": 0}
    assert report["changedFiles"] == ["setup.cfg"]
    assert [(r["id"], r["kind"], r["status"]) for r in report["results"]] == [
        ("test", "command", "fail"),
        ("changed_files", "changed_files", "fail"),
        ("forbidden_changed_files", "changed_files", "fail"),
        ("trace_events", "trace", "fail"),
    ]
    changed = report["results"][1]
    assert (changed["missingFiles"], changed["unexpectedFiles"]) == (["adder.py"], ["setup.cfg"])


def test_json_is_written_as_gos_encoder_writes_it(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`<`, `>`, `&` escaped as PVYai's `json.MarshalIndent` escapes them (and non-ASCII
    raw: git quotes such a name itself, as PVYai reads it, `"caf\\303\\251"`)."""
    workspace = _workspace(suite, tmp_path, solve=True)
    (workspace / "a<&>.txt").write_text("new\n")
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    main([*argv, "--json"])
    out = capsys.readouterr().out
    assert '"a\\u003c\\u0026\\u003e.txt"' in out and "<&>" not in out, out
    assert json.loads(out)["changedFiles"] == ["a<&>.txt", "adder.py"]


def test_unknown_task_exits_2_listing_the_ids(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = _workspace(suite, tmp_path, solve=True)
    argv = ["score", "--suite", str(suite), "--task", "nope", "--workspace", str(workspace)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "no task 'nope' in this suite; tasks: fix-add, other-task" in err
    assert str(suite) in err


def test_a_workspace_that_is_not_a_git_repo_exits_2(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(suite.parent / "fixtures" / "adder", plain)
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(plain)]
    assert main(argv) == 2
    assert "not a git work tree" in capsys.readouterr().err

    missing = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", "nowhere"]
    assert main(missing) == 2
    assert "workspace is not a directory" in capsys.readouterr().err


def test_missing_suite_or_trace_file_exits_2(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = _workspace(suite, tmp_path, solve=True)
    argv = ["score", "--task", "fix-add", "--workspace", str(workspace)]
    assert main([*argv, "--suite", str(tmp_path / "absent.json")]) == 2
    assert "task suite not found" in capsys.readouterr().err
    assert main([*argv, "--suite", str(suite), "--trace", str(tmp_path / "absent")]) == 2
    assert "cannot read trace file" in capsys.readouterr().err


@pytest.mark.slow
def test_score_in_a_subprocess_has_no_traceback(suite: Path, tmp_path: Path) -> None:
    workspace = _workspace(suite, tmp_path, solve=True)
    argv = ["--suite", str(suite), "--task", "nope", "--workspace", str(workspace)]
    done = subprocess.run(
        [sys.executable, "-m", "assay.cli", "score", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "no task 'nope'" in done.stderr and "Traceback" not in done.stderr


def _probed_workspace(suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A solved workspace for `fix-add`, whose verification command is now PROBE (what a
    hostile suite runs); PROBE finds the suite file through $SUITE_FILE."""
    workspace = _workspace(suite, tmp_path, solve=True)
    document = json.loads(suite.read_text())
    document["tasks"][0]["verificationCommands"] = [
        {"id": "probe", "name": "Probe", "command": [sys.executable, "-c", PROBE]}
    ]
    suite.write_text(json.dumps(document))
    monkeypatch.setenv("SUITE_FILE", str(suite))
    return workspace


def _probe_output(out: str) -> dict[str, Any]:
    """The probe's result in `assay score --json` output."""
    result: dict[str, Any] = next(r for r in json.loads(out)["results"] if r["id"] == "probe")
    return result


def _skip_without_bwrap() -> None:
    from tests.requires import bwrap_missing_reason

    if (reason := bwrap_missing_reason()) is not None:
        pytest.skip(reason)


PROBE = """
import os, pathlib, sys
suite = pathlib.Path(os.environ["SUITE_FILE"])
print("suite-visible" if suite.exists() else "suite-hidden")
pids = [p for p in os.listdir("/proc") if p.isdigit()]
print("pids", len(pids))
pathlib.Path("written-by-command.txt").write_text("ok")
try:
    (suite.parent / "planted.txt").write_text("x")
    print("planted")
except OSError:
    print("not-planted")
"""


@pytest.mark.slow
def test_score_runs_verification_commands_in_the_sandbox_with_the_workspace_writable(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _skip_without_bwrap()
    workspace = _probed_workspace(suite, tmp_path, monkeypatch)
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    main([*argv, "--isolation", "bwrap", "--json"])
    captured = capsys.readouterr()
    probe = _probe_output(captured.out)
    lines = probe["stdout"].split("\n")
    assert lines[0] == "suite-hidden"
    assert int(lines[1].split()[1]) <= 3  # bwrap's init, the command: not the host's
    assert lines[2] == "not-planted" and not (suite.parent / "planted.txt").exists()  # read-only
    assert (workspace / "written-by-command.txt").read_text() == "ok"
    assert "WARNING" not in captured.err


def test_score_says_loudly_when_its_commands_run_unconfined(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = _probed_workspace(suite, tmp_path, monkeypatch)
    monkeypatch.setenv("ASSAY_ISOLATION", "none")
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    main([*argv, "--json"])
    captured = capsys.readouterr()
    assert "assay: WARNING: agents and verification commands run WITHOUT an OS sandbox" in (
        captured.err
    )
    probe = _probe_output(captured.out)
    assert probe["stdout"].startswith("suite-visible")  # what the sandbox takes away


@pytest.mark.slow
def test_score_from_inside_the_workspace_keeps_it_writable(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The working directory's checkout is hidden, but not when it is the workspace."""
    _skip_without_bwrap()
    workspace = _probed_workspace(suite, tmp_path, monkeypatch)
    monkeypatch.chdir(workspace)
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", "."]
    main([*argv, "--isolation", "bwrap", "--json"])
    probe = _probe_output(capsys.readouterr().out)
    assert probe["exitCode"] == 0, (probe["stdout"], probe["stderr"])
    assert (workspace / "written-by-command.txt").read_text() == "ok"


JOB_SECRETS = {
    "GITHUB_TOKEN": "ghs_jobtokenjobtokenjobtoken",
    "ACTIONS_RUNTIME_TOKEN": "actions-runtime-token-value",
    "INPUT_CANARY": "canary-1234567890abcdef",
    "ANTHROPIC_API_KEY": "sk-ant-apikeyapikeyapikey",
}

# A hostile verification command: it plants a filter driver in the workspace's .git, whose
# program records its environment beside the repository and outside it, then re-dates the
# fixed file so that the `git status` assay runs after the commands must read it.
PLANT = """
import os, sys, time
marker = sys.argv[1]
program = f"sh -c 'env > .git/filter-env; env > {marker}; cat'"
with open(".git/config", "a") as config:
    config.write(f'[filter "pwn"]\\n\\tclean = "{program}"\\n')
with open(".git/info/attributes", "w") as attributes:
    attributes.write("* filter=pwn\\n")
later = time.time() + 5
os.utime("adder.py", (later, later))
"""


def _planted_score(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolation: str
) -> tuple[int, Path, Path]:
    """`assay score` of a solved workspace whose second command plants the filter; the
    job's secrets are in assay's environment. (exit code, workspace, the outside marker)."""
    if isolation == "bwrap":
        _skip_without_bwrap()
    for name, value in JOB_SECRETS.items():
        monkeypatch.setenv(name, value)
    workspace = _workspace(suite, tmp_path, solve=True)
    marker = tmp_path / "filter-ran-outside.txt"
    document = json.loads(suite.read_text())
    plant = [sys.executable, "-c", PLANT, str(marker)]
    document["tasks"][0]["verificationCommands"].append(
        {"id": "plant", "name": "Plant a filter", "command": plant}
    )
    document["tasks"][0]["requiredTraceEvents"] = []
    suite.write_text(json.dumps(document))
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    return main([*argv, "--isolation", isolation]), workspace, marker


@pytest.mark.parametrize("isolation", ["bwrap", "none"])
@pytest.mark.slow
def test_a_filter_a_verification_command_plants_never_runs(
    suite: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    isolation: str,
) -> None:
    """assay's `git status` after the commands runs no program the repository's config
    names, sandbox or not; the verdict is the one PVYai's git gives (the filter is `cat`)."""
    code, workspace, marker = _planted_score(suite, tmp_path, monkeypatch, isolation)
    out = capsys.readouterr().out
    assert not marker.exists() and not (workspace / ".git" / "filter-env").exists()
    assert code == 0, out
    assert out.startswith("PASS  python-tasks/fix-add")


@pytest.mark.parametrize("isolation", ["bwrap", "none"])
@pytest.mark.slow
def test_a_program_git_did_start_would_have_no_secret_and_no_host(
    suite: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    isolation: str,
) -> None:
    """The layer under the one above, for a program it does not know of: with the filter
    let through (the overrides switched off here), it runs without the job's secrets, and
    with bwrap inside the commands' sandbox (its write outside lands in a private /tmp)."""
    from assay.isolation import git as gitenv

    monkeypatch.setattr(gitenv, "_no_program_config", lambda names: [])
    code, workspace, marker = _planted_score(suite, tmp_path, monkeypatch, isolation)
    capsys.readouterr()
    recorded = (workspace / ".git" / "filter-env").read_text()
    assert "PATH=" in recorded  # it did run
    for name, value in JOB_SECRETS.items():
        assert name not in recorded and value not in recorded
    assert marker.exists() == (isolation == "none")
    assert code == 0


@pytest.mark.slow
def test_a_linked_worktree_whose_repository_the_sandbox_hides_is_refused_clearly(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """git reads the workspace inside the commands' sandbox, which hides the checkout assay
    runs from: a worktree of it has its repository there, and git cannot find it."""
    _skip_without_bwrap()
    project = _workspace(suite, tmp_path, solve=False)  # the checkout assay is run from
    workspace = tmp_path / "linked"
    _git(project, "worktree", "add", "-q", str(workspace))
    monkeypatch.chdir(project)
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    assert main([*argv, "--isolation", "bwrap"]) == 2
    assert "its .git file names a repository elsewhere, which the sandbox may hide" in (
        capsys.readouterr().err
    )


@pytest.mark.slow
def test_a_command_may_run_a_tracked_tool_of_the_suites_checkout_never_an_untracked_file(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As in `assay run`: the suite's checkout is hidden, but a command naming a file the
    checkout tracks (a shared test helper) sees it; an untracked one (a credentials file a
    CI step wrote there) stays hidden."""
    _skip_without_bwrap()
    workspace = _workspace(suite, tmp_path, solve=True)
    checkout = suite.parent
    tools = checkout / "tools"
    tools.mkdir()
    (tools / "check.py").write_text("print('tool ran')\n")
    (tools / "creds.py").write_text("print('secret read')\n")
    _git(checkout, "init", "-q", "-b", "main")
    _git(checkout, "add", "python-tasks.json", "fixtures", "tools/check.py")
    _git(checkout, "commit", "-q", "-m", "suite")
    document = json.loads(suite.read_text())
    document["tasks"][0]["verificationCommands"] = [
        {"id": "probe", "name": "Tracked", "command": [sys.executable, str(tools / "check.py")]},
        {"id": "creds", "name": "Untracked", "command": [sys.executable, str(tools / "creds.py")]},
    ]
    suite.write_text(json.dumps(document))
    _git(checkout, "commit", "-q", "-am", "commands")
    argv = ["score", "--suite", str(suite), "--task", "fix-add", "--workspace", str(workspace)]
    main([*argv, "--isolation", "bwrap", "--json"])
    captured = capsys.readouterr()
    results = {r["id"]: r for r in json.loads(captured.out)["results"]}
    assert results["probe"]["status"] == "pass" and "tool ran" in results["probe"]["stdout"]
    assert results["creds"]["status"] == "fail"
    assert "secret read" not in results["creds"].get("stdout", "")
    assert "creds.py stays hidden from confined programs: not tracked by git" in captured.err
