"""PVYai task parity, second round: what PVYai's benchmark does around the checks.

Timeouts (the agent's alone), tasks one at a time, fixtures PVYai cannot set up a
workspace from, the workspace repository it makes, repositories inside the workspace,
`.git` in other cases, `workspacePath`, and the context check's messages. Real git and
real processes throughout: where PVYai's behaviour is git's, git itself is the oracle.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.options import RunOptions
from assay.runner.kinds import KINDS
from assay.runner.settings import resolve_settings, tasks_one_at_a_time
from assay.suites.case import TaskSpec, VerificationCommand
from assay.suites.config import AssayConfig
from assay.upstream.go.fmt import go_abs, go_quote
from assay.workspace import Sandbox, build_sandbox
from assay.workspace.task_setup import git_refuses
from tests.test_sandbox_changes import changes_of
from tests.test_sandbox_helpers import git, make_case, write

AGENT = "import os, pathlib, subprocess, sys, time\nexec(sys.argv[1])\n"
"""The agent: runs its prompt as Python in the workspace."""
WRITE_A = "pathlib.Path('a.txt').write_text('changed\\n')"
PASS = [sys.executable, "-c", "pass"]
GIT_SETUP_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Zero Eval",
    "GIT_AUTHOR_EMAIL": "zero-eval@example.invalid",
    "GIT_COMMITTER_NAME": "Zero Eval",
    "GIT_COMMITTER_EMAIL": "zero-eval@example.invalid",
}


def _task(task_id: str, prompt: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": task_id,
        "name": task_id,
        "prompt": prompt,
        "workspaceFixture": "fx",
        "verificationCommands": [{"id": "check", "name": "Check", "command": PASS}],
        "expectedChangedFiles": ["a.txt"],
        **fields,
    }


def _suite(root: Path, tasks: list[dict[str, Any]], fixtures: dict[str, dict[str, str]]) -> Path:
    for name, files in fixtures.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        for rel, text in files.items():
            write(root / name / rel, text)
    (root / "agent.py").write_text(AGENT)
    path = root / "suite.json"
    path.write_text(json.dumps({"id": "parity", "name": "Parity", "tasks": tasks}))
    return path


def _run(root: Path, suite: Path, *extra: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """`assay run --pvyai-report`: the exit code, agent-eval-report.json, report.json."""
    report_dir = root / "report"
    code = main(
        [
            "run",
            str(suite),
            "--agent-command",
            f"{sys.executable} {root / 'agent.py'} {{prompt}}",
            "--report-dir",
            str(report_dir),
            "--work-root",
            str(root / "work"),
            "--pvyai-report",
            *extra,
        ]
    )
    benchmark = json.loads((report_dir / "agent-eval-report.json").read_text())
    report = json.loads((report_dir / "report.json").read_text())
    return code, benchmark, report


def _in_work_root(workspace: str, root: Path) -> bool:
    """Whether `workspace` is a sandbox's repository under the run's work root."""
    path = Path(workspace)
    return path.name == "repo" and path.is_relative_to(root / "work")


# --- 1. --timeout bounds a task's agent; its checks keep their own limit ---------------------


@pytest.mark.slow
def test_an_agent_that_runs_out_of_time_blocks_every_check_and_keeps_its_workspace(
    tmp_path: Path,
) -> None:
    prompt = "print('started', flush=True)\ntime.sleep(30)"
    suite = _suite(tmp_path, [_task("slow", prompt)], {"fx": {"a.txt": "a\n"}})
    code, benchmark, report = _run(tmp_path, suite, "--timeout", "1")
    (task,) = benchmark["tasks"]
    results = task["report"]["results"]
    assert code == 1 and task["report"]["status"] == "blocked"
    assert [(r["id"], r["status"]) for r in results] == [
        ("check", "blocked"),
        ("changed_files", "blocked"),
    ]
    assert all(r["message"].startswith("run blocked: agent timed out after 1s") for r in results)
    assert task["report"]["summary"] == {
        "total": 2,
        "passed": 0,
        "failed": 0,
        "blocked": 2,
        "errors": 0,
    }
    assert "error" not in task["report"]
    agent = task["agent"]
    assert agent["exitCode"] == -1 and agent["stdout"] == "started\n"
    assert "timed out after 1s" in agent["error"]
    # PVYai names the workspace as soon as it is set up, whatever the agent then does.
    assert _in_work_root(task["workspacePath"], tmp_path)
    assert task["fixturePath"] == str(tmp_path / "fx")
    (case,) = report["cases"]
    assert case["status"] == "error" and {c["status"] for c in case["checks"]} == {"blocked"}


def test_an_agent_that_cannot_start_still_names_its_workspace(tmp_path: Path) -> None:
    suite = _suite(tmp_path, [_task("t", WRITE_A)], {"fx": {"a.txt": "a\n"}})
    broken = tmp_path / "agent-with-a-missing-interpreter"
    broken.write_text("#!/no/such/interpreter\n")
    broken.chmod(0o755)
    report_dir = tmp_path / "report"
    argv = ["run", str(suite), "--agent-command", str(broken), "--report-dir", str(report_dir)]
    assert main([*argv, "--work-root", str(tmp_path / "work"), "--pvyai-report"]) == 1
    (task,) = json.loads((report_dir / "agent-eval-report.json").read_text())["tasks"]
    assert task["report"]["status"] == "blocked" and task["agent"]["exitCode"] == -1
    assert _in_work_root(task["workspacePath"], tmp_path)


@pytest.mark.slow
def test_the_checks_run_past_the_agents_timeout_under_their_own_limit(tmp_path: Path) -> None:
    slow_check = {
        "id": "slow",
        "name": "Slow",
        "command": [*PASS[:2], "import time; time.sleep(2)"],
    }
    task = _task("t", WRITE_A, verificationCommands=[slow_check])
    suite = _suite(tmp_path, [task], {"fx": {"a.txt": "a\n"}})
    code, benchmark, report = _run(tmp_path, suite, "--timeout", "1")
    (result,) = benchmark["tasks"]
    assert code == 0 and result["report"]["status"] == "pass"
    assert result["report"]["results"][0] == {
        "id": "slow",
        "name": "Slow",
        "kind": "command",
        "status": "pass",
        "command": slow_check["command"],
        "exitCode": 0,
    }
    assert report["cases"][0]["status"] == "pass"


def test_only_a_tasks_grading_is_free_of_the_attempt_timeout() -> None:
    """Review, rubric and verify cases keep one deadline over agent and judge
    (tests/test_honest_run.py times a judge out); a task's checks have their own."""
    assert {name: kind.timed_grading for name, kind in KINDS.items()} == {
        "review": True,
        "verify": True,
        "rubric": True,
        "task": False,
    }


# --- 2. tasks one at a time, unless the user chose a concurrency ------------------------------

_TIMED = (
    "print(time.time(), flush=True)\ntime.sleep(1.2)\n"
    + WRITE_A
    + "\nprint(time.time(), flush=True)"
)
_BIND = [
    sys.executable,
    "-c",
    "import socket, time\ns = socket.socket()\ns.bind(('127.0.0.1', 18555))\ns.listen()\n"
    "time.sleep(0.5)",
]


def _timed_suite(root: Path) -> Path:
    check = [{"id": "bind", "name": "Binds a fixed port", "command": _BIND}]
    tasks = [_task(f"t{n}", _TIMED, verificationCommands=check) for n in range(3)]
    return _suite(root, tasks, {"fx": {"a.txt": "a\n"}})


def _spans(benchmark: dict[str, Any]) -> list[tuple[float, float]]:
    spans = []
    for task in benchmark["tasks"]:
        start, end = (float(line) for line in task["agent"]["stdout"].split())
        spans.append((start, end))
    return sorted(spans)


@pytest.mark.slow
def test_task_cases_run_one_at_a_time_and_the_run_says_so(tmp_path: Path) -> None:
    code, benchmark, report = _run(tmp_path, _timed_suite(tmp_path))
    spans = _spans(benchmark)
    assert all(end <= next_start for (_, end), (next_start, _) in pairwise(spans))
    # So three tasks binding the same port all pass, as in PVYai.
    assert code == 0 and benchmark["summary"]["passedTasks"] == 3
    notes = report["run"]["notes"]
    assert [note for note in notes if "one at a time" in note] == [
        "task cases run one at a time, as PVYai runs them (a task that binds a fixed port or "
        "shares /tmp paths or caches would fail beside another); other cases still run up to "
        "8 at a time. Set --concurrency (or ASSAY_CONCURRENCY, or [tool.assay] concurrency) "
        "to run tasks side by side"
    ]


@pytest.mark.parametrize("how", ["option", "environment"])
@pytest.mark.slow
def test_a_concurrency_the_user_chose_applies_to_tasks(
    tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _timed_suite(tmp_path)
    extra = ("--concurrency", "3") if how == "option" else ()
    if how == "environment":
        monkeypatch.setenv("ASSAY_CONCURRENCY", "3")
    code, benchmark, report = _run(tmp_path, suite, *extra)
    spans = _spans(benchmark)
    assert max(start for start, _ in spans) < min(end for _, end in spans)  # side by side
    assert not [note for note in report["run"]["notes"] if "one at a time" in note]


def test_who_chose_the_concurrency_decides_for_tasks(tmp_path: Path) -> None:
    def one_at_a_time(options: RunOptions, environ: dict[str, str], config: Any = None) -> bool:
        return tasks_one_at_a_time(resolve_settings(options, config=config, environ=environ))

    assert one_at_a_time(RunOptions(), {})
    assert not one_at_a_time(RunOptions(concurrency=8), {})
    assert not one_at_a_time(RunOptions(), {"ASSAY_CONCURRENCY": "4"})
    configured = AssayConfig(path=tmp_path / "pyproject.toml", concurrency=4)
    assert not one_at_a_time(RunOptions(), {}, configured)
    assert not one_at_a_time(RunOptions(concurrency=1), {})  # one at a time anyway: no note


# --- 3. fixtures PVYai's materialiser fails on -------------------------------------------------


def _pvyai_materialises(fixture: Path, workspace: Path) -> str:
    """PVYai's materialiser, for real: the copy (leaving out directories named exactly
    `.git`), then its git commands; what it reports when one fails, else ""."""
    shutil.copytree(
        fixture,
        workspace,
        ignore=lambda d, names: [n for n in names if n == ".git" and os.path.isdir(f"{d}/{n}")],
    )
    steps = [
        ["init"],
        ["config", "user.name", "PVYai Eval"],
        ["config", "user.email", "pvyai-eval@example.invalid"],
        ["add", "."],
        ["commit", "-m", "baseline"],
    ]
    env = {**os.environ, **GIT_SETUP_ENV}
    for step in steps:
        done = subprocess.run(  # one buffer for both streams, as PVYai's
            ["git", *step],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        )
        if done.returncode:
            return f"git {' '.join(step)}: exit status {done.returncode}: {done.stdout.strip()}"
    return ""


UNSETTABLE = {
    "empty": {},
    "only-directories": {"a/b/": "", "c/": ""},
    "ignores-everything": {".gitignore": "*\n", "data.txt": "data\n"},
    "dot-GIT": {"a.txt": "a\n", ".GIT/config": "[core]\n"},
    "ntfs-spelling": {"a.txt": "a\n", "src/GIT~1": "x\n"},
    "dot-git-dot": {"a.txt": "a\n", "d/.git./x": "x\n"},
}


def _make_fixture(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for rel, text in files.items():
        if rel.endswith("/"):
            (root / rel).mkdir(parents=True)
        else:
            write(root / rel, text)
    return root


@pytest.mark.parametrize("name", list(UNSETTABLE))
def test_a_fixture_pvyai_cannot_set_up_is_an_error_in_pvyais_shape(
    name: str, tmp_path: Path
) -> None:
    fixture = _make_fixture(tmp_path / "fx", UNSETTABLE[name])
    git_error = _pvyai_materialises(fixture, tmp_path / "pvyai-workspace")
    assert git_error, "PVYai's own steps fail on this fixture"

    suite = _suite(tmp_path, [_task(name, "pathlib.Path('ran').write_text('')")], {})
    code, benchmark, report = _run(tmp_path, suite)
    (task,) = benchmark["tasks"]
    message = f"workspace materialization failed: {git_error}"
    assert task == {
        "taskId": name,
        "workspacePath": "",
        "fixturePath": "",
        "agent": {"exitCode": -1, "error": git_error},
        "report": {
            "contract": "pvyai.agenteval.report.v1",
            "suiteId": "parity",
            "taskId": name,
            "status": "error",
            "ok": False,
            "summary": {"total": 1, "passed": 0, "failed": 0, "blocked": 0, "errors": 1},
            "changedFiles": None,
            "results": [
                {
                    "id": "benchmark",
                    "name": "Benchmark harness",
                    "kind": "changed_files",
                    "status": "error",
                    "message": message,
                }
            ],
            "error": message,
        },
    }
    assert benchmark["summary"]["errorTasks"] == 1 and code == 1
    (case,) = report["cases"]
    assert case["status"] == "error" and case["checks"] == []
    assert case["reason"].startswith("PVYai cannot set up this task: ")
    assert "\n" not in case["reason"]
    assert not list((tmp_path / "work").rglob("ran")), "no agent ran"


def test_a_gitfile_at_the_fixtures_top_fails_pvyais_git_init_and_assays_build(
    tmp_path: Path,
) -> None:
    fixture = _make_fixture(tmp_path / "fx", {"a.txt": "a\n", ".git": "gitdir: elsewhere\n"})
    assert _pvyai_materialises(fixture, tmp_path / "pvyai-workspace").startswith("git init: ")
    suite = _suite(tmp_path, [_task("t", WRITE_A)], {})
    code, benchmark, report = _run(tmp_path, suite)
    (task,) = benchmark["tasks"]
    assert code == 1 and task["report"]["results"][0]["id"] == "benchmark"
    assert "`git init` reads as a link to another repository" in report["cases"][0]["reason"]


def test_names_close_to_dot_git_that_git_stores_are_committed(tmp_path: Path) -> None:
    files = {"a.txt": "a\n", ".gitx": "x\n", "..git": "x\n", "git~12": "x\n", ".git~1": "x\n"}
    fixture = _make_fixture(tmp_path / "fx", files)
    assert _pvyai_materialises(fixture, tmp_path / "pvyai-workspace") == ""
    sandbox = _task_sandbox(tmp_path, fixture)
    assert sandbox.baseline is not None and set(sandbox.baseline.files) == set(files)


@pytest.mark.parametrize(
    "path",
    [
        ".GIT/config", "a/.Git/x", "b/.GIT", "git~1/x", "GIT~1", ".git./x", ".git /x",
        ".git:x", "x/.git.. ./y", "git~1 .", "a\\.git", "a\\git~1", ".gitx", "a\\.gitx",
        ".gitmodules", "git~12", "..git", ".git~1", "gitx", "a/b.git",
    ],
)  # fmt: skip
def test_git_refuses_what_git_add_refuses(path: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(repo / path, "x\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env={**os.environ, **GIT_SETUP_ENV})
    added = subprocess.run(
        ["git", "add", "."], cwd=repo, capture_output=True, env={**os.environ, **GIT_SETUP_ENV}
    )
    assert git_refuses(path) is (added.returncode != 0)


# --- 4, 5. repositories inside the workspace; only `.git` itself is left out ----------------


def _task_sandbox(tmp_path: Path, fixture: Path) -> Sandbox:
    spec = TaskSpec(
        prompt="p", workspace=fixture, commands=(VerificationCommand("c", "c", ("true",)),)
    )
    parent = tmp_path / "work"
    parent.mkdir(exist_ok=True)
    return build_sandbox(make_case("task", spec), parent=parent)


def _sh(repo: Path, script: str) -> None:
    subprocess.run(["sh", "-c", script], cwd=repo, check=True, env={**os.environ, **GIT_SETUP_ENV})


WORK_TREE_CASES = {
    "a repository made in the workspace": ("git init -q sub && echo 1 > sub/x", ("sub/",)),
    "an empty one": ("git init -q sub", ("sub/",)),
    "one a gitfile names": (
        'git init -q --separate-git-dir="$PWD/.git/other" sub2 && echo 1 > sub2/f',
        ("sub2/",),
    ),
    "a gitfile naming nothing": (
        "mkdir s2 && echo 'gitdir: /nonexistent' > s2/.git && echo 1 > s2/y",
        ("s2/y",),
    ),
    "an empty .git directory": ("mkdir -p n/.git && echo 1 > n/y", ("n/y",)),
    "a HEAD that is no ref": (
        "mkdir -p n/.git/objects n/.git/refs && echo junk > n/.git/HEAD && echo 1 > n/f",
        ("n/f",),
    ),
    "a tracked directory that gained a .git": (
        "git init -q dir && echo 1 > dir/new",
        ("dir/new",),
    ),
    "an ignored one": ("git init -q build/r && echo 1 > build/r/f", ()),
    "one beside an ignored file": ("git init -q deep/r && echo 1 > x.log", ("deep/r/",)),
    ".GIT at the top": ("echo 1 > .GIT", (".GIT",)),
    ".Git below": ("mkdir -p sub/.Git && echo 1 > sub/.Git/x", ("sub/.Git/x",)),
}


@pytest.mark.parametrize("case", list(WORK_TREE_CASES))
def test_the_work_tree_is_read_as_git_status_reads_it(case: str, tmp_path: Path) -> None:
    fixture = _make_fixture(
        tmp_path / "fx", {"a.txt": "a\n", "dir/c.txt": "c\n", ".gitignore": "build/\n*.log\n"}
    )
    sandbox = _task_sandbox(tmp_path, fixture)
    script, expected = WORK_TREE_CASES[case]
    _sh(sandbox.path, script)
    assert sandbox.baseline is not None
    ours = changes_of(sandbox.path, sandbox.baseline)
    assert ours.porcelain == expected
    assert changes_of(sandbox.path, sandbox.base_commit).porcelain == expected  # git's


@pytest.mark.slow
def test_a_nested_repository_is_one_changed_file_in_pvyais_report(tmp_path: Path) -> None:
    prompt = WRITE_A + "\nsubprocess.run(['git', 'init', '-q', 'vendor/lib'], check=True)"
    prompt += "\npathlib.Path('vendor/lib/x.py').write_text('x')"
    suite = _suite(tmp_path, [_task("t", prompt)], {"fx": {"a.txt": "a\n"}})
    _, benchmark, _ = _run(tmp_path, suite)
    (task,) = benchmark["tasks"]
    assert task["report"]["changedFiles"] == ["a.txt", "vendor/lib"]


# --- 6. the workspace repository PVYai makes --------------------------------------------------


def test_the_workspace_repository_is_the_one_pvyai_makes(tmp_path: Path) -> None:
    sandbox = _task_sandbox(tmp_path, _make_fixture(tmp_path / "fx", {"a.txt": "a\n"}))
    repo = sandbox.path
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/master"
    assert git(repo, "config", "--local", "user.name").strip() == "PVYai Eval"
    assert git(repo, "config", "--local", "user.email").strip() == "pvyai-eval@example.invalid"
    log = git(repo, "log", "--format=%an|%ae|%cn|%ce|%s").splitlines()
    assert log == [
        "Zero Eval|zero-eval@example.invalid|Zero Eval|zero-eval@example.invalid|baseline"
    ]
    assert git(repo, "status", "--porcelain").strip() == ""


def test_an_agents_own_commit_works_with_no_identity_anywhere_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("AUTHOR", "COMMITTER"):
        for part in ("NAME", "EMAIL"):
            monkeypatch.delenv(f"GIT_{name}_{part}", raising=False)
    monkeypatch.delenv("EMAIL", raising=False)
    prompt = WRITE_A + "\nsubprocess.run(['git', 'commit', '-qam', 'work'], check=True)"
    log = {"id": "log", "name": "Log", "command": ["git", "log", "--format=%an <%ae> %s"]}
    suite = _suite(
        tmp_path, [_task("t", prompt, verificationCommands=[log])], {"fx": {"a.txt": "a\n"}}
    )
    code, benchmark, _ = _run(tmp_path, suite)
    (task,) = benchmark["tasks"]
    assert task["agent"]["exitCode"] == 0, task["agent"]
    assert task["report"]["results"][0]["stdout"] == (
        "PVYai Eval <pvyai-eval@example.invalid> work\n"
        "Zero Eval <zero-eval@example.invalid> baseline\n"
    )
    # What the agent committed is judged from the baseline, as documented.
    assert task["report"]["status"] == "pass" and code == 0


# --- 8. the context check's messages are PVYai's ---------------------------------------------


@pytest.mark.parametrize(
    ("required", "quoted"),
    [("café/x", '"café/x"'), ("\x1f/x", '"\\x1f/x"'), ("a\u00a0b/x", '"a\\u00a0b/x"')],
)
@pytest.mark.slow
def test_a_context_path_that_cannot_be_looked_up_is_reported_as_pvyai_words_it(
    required: str,
    quoted: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    task = _task("t", "-", contextChecks={"requiredFiles": [required]})
    suite = _suite(tmp_path, [task], {"fx": {"a.txt": "a\n"}})
    workspace = tmp_path / "ws"
    write(workspace / "a.txt", "a\n")
    write(workspace / required.split("/")[0], "a file, not a directory\n")
    _sh(workspace, "git init -q && git add a.txt && git commit -qm baseline")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    argv = ["score", "--suite", str(suite), "--task", "t", "--workspace", "ws", "--json"]
    main(argv)
    report = json.loads(capsys.readouterr().out)
    (context,) = [r for r in report["results"] if r["id"] == "context_checks"]
    assert context["status"] == "error"
    assert context["message"] == (
        f"stat workspace path {quoted}: stat {tmp_path}/ws/{required}: not a directory"
    )


@pytest.mark.parametrize(
    ("text", "quoted"),
    [  # what Go's strconv.Quote gives for each
        ("café😀", '"café😀"'),
        ('say "hi" \\', '"say \\"hi\\" \\\\"'),
        ("\x00\x07\x08\t\n\v\f\r\x1b\x7f", '"\\x00\\a\\b\\t\\n\\v\\f\\r\\x1b\\x7f"'),
        ("\u00a0\u00ad\u200b\u2028\ufeff", '"\\u00a0\\u00ad\\u200b\\u2028\\ufeff"'),
        ("\U000e0001\U0010ffff", '"\\U000e0001\\U0010ffff"'),
        (os.fsdecode(b"caf\xe9"), '"caf\\xe9"'),
        ("\ufffd", '"\ufffd"'),
    ],
)
def test_go_quote_is_strconv_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


def test_go_abs_takes_pwd_when_it_names_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.chdir(real)
    monkeypatch.setenv("PWD", str(tmp_path / "link"))
    assert go_abs("ws/../ws/./x") == f"{tmp_path}/link/ws/x"
    monkeypatch.setenv("PWD", str(tmp_path))  # names another directory: not taken
    assert go_abs("x") == f"{os.getcwd()}/x"
    assert go_abs("//abs//y/") == "/abs/y"
