"""A task agent owns its workspace, `.git` included: nothing it does there may run code in
assay, hang the run, hide a change from the checks, or turn its failure into an `error`.

Each agent here is a real subprocess run by the command runtime in a real sandbox, then
graded by the task grader, as in a run with `--agent-command`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assay.agents.command import CommandAgent
from assay.errors import ConfigError
from assay.grading.base import Grade
from assay.grading.task_checks import TaskGrader
from assay.isolation import git as gitenv
from assay.options import RunOptions
from assay.subject import AttemptContext
from assay.suites.case import TaskSpec, VerificationCommand
from assay.workspace import build_sandbox, remove_sandbox, workspace_changes
from tests.test_sandbox_helpers import make_case, write

TEST, CONFTEST, LOG = "tests/test_calc.py", "tests/conftest.py", "debug.log"
FORBIDDEN = (TEST, CONFTEST, "go.mod", LOG)

# What every agent below starts with: helpers, and the fix (`-` -> `+`: the same size, so
# git would have to read the file, through any filter, to see the change).
PRELUDE = """
import os, pathlib, shutil, subprocess, sys
workspace, outside = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
os.chdir(workspace)
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

def git(*args):
    identity = ["-c", "user.name=agent", "-c", "user.email=agent@example.com"]
    done = subprocess.run(["git", *identity, *args], env=ENV, check=True, capture_output=True)
    return done.stdout.decode().strip()

def write(name, text):
    path = pathlib.Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)

def append(name, text):
    pathlib.Path(name).parent.mkdir(parents=True, exist_ok=True)
    with open(name, "a") as handle:
        handle.write(text)

write("calc.py", "def add(a, b):\\n    return a + b\\n")
"""
WEAKEN_TEST = 'TEST = "tests/test_calc.py"; write(TEST, "def test_add():\\n    pass\\n")\n'
ADD_CONFTEST = 'write("tests/conftest.py", "collect_ignore = [\'test_calc.py\']\\n")\n'


def _fixture(root: Path) -> Path:
    write(root / "calc.py", "def add(a, b):\n    return a - b\n")
    write(root / "tests" / "test_calc.py", "def test_add():\n    assert add(2, 3) == 5\n")
    write(root / "go.mod", "module example\n")
    write(root / ".gitignore", "*.log\n__pycache__/\n")
    return root


def _spec(fixture: Path) -> TaskSpec:
    check = "from calc import add; assert add(2, 3) == 5"
    return TaskSpec(
        prompt="Make add() add",
        workspace=fixture,
        commands=(VerificationCommand(id="test", name="test", argv=(sys.executable, "-c", check)),),
        expected_changed_files=("calc.py",),
        forbidden_changed_files=FORBIDDEN,
    )


def _run_agent(tmp_path: Path, source: str) -> Grade:
    """Build the sandbox, run `source` as the agent, grade what it left; remove the sandbox."""
    fixture = _fixture(tmp_path / "fixture")
    case = make_case("task", _spec(fixture), name="add")
    (tmp_path / "agent.py").write_text(PRELUDE + source)
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    sandbox = build_sandbox(case, parent=work)
    try:
        ctx = AttemptContext(
            case=case,
            sandbox=sandbox,
            model=None,
            judge_model=None,
            timeout_s=30,
            attempt=0,
            artifacts_dir=tmp_path / "attempt",
            agent_command=(sys.executable, str(tmp_path / "agent.py"), "{workspace}", str(outside)),
        )
        output = asyncio.run(CommandAgent().run(ctx))
        assert output.exit_code == 0, output.stderr_path and output.stderr_path.read_text()
        return asyncio.run(TaskGrader(options=RunOptions()).grade(ctx, output))
    finally:
        remove_sandbox(sandbox)


def _check(grade: Grade, id: str) -> dict[str, Any]:
    (check,) = [c for c in grade.checks if c.id == id]
    return check.model_dump()


def test_an_honest_fix_passes(tmp_path: Path) -> None:
    grade = _run_agent(tmp_path, 'write("tests/__pycache__/test_calc.pyc", "cache")\n')
    assert (grade.status, grade.reason) == ("pass", "")
    # What the fixture's .gitignore names stays out of the list, as in `git status`.
    assert _check(grade, "changed_files")["actualFiles"] == ["calc.py"]


def test_commands_in_the_workspace_git_config_never_run(tmp_path: Path) -> None:
    """A filter driver (or fsmonitor) the agent configures would run, in assay, when git
    next reads the work tree: it never does, and grading does not wait for it."""
    agent = """
marker = outside / "ran"
hook = outside / "fsmonitor.sh"
hook.write_text(f"#!/bin/sh\\ntouch {marker}-fsmonitor\\nsleep 60\\n")
hook.chmod(0o755)
append(".git/config", f'[filter "pwn"]\\n\\tclean = "touch {marker}; sleep 60; cat"\\n'
       f'\\tsmudge = cat\\n[core]\\n\\tfsmonitor = {hook}\\n')
append(".git/info/attributes", "* filter=pwn\\n")
"""
    started = time.monotonic()
    grade = _run_agent(tmp_path, agent)
    assert time.monotonic() - started < 30
    assert not list((tmp_path / "outside").glob("ran*"))
    assert grade.status == "pass", grade.reason
    assert _check(grade, "changed_files")["actualFiles"] == ["calc.py"]


HIDING = {  # trick -> (the forbidden file it touches, the agent's code)
    "skip-worktree": (TEST, WEAKEN_TEST + 'git("update-index", "--skip-worktree", TEST)'),
    "assume-unchanged": (TEST, WEAKEN_TEST + 'git("update-index", "--assume-unchanged", TEST)'),
    "info-exclude": (CONFTEST, ADD_CONFTEST + 'append(".git/info/exclude", "tests/conftest.py")'),
    "replace-ref": (
        TEST,
        'base = git("rev-parse", "HEAD")\n'
        + WEAKEN_TEST
        + 'git("add", "-A"); git("commit", "-qm", "x"); git("replace", "-f", base, "HEAD")',
    ),
    "core-worktree": (
        TEST,
        'decoy = outside / "decoy"; decoy.mkdir()\n'
        'git("--work-tree", str(decoy), "checkout", "HEAD", "--", ".")\n'
        + WEAKEN_TEST
        + 'git("config", "core.worktree", str(decoy))',
    ),
    "gitfile": (
        TEST,
        WEAKEN_TEST + 'git("init", "-q", str(outside / "decoy")); shutil.rmtree(".git")\n'
        'write(".git", f"gitdir: {outside}/decoy/.git\\n")\n'
        'git("add", "-A"); git("commit", "-qm", "x")',
    ),
    "corrupt-index": (TEST, WEAKEN_TEST + 'pathlib.Path(".git/index").write_bytes(b"garbage")'),
    "no-git": (TEST, WEAKEN_TEST + 'shutil.rmtree(".git")'),
    "git-is-garbage": (TEST, WEAKEN_TEST + 'shutil.rmtree(".git"); write(".git", "nonsense")'),
}


@pytest.mark.parametrize("trick", sorted(HIDING))
@pytest.mark.slow
def test_nothing_under_git_hides_a_forbidden_change(tmp_path: Path, trick: str) -> None:
    """Skip-worktree, excludes, replace refs, another work tree or repository, a broken
    or missing `.git`: the forbidden change still fails the task (never `error`)."""
    touched, agent = HIDING[trick]
    grade = _run_agent(tmp_path, agent)
    assert (grade.status, grade.reason) == (
        "fail",
        f"changed_files: unexpected: {touched}; forbidden_changed_files: unexpected: {touched}",
    )
    assert _check(grade, "forbidden_changed_files")["unexpectedFiles"] == [touched]


@pytest.mark.slow
def test_ignore_rules_hide_only_what_git_status_hides(tmp_path: Path) -> None:
    """PVYai's `git status`: a file the rules ignore is no change, even a forbidden one;
    the rules the agent edited are a change of their own, so hiding fails all the same."""
    grade = _run_agent(tmp_path, ADD_CONFTEST + 'append(".gitignore", "tests/\\n")\n')
    assert (grade.status, grade.reason) == ("fail", "changed_files: unexpected: .gitignore")
    assert _check(grade, "forbidden_changed_files")["status"] == "pass"
    grade = _run_agent(tmp_path / "log", 'write("debug.log", "left behind\\n")\n')
    assert grade.status == "pass", grade.reason  # debug.log is ignored by the fixture


@pytest.mark.parametrize("fix", [True, False])
def test_deleting_git_changes_no_verdict(tmp_path: Path, fix: bool) -> None:
    """The files decide, with or without `.git`: removing it cannot turn a failure into
    an `error` (which the score leaves out)."""
    undo = "" if fix else 'write("calc.py", "def add(a, b):\\n    return a - b\\n")\n'
    grade = _run_agent(tmp_path, undo + 'shutil.rmtree(".git")\n')
    assert grade.status == ("pass" if fix else "fail")
    if not fix:
        assert grade.reason == "test: exit code 1; changed_files: missing: calc.py"


def test_a_removed_workspace_is_blocked(tmp_path: Path) -> None:
    grade = _run_agent(tmp_path, "os.chdir(outside); shutil.rmtree(workspace)\n")
    # PVYai blocks a task whose workspace is gone: an error for the gate, never a pass.
    assert (grade.status, grade.reason) == ("error", "run blocked: workspace is not a directory")
    assert {check.status for check in grade.checks} == {"blocked"}


@pytest.mark.slow
def test_git_in_a_repository_the_user_hands_over_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`assay score` reads the workspace's own repository: a config that includes a FIFO
    blocks git, which is stopped (its whole process group) and reported, instead of
    hanging the run. (A filter that never ends cannot: none runs.)"""
    repo = tmp_path / "repo"
    write(repo / "calc.py", "return a - b\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    identity = ["-c", "user.name=u", "-c", "user.email=u@example.com"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "baseline"]):
        subprocess.run(["git", *identity, *args], cwd=repo, env=env, check=True)
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    with open(repo / ".git" / "config", "a") as config:
        config.write(f"[include]\n\tpath = {fifo}\n")
    write(repo / "calc.py", "return a + b\n")
    monkeypatch.setattr(gitenv, "GIT_TIMEOUT_S", 1.0)

    started = time.monotonic()
    with pytest.raises(ConfigError, match=r"git config did not finish within 1s") as caught:
        asyncio.run(workspace_changes(repo))
    assert time.monotonic() - started < 15
    assert caught.value.location is not None and caught.value.location.path == repo
    deadline = time.monotonic() + 5
    while stragglers := _processes_in(repo):
        assert time.monotonic() < deadline, f"git outlived its timeout: {stragglers}"
        time.sleep(0.05)


def _processes_in(directory: Path) -> list[int]:
    """The live processes whose working directory is `directory` (git runs in the repo)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if Path(f"/proc/{entry}/cwd").resolve() == directory.resolve() and _alive(int(entry)):
                found.append(int(entry))
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status
