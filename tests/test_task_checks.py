"""Deterministic task checks on real git workspaces, with real verification commands."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.agents.command import CommandAgent
from assay.errors import ConfigError
from assay.grading import task_checks
from assay.grading.base import Grade
from assay.grading.task_checks import TaskGrader, score_workspace
from assay.grading.verify_grader import VerdictGrader
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, ContextChecks, TaskSpec, VerificationCommand, VerifySpec
from assay.workspace import build_sandbox, remove_sandbox

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def _fixture(root: Path) -> Path:
    """A tiny project like a PVYai workspace fixture (bytecode ignored, as projects do)."""
    root.mkdir(parents=True)
    (root / ".gitignore").write_text("__pycache__/\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text("def answer():\n    return 41\n")
    (root / "pkg" / "old_name.py").write_text("VALUE = 1\n")
    (root / "go.mod").write_text("module example\n")
    (root / "README.md").write_text("# project\n")
    return root


def _workspace(tmp_path: Path) -> tuple[Path, str]:
    """The fixture committed as the baseline, as PVYai's run mode expects."""
    workspace = _fixture(tmp_path / "ws")
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "baseline")
    return workspace, _git(workspace, "rev-parse", "HEAD")


def _solve(workspace: Path) -> None:
    """What a good agent does: fix core.py and add a test file."""
    (workspace / "pkg" / "core.py").write_text("def answer():\n    return 42\n")
    (workspace / "pkg" / "test_core.py").write_text("from pkg.core import answer\n")


def _py(code: str) -> tuple[str, ...]:
    return (sys.executable, "-c", code)


def _command(id: str, code: str, *, timeout_s: float = 60.0) -> VerificationCommand:
    return VerificationCommand(id=id, name=f"Run {id}", argv=_py(code), timeout_s=timeout_s)


CHECK_ANSWER = "import sys; from pkg.core import answer; sys.exit(0 if answer() == 42 else 1)"


def _spec(workspace: Path, **overrides: Any) -> TaskSpec:
    fields: dict[str, Any] = {
        "prompt": "Make answer() return 42",
        "workspace": workspace,
        "commands": (_command("test", CHECK_ANSWER),),
        "expected_changed_files": ("pkg/core.py", "pkg/test_core.py"),
        "forbidden_changed_files": ("go.mod",),
        "context": ContextChecks(
            required_files=("pkg/core.py", "pkg/test_core.py"), forbidden_files=("debug.log",)
        ),
        "required_trace_events": ("tool:edit_file", "tool:read_file", "verify:test"),
    }
    fields.update(overrides)
    return TaskSpec(**fields)


GOOD_TRACE = ["tool:read_file", "tool:edit_file", "verify:test"]


def _score(
    spec: TaskSpec,
    workspace: Path,
    *,
    baseline: str | None = None,
    trace: Sequence[str] = GOOD_TRACE,
    log_dir: Path | None = None,
) -> Grade:
    return asyncio.run(
        score_workspace(spec, workspace, baseline=baseline, trace_events=trace, log_dir=log_dir)
    )


def _check(grade: Grade, id: str) -> dict[str, Any]:
    (check,) = [c for c in grade.checks if c.id == id]
    return check.model_dump()


# --- the whole task ---------------------------------------------------------------------


def test_a_solved_task_passes_every_check(tmp_path: Path) -> None:
    workspace, baseline = _workspace(tmp_path)
    _solve(workspace)
    grade = _score(_spec(workspace), workspace, baseline=baseline, log_dir=tmp_path / "logs")
    assert (grade.status, grade.score, grade.reason) == ("pass", 1.0, "")
    assert [(c.id, c.kind, c.status) for c in grade.checks] == [
        ("test", "command", "pass"),
        ("changed_files", "changed_files", "pass"),
        ("forbidden_changed_files", "changed_files", "pass"),
        ("context_checks", "context", "pass"),
        ("trace_events", "trace", "pass"),
    ]
    command = _check(grade, "test")
    assert command["exitCode"] == 0 and command["name"] == "Run test"
    assert (tmp_path / "logs" / "test.log").exists()
    changed = _check(grade, "changed_files")
    assert (changed["missingFiles"], changed["unexpectedFiles"]) == ([], [])
    assert changed["name"] == "Expected changed files"


def test_any_other_change_fails_the_changed_files_check(tmp_path: Path) -> None:
    workspace, baseline = _workspace(tmp_path)
    _solve(workspace)
    (workspace / "notes.txt").write_text("scratch")
    grade = _score(_spec(workspace), workspace, baseline=baseline)
    changed = _check(grade, "changed_files")
    assert (changed["status"], changed["unexpectedFiles"]) == ("fail", ["notes.txt"])
    assert grade.reason == "changed_files: unexpected: notes.txt"


def test_command_logs_use_a_temporary_directory_only_when_nobody_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, baseline = _workspace(tmp_path)
    _solve(workspace)
    made: list[str] = []
    real = task_checks.tempfile.TemporaryDirectory

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append("temporary")
        return real(*args, **kwargs)

    monkeypatch.setattr(task_checks.tempfile, "TemporaryDirectory", counting)
    kept = _score(_spec(workspace), workspace, baseline=baseline, log_dir=tmp_path / "kept")
    assert made == [] and (tmp_path / "kept" / "test.log").exists()
    dropped = _score(_spec(workspace), workspace, baseline=baseline)
    assert made == ["temporary"]
    timeless = [
        {k: v for k, v in _check(g, "test").items() if k != "durationS"} for g in (dropped, kept)
    ]
    assert timeless[0] == timeless[1]


def test_an_unsolved_task_fails_with_a_reason_per_failed_check(tmp_path: Path) -> None:
    workspace, baseline = _workspace(tmp_path)
    (workspace / "go.mod").write_text("module changed\n")
    (workspace / "debug.log").write_text("left behind\n")
    grade = _score(_spec(workspace), workspace, baseline=baseline, trace=["tool:read_file"])
    assert (grade.status, grade.score) == ("fail", 0.0)
    assert [c.status for c in grade.checks] == ["fail"] * 5
    assert grade.reason == (
        "test: exit code 1; "
        "changed_files: missing: pkg/core.py, pkg/test_core.py; "
        "unexpected: debug.log, go.mod; "
        "forbidden_changed_files: unexpected: go.mod; "
        "context_checks: missing: pkg/test_core.py; unexpected: debug.log; "
        "trace_events: missing events: tool:edit_file, verify:test"
    )


# --- command checks ----------------------------------------------------------------------


def test_command_failure_records_exit_code_and_output(tmp_path: Path) -> None:
    workspace, _ = _workspace(tmp_path)
    code = (
        "import sys; print('x' * 5000); print('assertion failed: 41 != 42');"
        "print('oops', file=sys.stderr); sys.exit(3)"
    )
    grade = _score(_spec(workspace, commands=(_command("test", code),)), workspace)
    check = _check(grade, "test")
    assert (check["status"], check["message"], check["exitCode"]) == ("fail", "", 3)
    assert check["command"] == list(_py(code))
    assert check["stdout"].endswith("assertion failed: 41 != 42\n")
    assert check["stderr"] == "oops\n"
    # The last ~2 KB, cut at a line boundary: the 5000-character line is dropped whole.
    assert check["outputTail"] == "assertion failed: 41 != 42\noops\n"
    assert check["durationS"] >= 0


@pytest.mark.slow
def test_command_timeout_kills_its_process_group(tmp_path: Path) -> None:
    workspace, _ = _workspace(tmp_path)
    code = (
        "import subprocess, sys, time, pathlib;"
        "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        "pathlib.Path('child.pid').write_text(str(c.pid)); time.sleep(60)"
    )
    started = time.monotonic()
    grade = _score(_spec(workspace, commands=(_command("hang", code, timeout_s=1),)), workspace)
    assert time.monotonic() - started < 15
    check = _check(grade, "hang")
    # PVYai's deadline kills the command: Go reads that as exit code -1, a plain failure
    # without a message; assay's own field and reason say it timed out.
    assert (check["status"], check["exitCode"], check["message"]) == ("fail", -1, "")
    assert check["timedOutAfterS"] == 1
    assert grade.status == "fail" and grade.reason.startswith("hang: timed out after 1s;")
    child = int((workspace / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{child}").exists() and "State:\tZ" not in _proc_status(child):
        assert time.monotonic() < deadline, "the command's child survived its timeout"
        time.sleep(0.05)


def _proc_status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return "State:\tZ"


def test_a_program_that_cannot_start_is_an_error_and_later_commands_still_run(
    tmp_path: Path,
) -> None:
    workspace, _ = _workspace(tmp_path)
    missing = VerificationCommand(id="lint", name="Lint", argv=("golangci-lint-absent", "run"))
    commands = (missing, _command("test", "print('ran')"))
    grade = _score(_spec(workspace, commands=commands), workspace)
    lint = _check(grade, "lint")
    assert (lint["status"], lint["message"]) == ("error", "command not found: golangci-lint-absent")
    assert lint["exitCode"] == -1
    assert _check(grade, "test")["status"] == "pass"
    assert grade.status == "error"


def test_argv_elements_are_trimmed_before_the_command_runs(tmp_path: Path) -> None:
    workspace, _ = _workspace(tmp_path)
    argv = (f" {sys.executable} ", "-c", " import sys; sys.exit(0) ")
    command = VerificationCommand(id="t", name="T", argv=argv)
    grade = _score(_spec(workspace, commands=(command,)), workspace)
    check = _check(grade, "t")
    assert check["status"] == "pass"
    assert check["command"] == list(argv)  # reported as the suite wrote it


def test_files_the_commands_write_are_changes(tmp_path: Path) -> None:
    workspace, _ = _workspace(tmp_path)
    build = _command("build", "import pathlib; pathlib.Path('build.out').write_text('built')")
    test = _command("test", "import pathlib; assert pathlib.Path('build.out').read_text()")
    grade = _score(_spec(workspace, commands=(build, test)), workspace)
    assert [_check(grade, i)["status"] for i in ("build", "test")] == ["pass", "pass"]
    # Changed files are collected after the commands, as PVYai does.
    assert "build.out" in _check(grade, "changed_files")["unexpectedFiles"]


def test_verification_commands_never_see_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-secret-1",
        "OPENAI_API_KEY": "sk-openai-secret-2",
        "GITHUB_TOKEN": "ghs_secret3",
        "GH_TOKEN": "gho_secret4",
        "ACTIONS_RUNTIME_TOKEN": "rt-secret5",
        "DEPLOY_PASSWORD": "pw-secret6",
        "SERVICE_SECRET": "secret-7",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    dump = "import json, os; json.dump(dict(os.environ), open('env.json', 'w'))"
    workspace, _ = _workspace(tmp_path)
    _score(_spec(workspace, commands=(_command("env", dump),)), workspace)
    seen = json.loads((workspace / "env.json").read_text())
    assert not set(secrets) & set(seen)
    assert not set(secrets.values()) & set(seen.values())
    assert seen["HARMLESS_SETTING"] == "visible" and "PATH" in seen


# --- file checks -------------------------------------------------------------------------


def test_an_unstaged_rename_counts_both_names(tmp_path: Path) -> None:
    workspace, baseline = _workspace(tmp_path)
    _solve(workspace)
    (workspace / "pkg" / "old_name.py").rename(workspace / "pkg" / "new_name.py")
    expected = ("pkg/test_core.py", "pkg/core.py", "pkg/new_name.py", "pkg/old_name.py")
    check = _check(
        _score(_spec(workspace, expected_changed_files=expected), workspace), "changed_files"
    )
    assert check["status"] == "pass"
    assert check["actualFiles"] == sorted(expected)


def test_changes_the_agent_committed_are_judged_from_the_baseline(tmp_path: Path) -> None:
    workspace, baseline = _workspace(tmp_path)
    _solve(workspace)
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "agent commit")
    (workspace / "go.mod").unlink()
    for given in (baseline, None):  # None: the root commit, the baseline of a PVYai workspace
        grade = _score(_spec(workspace), workspace, baseline=given)
        assert _check(grade, "changed_files")["unexpectedFiles"] == ["go.mod"]
        forbidden = _check(grade, "forbidden_changed_files")
        assert (forbidden["status"], forbidden["unexpectedFiles"]) == ("fail", ["go.mod"])


def test_ignored_files_are_no_changes_even_when_named(tmp_path: Path) -> None:
    workspace, baseline = _workspace(tmp_path)
    _solve(workspace)
    (workspace / ".gitignore").write_text("__pycache__/\n*.log\n")
    (workspace / "debug.log").write_text("")
    expected = ("pkg/core.py", "pkg/test_core.py", ".gitignore", "debug.log")
    spec = _spec(workspace, expected_changed_files=expected)
    changed = _check(_score(spec, workspace, baseline=baseline), "changed_files")
    # As `git status` shows it: the ignored file did not change, so it is missing.
    assert (changed["status"], changed["missingFiles"]) == ("fail", ["debug.log"])


def test_context_checks_follow_symlinks_as_os_stat_does(tmp_path: Path) -> None:
    """PVYai asks `os.Stat`: a link to a file outside the workspace is there, a dangling
    one is not; only existence is asked, the target is never read."""
    workspace, _ = _workspace(tmp_path)
    (tmp_path / "outside.txt").write_text("not in the workspace")
    (workspace / "link").symlink_to(tmp_path / "outside.txt")
    (workspace / "dangling").symlink_to(tmp_path / "gone.txt")
    context = ContextChecks(
        required_files=("pkg/core.py", "pkg", "link", "dangling"),
        forbidden_files=("node_modules/cache.txt", "link"),
    )
    check = _check(_score(_spec(workspace, context=context), workspace), "context_checks")
    assert (check["status"], check["missingFiles"]) == ("fail", ["dangling"])
    assert check["unexpectedFiles"] == ["link"]
    assert check["expectedFiles"] == ["dangling", "link", "pkg", "pkg/core.py"]  # sorted

    (workspace / "node_modules").mkdir()
    (workspace / "node_modules" / "cache.txt").write_text("")
    context = ContextChecks(
        required_files=("pkg/core.py",), forbidden_files=("node_modules/cache.txt",)
    )
    check = _check(_score(_spec(workspace, context=context), workspace), "context_checks")
    assert (check["status"], check["unexpectedFiles"]) == ("fail", ["node_modules/cache.txt"])


def test_trace_events_come_from_the_agent_only(tmp_path: Path) -> None:
    """assay running command `test` does not make `verify:test` present (as in PVYai)."""
    workspace, _ = _workspace(tmp_path)
    _solve(workspace)
    grade = _score(_spec(workspace), workspace, trace=["tool:read_file", "tool:edit_file"])
    assert _check(grade, "test")["status"] == "pass"
    trace = _check(grade, "trace_events")
    assert (trace["status"], trace["missingEvents"]) == ("fail", ["verify:test"])
    assert trace["actualEvents"] == ["tool:edit_file", "tool:read_file"]


def test_only_the_checks_a_task_asks_for_are_reported(tmp_path: Path) -> None:
    workspace, _ = _workspace(tmp_path)
    (workspace / "a.txt").write_text("")
    spec = TaskSpec(
        prompt="p",
        workspace=workspace,
        commands=(_command("ok", "pass"),),
        expected_changed_files=("a.txt",),
    )
    grade = _score(spec, workspace, trace=[])
    assert [c.id for c in grade.checks] == ["ok", "changed_files"] and grade.status == "pass"


def test_not_a_git_repository_is_a_config_error(tmp_path: Path) -> None:
    plain = _fixture(tmp_path / "plain")
    with pytest.raises(ConfigError, match="not a git work tree"):
        _score(_spec(plain), plain)


# --- the graders through their seams -----------------------------------------------------


def _task_case(fixture: Path, spec: TaskSpec) -> Case:
    return Case(
        id="python-tasks/fix-answer",
        suite="python-tasks",
        name="fix-answer",
        kind="task",
        format="task-suite",
        source_path=fixture.parent / "suite.json",
        source_line=4,
        spec=spec,
    )


GOOD_AGENT = """
import json, pathlib, sys
print(json.dumps({"type": "tool", "name": "read_file"}))
core = pathlib.Path(sys.argv[1], "pkg", "core.py")
core.write_text(core.read_text().replace("41", "42"))
pathlib.Path(sys.argv[1], "pkg", "test_core.py").write_text("")
print(json.dumps({"type": "tool", "name": "edit_file"}))
print(json.dumps({"type": "verify", "name": "test", "exitCode": 0}))
"""


def _attempt(tmp_path: Path, agent_source: str) -> tuple[AgentOutput, Grade]:
    """One attempt the way the runner composes it: sandbox -> CommandAgent -> TaskGrader."""
    fixture = _fixture(tmp_path / "fixtures" / "answer")
    agent = tmp_path / "agent.py"
    agent.write_text(agent_source)
    case = _task_case(fixture, _spec(fixture))
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
            artifacts_dir=tmp_path / "report" / "attempt-1",
            agent_command=(sys.executable, str(agent), "{workspace}"),
        )
        output = asyncio.run(CommandAgent().run(ctx))
        return output, asyncio.run(TaskGrader(options=RunOptions()).grade(ctx, output))
    finally:
        remove_sandbox(sandbox)


def test_command_agent_and_task_grader_on_a_real_sandbox(tmp_path: Path) -> None:
    output, grade = _attempt(tmp_path, GOOD_AGENT)
    assert output.trace_events == GOOD_TRACE
    assert grade.status == "pass", grade.reason
    assert (tmp_path / "report" / "attempt-1" / "checks" / "test.log").exists()


def test_an_agent_that_exits_non_zero_blocks_every_check(tmp_path: Path) -> None:
    agent = GOOD_AGENT + "sys.exit(2)\n"
    output, grade = _attempt(tmp_path, agent)
    assert output.exit_code == 2
    assert grade.status == "error" and grade.score == 0.0
    assert grade.reason == "run blocked: agent exited with code 2"
    assert {c.status for c in grade.checks} == {"blocked"}
    assert [c.id for c in grade.checks] == [
        "test",
        "changed_files",
        "forbidden_changed_files",
        "context_checks",
        "trace_events",
    ]
    record = json.loads((tmp_path / "report" / "attempt-1" / "agent-result.json").read_text())
    assert record["exitCode"] == 2


def test_a_file_name_that_is_not_utf8_is_scored_and_serialised(tmp_path: Path) -> None:
    """os.fsdecode gives such names lone surrogates, which no report can hold."""
    agent = GOOD_AGENT + 'open(os.path.join(os.fsencode(sys.argv[1]), b"bad\\xffname.txt"), "wb")\n'
    output, grade = _attempt(tmp_path, agent.replace("import json,", "import json, os,"))
    assert grade.status == "fail", grade.reason
    changed = json.loads(_check_json(grade, "changed_files"))
    # As PVYai reads `git status`: quoted, the byte in octal, its backslash a separator.
    assert changed["unexpectedFiles"] == ['"bad/377name.txt"']


def _check_json(grade: Grade, id: str) -> str:
    (check,) = [c for c in grade.checks if c.id == id]
    return check.model_dump_json()


def _verify_ctx(tmp_path: Path, expected: str) -> AttemptContext:
    spec = VerifySpec(given="g", files=(), candidate={"title": "t"}, expect_verdict=expected)  # type: ignore[arg-type]
    case = Case(
        id="verification/keep-it",
        suite="verification",
        name="keep-it",
        kind="verify",
        format="verification",
        source_path=tmp_path / "keep-it.json",
        source_line=1,
        spec=spec,
    )
    return AttemptContext(
        case=case,
        sandbox=None,  # type: ignore[arg-type]
        model=None,
        judge_model=None,
        timeout_s=1,
        attempt=0,
        artifacts_dir=tmp_path,
    )


def test_verdict_grader(tmp_path: Path) -> None:
    grader = VerdictGrader(options=RunOptions())
    ctx = _verify_ctx(tmp_path, "keep")
    grade = asyncio.run(grader.grade(ctx, AgentOutput(verdict="keep", verdict_reason="real")))
    assert (grade.status, grade.score) == ("pass", 1.0)
    assert grade.checks[0].kind == "verdict" and grade.checks[0].status == "pass"

    grade = asyncio.run(grader.grade(ctx, AgentOutput(verdict="reject", verdict_reason="fp")))
    assert (grade.status, grade.score) == ("fail", 0.0)
    assert grade.reason == "expected keep, got reject (agent: fp)"

    grade = asyncio.run(grader.grade(ctx, AgentOutput()))
    assert grade.status == "error" and "no verdict" in grade.reason


def test_names_are_quoted_as_git_status_prints_them(tmp_path: Path) -> None:
    """PVYai reads `git status --porcelain` without -z: what it sees of a name is git's
    quoted form, which assay computes itself (the sandbox never asks the agent's git)."""
    from assay.workspace.workspace_changes import porcelain_quoted

    names = [bytes([byte]) + b"x" for byte in range(1, 256) if byte != ord("/")]
    names += [b"a b", "caf\u00e9".encode(), b"p -> q", b"\xff\xfe"]
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    for name in names:
        with open(os.path.join(os.fsencode(repo), name), "wb") as handle:
            handle.write(b"x")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        check=True,
    ).stdout
    printed = {line[3:].decode("ascii") for line in status.split(b"\n") if line}
    assert printed == {porcelain_quoted(os.fsdecode(name)) for name in names}
