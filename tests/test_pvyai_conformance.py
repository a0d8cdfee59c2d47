"""PVYai parity: each rule of PVYai's scorer and validator as a case, in `score` and `run`.

A case is a fixture workspace, what the agent does to it, and the status and check fields
PVYai's `internal/agenteval` gives for it. `score` gets the workspace the way PVYai's
`eval run` does (fixture copied, `git add .`, one baseline commit, the agent run in it);
`run` builds its own sandbox and runs the same agent through `--agent-command`. Both
answers are read as PVYai's task report (`score --json`, `agent-eval-report.json`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from assay.agents.command import render_argv
from assay.cli import main

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "PVYai Eval",
    "GIT_AUTHOR_EMAIL": "pvyai-eval@example.invalid",
    "GIT_COMMITTER_NAME": "PVYai Eval",
    "GIT_COMMITTER_EMAIL": "pvyai-eval@example.invalid",
}

FIXTURE = {
    ".gitignore": "__pycache__/\n*.log\n",
    "app.py": "VALUE = 1\n",
    "cache.log": "ignored by the fixture's own rules: never committed\n",
    "docs/guide.md": "# guide\n",
    "go.mod": "module example\n",
    "old.txt": "content that moves\n",
}

EDIT_APP = "pathlib.Path('app.py').write_text('VALUE = 2\\n')\n"
COMMIT = (
    "subprocess.run(['git', '-c', 'user.name=a', '-c', 'user.email=a@example.invalid', "
    "'-c', 'commit.gpgsign=false', 'commit', '-qam', 'agent work'], check=True)\n"
)
PASSING = [sys.executable, "-c", "pass"]


@dataclass(frozen=True)
class Rule:
    """One PVYai rule: the task, what the agent does, and PVYai's verdict."""

    name: str
    agent: str
    """Python run in the workspace (json, os, pathlib, subprocess, sys are imported)."""
    status: str
    checks: dict[str, dict[str, Any]]
    """check id -> fields its PVYai result must have (a None value: the field is absent)."""
    task: dict[str, Any] = field(default_factory=dict)
    modes: tuple[str, ...] = ("score", "run")


RULES = [
    Rule(
        "solved",
        EDIT_APP,
        "pass",
        {
            "check": {"kind": "command", "status": "pass", "exitCode": 0},
            "changed_files": {
                "name": "Expected changed files",
                "kind": "changed_files",
                "status": "pass",
                "actualFiles": ["app.py"],
                "missingFiles": None,
                "unexpectedFiles": None,
            },
            "forbidden_changed_files": {"kind": "changed_files", "status": "pass"},
        },
    ),
    Rule(
        "any-other-change-fails",
        EDIT_APP + "pathlib.Path('notes.txt').write_text('scratch')\n",
        "fail",
        {"changed_files": {"status": "fail", "unexpectedFiles": ["notes.txt"]}},
    ),
    Rule(
        "expected-file-missing",
        "pass\n",
        "fail",
        {"changed_files": {"status": "fail", "missingFiles": ["app.py"], "actualFiles": None}},
    ),
    Rule(
        "files-the-commands-write-count",
        EDIT_APP,
        "fail",
        {
            "build": {"status": "pass"},
            "changed_files": {"status": "fail", "unexpectedFiles": ["out.txt"]},
        },
        task={
            "verificationCommands": [
                {
                    "id": "build",
                    "name": "Build",
                    "command": [sys.executable, "-c", "open('out.txt', 'w').write('built')"],
                }
            ]
        },
    ),
    Rule(
        "an-agent-that-commits-is-judged-from-the-baseline",
        EDIT_APP + COMMIT,
        "pass",
        {"changed_files": {"status": "pass", "actualFiles": ["app.py"]}},
    ),
    Rule(
        "ignored-new-files-are-no-changes",
        EDIT_APP + "pathlib.Path('debug.log').write_text('noise')\n",
        "pass",
        {"changed_files": {"status": "pass", "actualFiles": ["app.py"]}},
    ),
    Rule(
        "an-ignored-fixture-file-is-not-in-the-baseline",
        EDIT_APP + "pathlib.Path('cache.log').write_text('changed')\n",
        "pass",
        {"changed_files": {"status": "pass", "actualFiles": ["app.py"]}},
    ),
    Rule(
        "an-expected-file-that-is-ignored-is-missing",
        EDIT_APP + "pathlib.Path('trace.log').write_text('x')\n",
        "fail",
        {"changed_files": {"status": "fail", "missingFiles": ["trace.log"]}},
        task={"expectedChangedFiles": ["app.py", "trace.log"]},
    ),
    Rule(
        "a-changed-file-pvyai-cannot-name-is-no-change",
        EDIT_APP + "pathlib.Path('odd:name.txt').write_text('x')\n",
        "pass",
        {"changed_files": {"status": "pass", "actualFiles": ["app.py"]}},
    ),
    Rule(
        "an-unstaged-rename-counts-both-names",
        EDIT_APP + "os.rename('old.txt', 'new.txt')\n",
        "pass",
        {"changed_files": {"status": "pass", "actualFiles": ["app.py", "new.txt", "old.txt"]}},
        task={"expectedChangedFiles": ["./app.py", "new.txt", "d/../old.txt"]},
    ),
    Rule(
        "a-staged-rename-counts-the-new-name-in-git-status",
        EDIT_APP + "subprocess.run(['git', 'mv', 'old.txt', 'new.txt'], check=True)\n",
        "pass",
        {"changed_files": {"status": "pass", "actualFiles": ["app.py", "new.txt"]}},
        task={"expectedChangedFiles": ["app.py", "new.txt"]},
        modes=("score",),  # assay's sandbox never trusts the agent's index: both names there
    ),
    Rule(
        "a-command-that-cannot-start-is-an-error",
        EDIT_APP,
        "error",
        {
            "lint": {
                "status": "error",
                "exitCode": -1,
                "message": "command not found: no-such-linter",
            },
            "check": {"status": "pass"},
            "changed_files": {"status": "pass"},
        },
        task={
            "verificationCommands": [
                {"id": "lint", "name": "Lint", "command": ["no-such-linter", "run"]},
                {"id": "check", "name": "Check", "command": PASSING},
            ]
        },
    ),
    Rule(
        "a-failing-command-fails",
        EDIT_APP,
        "fail",
        {"test": {"status": "fail", "exitCode": 3, "message": None}},
        task={
            "verificationCommands": [
                {"id": "test", "name": "Test", "command": [sys.executable, "-c", "exit(3)"]}
            ]
        },
    ),
    Rule(
        "argv-elements-are-trimmed",
        EDIT_APP,
        "pass",
        {"check": {"status": "pass", "command": [f" {sys.executable} ", "-c", " pass "]}},
        task={
            "verificationCommands": [
                {"id": "check", "name": "Check", "command": [f" {sys.executable} ", "-c", " pass "]}
            ]
        },
    ),
    Rule(
        "a-forbidden-file-fails-both-file-checks",
        EDIT_APP + "pathlib.Path('go.mod').write_text('module changed\\n')\n",
        "fail",
        {
            "changed_files": {"status": "fail", "unexpectedFiles": ["go.mod"]},
            "forbidden_changed_files": {
                "status": "fail",
                "expectedFiles": ["go.mod"],
                "unexpectedFiles": ["go.mod"],
            },
        },
    ),
    Rule(
        "context-checks-see-what-the-agent-left",
        EDIT_APP + "pathlib.Path('debug.log').write_text('leak')\n",
        "fail",
        {
            "changed_files": {"status": "pass"},
            "context_checks": {
                "name": "Context quality checks",
                "kind": "context",
                "status": "fail",
                "expectedFiles": ["docs/guide.md"],
                "missingFiles": None,
                "unexpectedFiles": ["debug.log"],
            },
        },
        task={
            "contextChecks": {"requiredFiles": ["docs/guide.md"], "forbiddenFiles": ["debug.log"]}
        },
    ),
    Rule(
        "context-checks-come-before-the-commands",
        EDIT_APP + "pathlib.Path('scratch.txt').write_text('the agent left it')\n",
        "fail",
        {
            "tidy": {"status": "pass"},
            "changed_files": {"status": "pass", "actualFiles": ["app.py", "report.txt"]},
            "context_checks": {
                "status": "fail",
                "missingFiles": ["report.txt"],
                "unexpectedFiles": ["scratch.txt"],
            },
        },
        task={
            "verificationCommands": [
                {
                    "id": "tidy",
                    "name": "Tidy",
                    "command": [
                        sys.executable,
                        "-c",
                        "import os; os.remove('scratch.txt'); open('report.txt', 'w').close()",
                    ],
                }
            ],
            "expectedChangedFiles": ["app.py", "report.txt"],
            "contextChecks": {"requiredFiles": ["report.txt"], "forbiddenFiles": ["scratch.txt"]},
        },
    ),
    Rule(
        "a-context-symlink-counts-as-its-target-wherever-it-is",
        EDIT_APP + "os.symlink(sys.executable, 'tool')\n",
        "pass",
        {"context_checks": {"status": "pass", "missingFiles": None, "unexpectedFiles": None}},
        task={
            "expectedChangedFiles": ["app.py", "tool"],
            "contextChecks": {"requiredFiles": ["tool"]},
        },
    ),
    Rule(
        "names-git-quotes-are-read-as-pvyai-reads-git-status",
        EDIT_APP
        + "for name in ['a b.txt', 'caf\\u00e9.txt', 'p -> q', 'back\\\\slash']:\n"
        + "    pathlib.Path(name).write_text('x')\n",
        "fail",
        {
            "changed_files": {
                "status": "fail",
                "missingFiles": ["a b.txt"],
                "unexpectedFiles": ['"a b.txt"', '"back/slash"', '"caf/303/251.txt"', 'q"'],
            }
        },
        task={"expectedChangedFiles": ["app.py", "a b.txt"]},
    ),
    Rule(
        "blank-argv-elements-are-left-out",
        EDIT_APP,
        "pass",
        {"check": {"status": "pass", "command": [sys.executable, "", "-c", "pass", " "]}},
        task={
            "verificationCommands": [
                {"id": "check", "name": "Check", "command": [sys.executable, "", "-c", "pass", " "]}
            ]
        },
    ),
    Rule(
        "trace-events-come-from-the-first-mib-of-stdout",
        EDIT_APP
        + "print(json.dumps({'type': 'tool', 'name': 'early'}))\n"
        + "print('x' * (1 << 20))\n"
        + "print(json.dumps({'type': 'tool', 'name': 'late'}))\n",
        "fail",
        {
            "trace_events": {
                "status": "fail",
                "actualEvents": ["tool:early"],
                "missingEvents": ["tool:late"],
            }
        },
        task={"requiredTraceEvents": ["tool:early", "tool:late"]},
    ),
    Rule(
        "a-trace-line-go-cannot-decode-is-no-event",
        EDIT_APP
        + 'print(\'{"type": "tool", "name": "big", "n": 1e999}\')\n'
        + "print('\\x1c' + json.dumps({'type': 'tool', 'name': 'lead'}))\n"
        + "print(json.dumps({'type': 'tool\\x1f', 'name': ' kept '}))\n",
        "fail",
        {
            "trace_events": {
                "status": "fail",
                "actualEvents": ["tool\x1f:kept"],
                "missingEvents": ["tool:big", "tool:lead"],
            }
        },
        task={"requiredTraceEvents": ["tool:big", "tool:lead"]},
    ),
    Rule(
        "trace-events-are-trimmed-with-event-as-fallback",
        EDIT_APP
        + "print(json.dumps({'type': ' tool ', 'name': ' read_file '}))\n"
        + "print(json.dumps({'type': ' ', 'event': 'verify', 'name': 'check'}))\n"
        + "print(json.dumps({'type': 'step', 'name': 5}))\n"
        + 'print(\'{"type": "nan", "v": NaN}\')\n',
        "pass",
        {
            "trace_events": {
                "name": "Required agent trace events",
                "kind": "trace",
                "status": "pass",
                "expectedEvents": ["tool:read_file", "verify:check"],
                "actualEvents": ["step", "tool:read_file", "verify:check"],
                "missingEvents": None,
            }
        },
        task={"requiredTraceEvents": [" verify:check", "tool:read_file "]},
    ),
    Rule(
        "an-agent-that-exits-non-zero-blocks-every-check",
        EDIT_APP + "sys.exit(1)\n",
        "blocked",
        {
            "check": {"status": "blocked", "message": "run blocked: agent exited with code 1"},
            "changed_files": {"status": "blocked", "actualFiles": None},
            "forbidden_changed_files": {"status": "blocked"},
        },
        modes=("run",),  # `score` runs no agent
    ),
    Rule(
        "an-agent-that-crashes-blocks-every-check",
        EDIT_APP + "os.kill(os.getpid(), 9)\n",
        "blocked",
        {
            "changed_files": {"status": "blocked"},
            # Go's ExitCode() of a process a signal ended
            "check": {"status": "blocked", "message": "run blocked: agent exited with code -1"},
        },
        modes=("run",),
    ),
    Rule(
        "a-blocked-task-says-what-the-agent-said-on-stderr",
        EDIT_APP
        + "print(json.dumps({'type': 'tool', 'name': 'read_file'}))\n"
        + "sys.stderr.write('  no credits left\\n')\n"
        + "sys.exit(2)\n",
        "blocked",
        {
            "check": {"status": "blocked", "message": "run blocked: no credits left"},
            # PVYai reads no trace of a blocked task
            "trace_events": {"status": "blocked", "actualEvents": None},
        },
        task={"requiredTraceEvents": ["tool:read_file"]},
        modes=("run",),
    ),
]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _suite(root: Path, rule: Rule) -> Path:
    task = {
        "id": rule.name,
        "name": rule.name.replace("-", " "),
        "prompt": "Set VALUE to 2 in app.py.",
        "workspaceFixture": "fixtures/app",
        "verificationCommands": [{"id": "check", "name": "Check", "command": PASSING}],
        "expectedChangedFiles": ["app.py"],
        "forbiddenChangedFiles": ["go.mod"],
        **rule.task,
    }
    _write(root / "fixtures" / "app", FIXTURE)
    path = root / "suite.json"
    path.write_text(json.dumps({"id": "conformance", "name": "Conformance", "tasks": [task]}))
    (root / "agent.py").write_text(
        "import json, os, pathlib, subprocess, sys\n" + rule.agent, encoding="utf-8"
    )
    return path


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True)


def _score_report(tmp_path: Path, rule: Rule, capsys: pytest.CaptureFixture[str]) -> dict:
    """PVYai's eval run: the fixture materialised with one baseline commit, then scored."""
    suite = _suite(tmp_path, rule)
    workspace = tmp_path / "workspace"
    _write(workspace, FIXTURE)
    _git(workspace, "init", "-q")
    _git(workspace, "add", ".")
    _git(workspace, "commit", "-qm", "baseline")
    agent = subprocess.run(
        [sys.executable, str(tmp_path / "agent.py")],
        cwd=workspace,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    trace = tmp_path / "trace.jsonl"
    trace.write_text(agent.stdout)
    argv = ["score", "--suite", str(suite), "--task", rule.name, "--workspace", str(workspace)]
    code = main([*argv, "--trace", str(trace), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == (0 if report["status"] == "pass" else 1)
    return report


def _run_report(
    tmp_path: Path, rule: Rule, agent: list[str] | None = None, *extra: str
) -> tuple[dict, dict]:
    """PVYai's eval bench through `assay run`: its task report and assay's case result."""
    suite = _suite(tmp_path, rule)
    report_dir = tmp_path / "report"
    command = agent or [sys.executable, str(tmp_path / "agent.py")]
    argv = [
        "run",
        str(suite),
        "--agent-command",
        " ".join(command),
        "--report-dir",
        str(report_dir),
        "--work-root",
        str(tmp_path / "work"),
        "--pvyai-report",
        *extra,
    ]
    code = main(argv)
    benchmark = json.loads((report_dir / "agent-eval-report.json").read_text())
    (case,) = json.loads((report_dir / "report.json").read_text())["cases"]
    (task,) = benchmark["tasks"]
    assert code == (0 if task["report"]["status"] == "pass" else 1)
    assert benchmark["ok"] is (task["report"]["status"] == "pass")
    return task, case


def _assert_pvyai(report: dict, rule: Rule) -> None:
    assert report["status"] == rule.status, report
    assert report["ok"] is (rule.status == "pass")
    results = {result["id"]: result for result in report["results"]}
    for check_id, fields in rule.checks.items():
        result = results[check_id]
        for key, value in fields.items():
            assert result.get(key) == value, (check_id, key, result)


def _cases(mode: str) -> list[Any]:
    return [pytest.param(rule, id=rule.name) for rule in RULES if mode in rule.modes]


@pytest.mark.parametrize("rule", _cases("score"))
@pytest.mark.slow
def test_score_gives_pvyais_verdict(
    rule: Rule, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _score_report(tmp_path, rule, capsys)
    assert (report["contract"], report["suiteId"], report["taskId"]) == (
        "pvyai.agenteval.report.v1",
        "conformance",
        rule.name,
    )
    _assert_pvyai(report, rule)


@pytest.mark.parametrize("rule", _cases("run"))
@pytest.mark.slow
def test_run_gives_pvyais_verdict(rule: Rule, tmp_path: Path) -> None:
    task, case = _run_report(tmp_path, rule)
    _assert_pvyai(task["report"], rule)
    # assay's own report: a blocked or errored task is an error for the gate, never a pass.
    expected = {"pass": "pass", "fail": "fail"}.get(rule.status, "error")
    assert case["status"] == expected
    assert {c["id"]: c["status"] for c in case["checks"]} == {
        r["id"]: r["status"] for r in task["report"]["results"]
    }


def test_an_agent_that_cannot_start_blocks_every_check(tmp_path: Path) -> None:
    """A program that is there but cannot be started (its interpreter is missing). A program
    that is not there at all is the user's mistake, exit 2 before any sandbox (test_honest_run)."""
    rule = RULES[0]
    agent = tmp_path / "agent-with-a-missing-interpreter"
    agent.write_text("#!/no/such/interpreter\n")
    agent.chmod(0o755)
    task, case = _run_report(tmp_path, rule, agent=[str(agent)])
    report = task["report"]
    assert report["status"] == "blocked" and report["summary"]["blocked"] == 3
    assert {r["status"] for r in report["results"]} == {"blocked"}
    # Go's words for the start that failed, PVYai's error and blocked reason alike.
    why = f"fork/exec {agent}: no such file or directory"
    assert (task["agent"]["exitCode"], task["agent"]["error"]) == (-1, why)
    assert report["results"][0]["message"] == f"run blocked: {why}"
    assert case["status"] == "error"


def test_an_agent_a_relative_path_entry_finds_is_not_run_in_gos_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Go's `exec` refuses a bare name found through `.` (or another relative entry) on
    PATH; PVYai's agent error is Go's message as it is."""
    rule = RULES[0]
    (tmp_path / "bin").mkdir()
    agent = tmp_path / "bin" / "dot-agent"
    agent.write_text("#!/bin/sh\nexit 0\n")
    agent.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "bin:" + os.environ["PATH"])
    task, case = _run_report(tmp_path, rule, agent=["dot-agent"])
    why = 'exec: "dot-agent": cannot run executable found relative to current directory'
    assert (task["agent"]["exitCode"], task["agent"]["error"]) == (-1, why)
    assert task["report"]["status"] == "blocked"
    assert task["report"]["results"][0]["message"] == f"run blocked: {why}"
    assert case["status"] == "error"


@pytest.mark.slow
def test_an_agent_that_runs_out_of_time_blocks_every_check(tmp_path: Path) -> None:
    """PVYai: the task's deadline cancels the agent and the task is blocked; in assay
    `--timeout` is the agent's deadline (docs/pvyai.md, Timeouts)."""
    rule = Rule("slow", EDIT_APP + "import time; time.sleep(30)\n", "blocked", {})
    task, case = _run_report(tmp_path, rule, None, "--timeout", "1")
    assert task["report"]["status"] == "blocked"
    assert {r["status"] for r in task["report"]["results"]} == {"blocked"}
    assert task["agent"]["exitCode"] == -1 and "timed out after 1s" in task["agent"]["error"]
    assert case["status"] == "error" and {c["status"] for c in case["checks"]} == {"blocked"}


def test_a_crashed_agent_is_never_a_pass_even_when_its_work_is_done(tmp_path: Path) -> None:
    rule = next(r for r in RULES if r.name == "an-agent-that-crashes-blocks-every-check")
    task, case = _run_report(tmp_path, rule)
    assert task["agent"]["exitCode"] == -1  # Go's ExitCode() for a process a signal ended
    assert (task["report"]["status"], case["status"], case["score"]) == ("blocked", "error", None)


# --- validation: exactly what PVYai's LoadSuite accepts -----------------------------------


def _valid_suite() -> dict[str, Any]:
    return {
        "id": "suite",
        "name": "Suite",
        "tasks": [
            {
                "id": "task",
                "name": "Task",
                "prompt": "Do it",
                "workspaceFixture": "fixtures/app",
                "verificationCommands": [{"id": "test", "name": "Tests", "command": ["true"]}],
                "expectedChangedFiles": ["app.py"],
            }
        ],
    }


def _task(**fields: Any) -> Any:
    return lambda suite: suite["tasks"][0].update(fields)


VALIDATION = [
    # (name, change to a valid suite, PVYai accepts it)
    ("valid", lambda s: None, True),
    ("suite name is required", lambda s: s.pop("name"), False),
    ("suite name null is blank", lambda s: s.update(name=None), False),
    ("suite id is required", lambda s: s.update(id=" "), False),
    ("tasks must not be empty", lambda s: s.update(tasks=[]), False),
    ("task name is required", lambda s: s["tasks"][0].pop("name"), False),
    ("prompt is required", _task(prompt=""), False),
    ("verificationCommands must not be empty", _task(verificationCommands=[]), False),
    ("expectedChangedFiles must not be empty", _task(expectedChangedFiles=[]), False),
    (
        "expectedChangedFiles is required",
        lambda s: s["tasks"][0].pop("expectedChangedFiles"),
        False,
    ),
    ("a blank file", _task(expectedChangedFiles=["app.py", " "]), False),
    ("a null file is blank", _task(expectedChangedFiles=["app.py", None]), False),
    ("duplicates after normalising", _task(expectedChangedFiles=["a.txt", "./a.txt"]), False),
    ("duplicates via d/..", _task(forbiddenChangedFiles=["a.txt", "d/../a.txt"]), False),
    ("d/../a.txt alone", _task(expectedChangedFiles=["d/../a.txt"]), True),
    ("backslashes are separators", _task(expectedChangedFiles=["pkg\\app.py"]), True),
    ("a colon in a path", _task(expectedChangedFiles=["a:b.txt"]), False),
    ("a drive letter", _task(expectedChangedFiles=["C:\\tmp\\x.go"]), False),
    ("an absolute path", _task(expectedChangedFiles=["/tmp/x.go"]), False),
    ("a path above the workspace", _task(expectedChangedFiles=["../x.go"]), False),
    ("the workspace itself", _task(expectedChangedFiles=["."]), False),
    ("bad context path", _task(contextChecks={"requiredFiles": ["/etc/passwd"]}), False),
    ("duplicate trace events", _task(requiredTraceEvents=["tool:x", " tool:x"]), False),
    ("a blank trace event", _task(requiredTraceEvents=[" "]), False),
    ("any difficulty", _task(difficulty="extreme"), True),
    ("a slash in ids", lambda s: s.update(id="team/suite") or _task(id="a/b")(s), True),
    ("expected and forbidden", _task(forbiddenChangedFiles=["app.py"]), True),
    (
        "required and forbidden context",
        _task(contextChecks={"requiredFiles": ["a"], "forbiddenFiles": ["a"]}),
        True,
    ),
    (
        "a blank argv element beside a real one",
        _task(verificationCommands=[{"id": "t", "name": "T", "command": ["echo", ""]}]),
        True,
    ),
    (
        "only blank argv elements",
        _task(verificationCommands=[{"id": "t", "name": "T", "command": ["", " "]}]),
        False,
    ),
    ("null tags and description", _task(tags=None, description=None, difficulty=None), True),
    ("null contextChecks", _task(contextChecks=None), True),
    ("a number for a string", _task(id=7), False),
    (
        "duplicate task ids",
        lambda s: s["tasks"].append({**s["tasks"][0], "name": "Again"}),
        False,
    ),
    (
        "duplicate command ids",
        _task(
            verificationCommands=[
                {"id": "t", "name": "A", "command": ["true"]},
                {"id": "t", "name": "B", "command": ["true"]},
            ]
        ),
        False,
    ),
    ("an unknown key", _task(timeout=5), False),
    # Blank is what Go's strings.TrimSpace empties: it keeps U+001C-U+001F, Python's strip not.
    ("a \\x1f name is not blank", _task(name="\x1f"), True),
    ("a \\x1f trace event is not blank", _task(requiredTraceEvents=["\x1f"]), True),
    ("a \\x1f path is not blank", _task(expectedChangedFiles=["\x1f"]), True),
    (
        "a \\x1f argv element is not blank",
        _task(verificationCommands=[{"id": "t", "name": "T", "command": ["\x1f"]}]),
        True,
    ),
    ("a NEL prompt is blank", _task(prompt="\x85"), False),
    ("a fixture outside the suite's directory", _task(workspaceFixture="../elsewhere"), False),
]


def _check_suite(tmp_path: Path, text: str) -> tuple[int, str]:
    _write(tmp_path / "fixtures" / "app", {"app.py": "x = 1\n"})
    (tmp_path / "elsewhere").mkdir(exist_ok=True)
    (tmp_path / "suite.json").write_text(text)
    code = main(["validate", str(tmp_path / "suite.json")])
    return code, ""


@pytest.mark.parametrize(
    ("change", "accepted"), [pytest.param(c, a, id=n) for n, c, a in VALIDATION]
)
def test_validate_accepts_what_pvyai_accepts(
    tmp_path: Path, change: Any, accepted: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _valid_suite()
    change(suite)
    root = tmp_path / "root"
    code, _ = _check_suite(root, json.dumps(suite))
    err = capsys.readouterr().err
    assert code == (0 if accepted else 2), err


def test_keys_match_case_insensitively_as_in_go(tmp_path: Path) -> None:
    text = json.dumps(_valid_suite())
    for key in ("id", "tasks", "workspaceFixture", "verificationCommands", "command"):
        text = text.replace(f'"{key}"', f'"{key.upper()}"')
    text = text.replace('"name": "Suite"', '"NAME": "first", "name": "Suite"')  # last one wins
    code, _ = _check_suite(tmp_path, text)
    assert code == 0
    # The Kelvin sign folds to k as Go folds it: `tas\u212as` is `tasks`.
    code, _ = _check_suite(tmp_path, text.replace('"TASKS"', '"tas\u212as"'))
    assert code == 0


def test_trailing_json_after_the_suite_is_refused(tmp_path: Path) -> None:
    assert _check_suite(tmp_path, json.dumps(_valid_suite()) + "\n{}")[0] == 2


def _suite_bytes(description: bytes) -> bytes:
    """A valid suite whose task's description is this JSON value, byte for byte."""
    text = json.dumps(_valid_suite()).replace('"Task", ', '"Task", "description": @, ', 1)
    return text.encode().replace(b"@", description)


@pytest.mark.parametrize(
    ("raw", "accepted"),
    [
        pytest.param(_suite_bytes(b'"caf\xe9"'), True, id="bytes that are not UTF-8"),
        pytest.param(_suite_bytes(b'"\\ud800"'), True, id="half a surrogate pair"),
        pytest.param(_suite_bytes(b"NaN"), False, id="NaN"),
        pytest.param(b"\xef\xbb\xbf" + _suite_bytes(b'""'), False, id="a byte order mark"),
    ],
)
def test_suite_bytes_are_read_as_go_reads_them(
    tmp_path: Path, raw: bytes, accepted: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """Go reads invalid UTF-8 and a lone surrogate escape as U+FFFD, and refuses a BOM."""
    _write(tmp_path / "fixtures" / "app", {"app.py": "x = 1\n"})
    (tmp_path / "suite.json").write_bytes(raw)
    assert main(["validate", str(tmp_path / "suite.json")]) == (0 if accepted else 2)
    if raw.startswith(b"\xef\xbb\xbf"):
        err = capsys.readouterr().err
        assert "suite.json:1:1: malformed JSON: the file starts with a byte order mark" in err
        assert "remove it" in err


def _twice(task_keys: str = "", suite_keys: str = "") -> str:
    """A valid suite with `task_keys` / `suite_keys` written after the keys it has."""
    suite = _valid_suite()
    text = json.dumps({**suite, "tasks": ["@"]})
    task = json.dumps(suite["tasks"][0])[:-1] + task_keys + "}"
    return text[:-1].replace('["@"]', f"[{task}]") + suite_keys + "}"


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        pytest.param(_twice(suite_keys=', "id": null'), True, id="null keeps a string"),
        pytest.param(_twice(', "expectedChangedFiles": null'), False, id="null empties a list"),
        pytest.param(
            _twice(', "contextChecks": {"requiredFiles": ["/x"]}, "contextChecks": {}'),
            False,
            id="an object merges into the earlier one",
        ),
        pytest.param(
            _twice(', "verificationCommands": [{"id": "renamed"}]'),
            True,
            id="a list decodes into the earlier elements",
        ),
        pytest.param(_twice(', "description": 5, "description": "x"'), False, id="a wrong type"),
    ],
)
def test_a_key_given_twice_is_decoded_twice_as_go_does(
    tmp_path: Path, text: str, accepted: bool
) -> None:
    assert _check_suite(tmp_path, text)[0] == (0 if accepted else 2)


def test_a_longer_list_decodes_into_what_a_shorter_one_cut_off(tmp_path: Path) -> None:
    """Go's slice keeps its storage when a shorter list cuts it: the third list's nulls
    leave both elements as they were, the second one's `b` included."""
    from assay.suites import load_suites

    lists = ', "expectedChangedFiles": ["a", "b"], "expectedChangedFiles": ["c"]'
    _check_suite(tmp_path, _twice(lists + ', "expectedChangedFiles": [null, null]'))
    (case,) = load_suites([tmp_path / "suite.json"]).cases
    assert case.spec.expected_changed_files == ("b", "c")


def test_a_symlink_in_the_fixture_is_refused_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "fixtures" / "app", {"app.py": "x = 1\n"})
    (tmp_path / "fixtures" / "app" / "link.py").symlink_to("app.py")
    assert _check_suite(tmp_path, json.dumps(_valid_suite()))[0] == 2
    err = capsys.readouterr().err
    assert "link.py is a symlink; PVYai copies only regular files and directories" in err
    assert "PVYai only when it runs the task" in err


def test_unknown_placeholders_stay_as_written() -> None:
    values = {"workspace": "/w", "prompt": "{workspace}", "task_id": "t", "model": "m"}
    argv = ["agent", "{nope}", "--cwd={workspace}", "{prompt}", "{unclosed", "{{x}}"]
    # One pass, as PVYai's strings.Replacer: a value holding a placeholder is not rescanned.
    assert render_argv(argv, values) == [
        "agent",
        "{nope}",
        "--cwd=/w",
        "{workspace}",
        "{unclosed",
        "{x}",
    ]


def test_a_mistyped_placeholder_warns_and_is_passed_as_written(tmp_path: Path) -> None:
    from assay.suites.command import placeholder_typos

    assert placeholder_typos(["agent", "{workspce}", "{task_id}", "{nope}"]) == [
        "{workspce} is no placeholder and is passed as written; did you mean {workspace}?"
    ]
    rule = RULES[0]
    agent = [sys.executable, str(tmp_path / "agent.py"), "{workspce}"]
    task, _ = _run_report(tmp_path, rule, agent)
    assert task["report"]["status"] == "pass"
