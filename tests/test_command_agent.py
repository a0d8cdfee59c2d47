"""The command runtime with real subprocesses: agents are small Python scripts."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from assay._util.secrets import redact, scrubbed_environ
from assay.agents.command import CommandAgent, render_argv
from assay.agents.trace import StdoutReader, read_trace_file, trace_key
from assay.errors import AgentError, ConfigError
from assay.isolation.bwrap import Sandboxing, resolve_sandboxing
from assay.isolation.processes import LaunchError, run_command
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, ReviewSpec, RubricSpec, TaskSpec, VerifySpec
from assay.workspace import Sandbox
from tests.requires import bwrap_missing_reason

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def _sandbox(tmp_path: Path, kind: str, diff: str = "") -> Sandbox:
    """A real git work tree in the sandbox layout (`<private>/repo` beside `scratch`)."""
    private = tmp_path / "sandbox"
    repo = private / "repo"
    repo.mkdir(parents=True)
    (private / "scratch").mkdir()
    (repo / "app.py").write_text("print('hi')\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    head = _git(repo, "rev-parse", "HEAD")
    return Sandbox(
        path=repo,
        kind=kind,  # type: ignore[arg-type]
        base_commit=head,
        head_commit=head,
        diff=diff,
        changed_files=(),
        repository=None,
    )


def _case(kind: str, tmp_path: Path) -> Case:
    spec: Any
    if kind == "task":
        spec = TaskSpec(prompt="Fix the bug in app.py", workspace=tmp_path, commands=())
    elif kind == "review":
        spec = ReviewSpec(given="an SQL injection in the handler", files=())
    elif kind == "verify":
        spec = VerifySpec(
            given="verifier keeps a real finding",
            files=(),
            candidate={"title": "SQL injection", "severity": "high"},
            expect_verdict="keep",
        )
    else:
        spec = RubricSpec(rubric="must flag the key", diff=tmp_path / "input.diff", base=None)
    return Case(
        id=f"suite/{kind}-case",
        suite="suite",
        name=f"The {kind} case",
        kind=kind,  # type: ignore[arg-type]
        format="task-suite",
        source_path=tmp_path / "suite.json",
        source_line=3,
        spec=spec,
    )


def _agent(tmp_path: Path, body: str, name: str = "agent.py") -> Path:
    script = tmp_path / name
    script.write_text("import json, os, sys, pathlib\n" + textwrap.dedent(body))
    return script


def _run(
    tmp_path: Path,
    kind: str,
    body: str,
    *,
    extra_args: tuple[str, ...] = (),
    timeout_s: float = 30.0,
    env: dict[str, str] | None = None,
    model: str | None = "test/model",
    diff: str = "diff --git a/app.py b/app.py\n",
    sandboxing: Sandboxing | None = None,
) -> tuple[AgentOutput, AttemptContext]:
    script = _agent(tmp_path, body)
    ctx = AttemptContext(
        case=_case(kind, tmp_path),
        sandbox=_sandbox(tmp_path, kind, diff=diff if kind != "task" else ""),
        model=model,
        judge_model=None,
        timeout_s=timeout_s,
        attempt=0,
        artifacts_dir=tmp_path / "artifacts",
        agent_command=(sys.executable, str(script), *extra_args),
        env=env or {},
    )
    agent = CommandAgent(options=RunOptions(sandboxing=sandboxing))
    return asyncio.run(agent.run(ctx)), ctx


# --- placeholders and environment -------------------------------------------------------


def test_placeholders_and_environment_reach_the_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-agent-needs-this-key")
    monkeypatch.setenv("CALLER_SETTING", "kept")
    body = """
        names = ["ASSAY_WORKSPACE", "ASSAY_PROMPT", "ASSAY_TASK_ID", "ASSAY_CASE_ID",
                 "ASSAY_MODEL", "ASSAY_DIFF_FILE", "ASSAY_FINDINGS_FILE", "ASSAY_CASE_KIND",
                 "ASSAY_PROMPT_FILE", "TMPDIR", "ANTHROPIC_API_KEY", "CALLER_SETTING", "EXTRA"]
        seen = {"argv": sys.argv[1:], "cwd": os.getcwd(),
                "env": {n: os.environ.get(n) for n in names}}
        pathlib.Path("seen.json").write_text(json.dumps(seen))
    """
    args = ("{workspace}", "{prompt}", "{task_id}", "{case_id}", "{model}", "{diff_file}")
    output, ctx = _run(
        tmp_path, "task", body, extra_args=(*args, "lit{{x}}", "--m={model}"), env={"EXTRA": "1"}
    )
    workspace = ctx.sandbox.path
    seen = json.loads((workspace / "seen.json").read_text())
    diff_file = str(ctx.sandbox.scratch / "diff.patch")
    assert seen["argv"] == [
        str(workspace),
        "Fix the bug in app.py",
        "task-case",
        "suite/task-case",
        "test/model",
        diff_file,
        "lit{x}",
        "--m=test/model",
    ]
    assert os.path.realpath(seen["cwd"]) == os.path.realpath(workspace)
    env = seen["env"]
    assert env["ASSAY_WORKSPACE"] == str(workspace)
    assert env["ASSAY_PROMPT"] == "Fix the bug in app.py"
    assert env["ASSAY_TASK_ID"] == "task-case"
    assert env["ASSAY_CASE_ID"] == "suite/task-case"
    assert env["ASSAY_MODEL"] == "test/model"
    assert env["ASSAY_DIFF_FILE"] == diff_file
    assert env["ASSAY_CASE_KIND"] == "task"
    assert Path(env["ASSAY_FINDINGS_FILE"]).parent == ctx.sandbox.scratch
    assert Path(env["ASSAY_PROMPT_FILE"]).read_text() == "Fix the bug in app.py"
    assert Path(env["TMPDIR"]).parent == ctx.sandbox.scratch
    # The agent under test is a real CLI: it needs its key and the caller's environment.
    assert env["ANTHROPIC_API_KEY"] == "sk-agent-needs-this-key"
    assert env["CALLER_SETTING"] == "kept"
    assert env["EXTRA"] == "1"
    assert output.exit_code == 0
    assert output.stdout_path is not None and output.stdout_path.parent == ctx.artifacts_dir


def test_the_agent_never_sees_what_belongs_to_the_ci_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = {
        "GITHUB_TOKEN": "ghs_job-token-value",
        "GH_TOKEN": "ghp_caller-token-value",
        "INPUT_GITHUB-TOKEN": "ghs_action-input-token",
        "INPUT_ANTHROPIC-API-KEY": "sk-ant-as-given-to-the-action",
        "ACTIONS_RUNTIME_TOKEN": "runtime-token-value",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-request-token",
        "GITHUB_ENV": str(tmp_path / "github_env"),
        "GITHUB_PATH": str(tmp_path / "github_path"),
        "GITHUB_OUTPUT": str(tmp_path / "github_output"),
    }
    kept = {"ANTHROPIC_API_KEY": "sk-ant-the-agent-needs", "GITHUB_REPOSITORY": "o/r"}
    for name, value in {**job, **kept}.items():
        monkeypatch.setenv(name, value)
    body = """
        pathlib.Path("env.json").write_text(json.dumps(dict(os.environ)))
    """
    _, ctx = _run(tmp_path, "task", body)
    seen = json.loads((ctx.sandbox.path / "env.json").read_text())
    assert not set(job) & set(seen)
    assert {name: seen.get(name) for name in kept} == kept


def test_prompts_per_kind_carry_the_case(tmp_path: Path) -> None:
    body = """
        pathlib.Path(os.environ["ASSAY_FINDINGS_FILE"]).write_text(
            json.dumps({"findings": [], "verdict": "keep"}))
        pathlib.Path(os.environ["TMPDIR"], "prompt").write_text(sys.argv[1])
        print("a review")
    """
    prompts = {}
    for kind in ("review", "verify", "rubric"):
        root = tmp_path / kind
        root.mkdir()
        _, ctx = _run(root, kind, body, extra_args=("{prompt}",), diff="+API_KEY = 'x'\n")
        prompts[kind] = (ctx.sandbox.scratch / "tmp" / "prompt").read_text()
    # A reviewer sees the pull request Warden's does (its title the fixture commit's
    # message), never the case's `given`, which is the judge's.
    assert prompts["review"].startswith("add fixture: ")
    assert "\n\nAnalyzing changes in eval\n\nReview the changes" in prompts["review"]
    assert "an SQL injection in the handler" not in prompts["review"]
    assert "branch eval against main" in prompts["review"]
    assert "diff.patch" in prompts["review"]
    assert prompts["verify"].startswith("verifier keeps a real finding\n\n")  # Warden's title
    assert '"title": "SQL injection"' in prompts["verify"]
    assert "keep" in prompts["verify"] and "reject" in prompts["verify"]
    assert prompts["rubric"] == "Review the following git diff for issues.\n\n+API_KEY = 'x'\n"


def test_a_prompt_too_large_for_argv_is_in_the_prompt_file(tmp_path: Path) -> None:
    big_diff = "+" + "x" * 200_000 + "\n"
    body = """
        prompt = pathlib.Path(os.environ["ASSAY_PROMPT_FILE"]).read_text()
        print("review of", len(prompt), "chars;", "ASSAY_PROMPT" in os.environ)
    """
    (tmp_path / "ok").mkdir()
    output, _ = _run(tmp_path / "ok", "rubric", body, diff=big_diff)
    expected = len("Review the following git diff for issues.\n\n") + len(big_diff)
    assert output.review_text == f"review of {expected} chars; False"

    (tmp_path / "argv").mkdir()
    with pytest.raises(AgentError, match=r"argument list too long .*ASSAY_PROMPT_FILE"):
        _run(tmp_path / "argv", "rubric", body, extra_args=("{prompt}",), diff=big_diff)


def test_unknown_placeholders_are_left_as_pvyai_leaves_them() -> None:
    assert render_argv(["agent", "--cwd={workdir}"], {"workspace": "/w"}) == [
        "agent",
        "--cwd={workdir}",
    ]
    assert render_argv(["agent", "{unclosed"], {"workspace": "/w"}) == ["agent", "{unclosed"]
    assert render_argv(["{{json}}", "{workspace}"], {"workspace": "/w"}) == ["{json}", "/w"]


def test_no_agent_command_is_an_agent_error(tmp_path: Path) -> None:
    ctx = AttemptContext(
        case=_case("task", tmp_path),
        sandbox=_sandbox(tmp_path, "task"),
        model=None,
        judge_model=None,
        timeout_s=5,
        attempt=0,
        artifacts_dir=tmp_path / "artifacts",
        agent_command=None,
    )
    with pytest.raises(AgentError, match="no agent command: pass --agent-command"):
        asyncio.run(CommandAgent().run(ctx))


# --- answers -----------------------------------------------------------------------------

FINDING = {
    "severity": "HIGH",
    "confidence": "high",
    "title": "SQL injection",
    "description": "user input in query",
    "location": {"path": "case/handler.py", "startLine": 12},
}


def test_findings_from_the_findings_file(tmp_path: Path) -> None:
    body = f"""
        print(json.dumps({{"findings": []}}))  # the file wins over stdout
        pathlib.Path(os.environ["ASSAY_FINDINGS_FILE"]).write_text(
            json.dumps({{"findings": [{FINDING!r}]}}))
    """
    output, _ = _run(tmp_path, "review", body)
    assert output.findings == [{**FINDING, "severity": "high"}]


def test_findings_from_the_last_stdout_line(tmp_path: Path) -> None:
    body = f"""
        print("thinking...")
        print(json.dumps({{"findings": []}}))
        print(json.dumps({{"type": "tool", "name": "grep"}}))
        print(json.dumps({{"findings": [{FINDING!r}]}}))
        print("done")
    """
    output, _ = _run(tmp_path, "review", body)
    assert [f["title"] for f in output.findings] == ["SQL injection"]
    assert output.trace_events == ["tool:grep"]


def test_severity_words_agents_use_read_as_the_five_levels(tmp_path: Path) -> None:
    # The same table the judge's severity check reads (assay.core.severities): an agent
    # saying "major" or "Warning" is not an error.
    findings = [{**FINDING, "severity": word} for word in ("major", " Warning ", "nit")]
    body = f"print(json.dumps({{'findings': {findings!r}}}))"
    output, _ = _run(tmp_path, "review", body)
    assert [f["severity"] for f in output.findings] == ["high", "medium", "info"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("print('no answer here')", "agent gave no findings"),
        (
            "pathlib.Path(os.environ['ASSAY_FINDINGS_FILE']).write_text('{not json')",
            r"\$ASSAY_FINDINGS_FILE .* is not valid JSON",
        ),
        (
            "pathlib.Path(os.environ['ASSAY_FINDINGS_FILE']).write_text('[1, 2]')",
            'must hold a JSON object with a "findings" key',
        ),
        (
            "print(json.dumps({'findings': [{'severity': 'urgent', 'title': 'x'}]}))",
            r"finding 0 in the agent's stdout is invalid: severity",
        ),
        ("print(json.dumps({'findings': {'a': 1}}))", "must be a list"),
        (
            "print(json.dumps({'findings': [{'severity': 'low', 'title': 'x'}] * 1001}))",
            "holds 1,001 findings, over the limit of 1,000",
        ),
    ],
)
def test_unreadable_findings_are_agent_errors(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(AgentError, match=message):
        _run(tmp_path, "review", body)


# What an agent leaves at $ASSAY_FINDINGS_FILE instead of a file of findings, for assay to
# read outside its sandbox: (the agent's code, with `f` the variable's value and `host` a
# file of valid findings the agent cannot read; the error).
PLANTED = {
    "link-to-dev-zero": (
        "os.symlink('/dev/zero', f)",
        "is a symbolic link; write the findings to the file itself",
    ),
    "link-to-a-host-file": (
        "os.symlink(host, f)",
        "is a symbolic link; write the findings to the file itself",
    ),
    "fifo": (
        "os.mkfifo(f)",
        r"is a FIFO \(named pipe\), not a regular file; write the findings to it as a regular file",
    ),
    "directory": (
        "os.mkdir(f)",
        "is a directory, not a regular file; write the findings to it as a regular file",
    ),
    "oversized": (
        "open(f, 'wb').truncate(16 * 1024 * 1024 + 1)",
        "is 16777217 bytes, over the 16777216 byte limit$",
    ),
    "directory-replaced-by-a-link": (
        "d = pathlib.Path(f).parent; shutil.rmtree(d); os.symlink(pathlib.Path(host).parent, d)",
        r"is in .*scratch, which is a symbolic link; write the findings to the file itself",
    ),
}


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
@pytest.mark.parametrize("planted", sorted(PLANTED))
def test_a_findings_file_that_is_not_a_plain_file_is_refused_unread(
    tmp_path: Path, planted: str, isolation: str
) -> None:
    """Followed or read as it is, each would fill assay's memory, block its event loop past
    every timeout, or hand the agent a host file; each is one clear agent error instead."""
    sandboxing = None
    if isolation == "bwrap":
        if (reason := bwrap_missing_reason()) is not None:
            pytest.skip(reason)
        # tmp_path stands for the suite's checkout: masked, the agent's script shown from it.
        sandboxing = resolve_sandboxing("bwrap", masked=[tmp_path])
    host = tmp_path / "host" / "findings.json"  # with bwrap, the agent cannot see it
    host.parent.mkdir()
    host.write_text(json.dumps({"findings": [FINDING]}))
    code, message = PLANTED[planted]
    body = f"import shutil\nf, host = os.environ['ASSAY_FINDINGS_FILE'], {str(host)!r}\n{code}\n"
    started = time.monotonic()
    with pytest.raises(AgentError, match=rf"^\$ASSAY_FINDINGS_FILE {message}"):
        _run(tmp_path, "review", body, timeout_s=20, sandboxing=sandboxing)
    assert time.monotonic() - started < 15


def test_verdict_from_file_and_from_stdout(tmp_path: Path) -> None:
    from_file = """
        pathlib.Path(os.environ["ASSAY_FINDINGS_FILE"]).write_text(
            json.dumps({"verdict": "Reject", "reason": "parameterised query"}))
    """
    (tmp_path / "a").mkdir()
    output, _ = _run(tmp_path / "a", "verify", from_file)
    assert (output.verdict, output.verdict_reason) == ("reject", "parameterised query")

    (tmp_path / "b").mkdir()
    output, _ = _run(tmp_path / "b", "verify", 'print(json.dumps({"verdict": "keep"}))')
    assert (output.verdict, output.verdict_reason) == ("keep", "")

    (tmp_path / "c").mkdir()
    with pytest.raises(AgentError, match='must be "keep" or "reject", not \'maybe\''):
        _run(tmp_path / "c", "verify", 'print(json.dumps({"verdict": "maybe"}))')


def test_rubric_review_is_stdout_without_json_lines(tmp_path: Path) -> None:
    body = """
        print(json.dumps({"type": "tool", "name": "read_file", "path": "config.go"}))
        print("The API key in config.go is hardcoded.")
        print(json.dumps({"event": "thinking"}))
        print("Use an environment variable instead.")
    """
    output, _ = _run(tmp_path, "rubric", body)
    assert output.review_text == (
        "The API key in config.go is hardcoded.\nUse an environment variable instead."
    )
    assert output.trace_events == ["tool:read_file", "thinking"]
    assert output.findings == []


def test_rubric_review_never_carries_a_secret(tmp_path: Path) -> None:
    body = "print('my key is', os.environ['MY_SERVICE_TOKEN'])"
    output, _ = _run(tmp_path, "rubric", body, env={"MY_SERVICE_TOKEN": "tok-abcdef-123"})
    assert output.review_text == "my key is [redacted]"


def test_transcripts_never_carry_a_secret(tmp_path: Path) -> None:
    # Transcripts are uploaded as CI artifacts, timed-out attempts' included.
    body = """
        print('key', os.environ['MY_SERVICE_TOKEN'])
        print('key', os.environ['MY_SERVICE_TOKEN'], file=sys.stderr)
    """
    output, _ = _run(tmp_path, "task", body, env={"MY_SERVICE_TOKEN": "tok-abcdef-123"})
    assert output.stdout_path is not None and output.stderr_path is not None
    assert output.stdout_path.read_text() == "key [redacted]\n"
    assert output.stderr_path.read_text() == "key [redacted]\n"


def test_rubric_with_empty_output_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="no review"):
        _run(tmp_path, "rubric", "pass")


# --- trace parsing -----------------------------------------------------------------------


def test_trace_keys() -> None:
    assert trace_key({"type": "tool", "name": "read_file"}) == "tool:read_file"
    assert trace_key({"event": "verify", "name": "build"}) == "verify:build"
    assert trace_key({"type": "done"}) == "done"
    assert trace_key({"type": "tool", "name": ""}) == "tool"
    # PVYai: a name that is not a string is left out; type and name are trimmed; `event`
    # stands in for a type that is blank or not a string.
    assert trace_key({"type": "step", "name": 3}) == "step"
    assert trace_key({"type": " tool ", "name": " read_file "}) == "tool:read_file"
    assert trace_key({"type": " ", "event": "verify", "name": "t"}) == "verify:t"
    assert trace_key({"type": 5, "event": "done"}) == "done"
    assert trace_key({"name": "no-type"}) is None
    assert trace_key({"type": 5}) is None
    assert trace_key(["type", "tool"]) is None


@pytest.mark.slow
def test_a_flood_of_trace_events_is_bounded_and_the_required_ones_are_still_seen() -> None:
    # Millions of different events, or one with a megabyte name, must not grow memory or
    # the report; what the case requires is kept whatever came before it.
    reader = StdoutReader(required=[" verify:test ", "tool:" + "n" * 5000])
    tracemalloc.start()
    try:
        for n in range(15_000):
            reader(json.dumps({"type": "tool", "name": f"junk-{n}"}))
            reader('{"type": "tool", "name": "junk-0"}')  # repeats add nothing
        reader(json.dumps({"type": "tool", "name": "x" * 2_000_000}))
        reader('{"type": "verify", "name": "test"}')
        reader(json.dumps({"type": "tool", "name": "n" * 5000}))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(reader.events) == 10_002
    assert reader.events[:2] == ["tool:junk-0", "tool:junk-1"]
    assert reader.events[-2:] == ["verify:test", "tool:" + "n" * 5000]
    assert peak < 16 * 2**20, f"{peak / 2**20:.0f} MiB for the events of one attempt"


def test_stdout_reader_ignores_junk(tmp_path: Path) -> None:
    reader = StdoutReader()
    for line in [
        "plain text",
        '{"type": "tool", "name": "edit_file"}',
        "{broken json",
        "[1, 2, 3]",
        '   {"type": "verify", "name": "test", "exitCode": 0}  ',
        '{"findings": []}',
        "",
    ]:
        reader(line)
    assert reader.events == ["tool:edit_file", "verify:test"]
    assert reader.last_findings == {"findings": []}

    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"type":"tool","name":"read_file"}\nnoise\n{"type":"verify","name":"b"}\n')
    assert read_trace_file(trace) == ["tool:read_file", "verify:b"]
    with pytest.raises(ConfigError, match="cannot read trace file"):
        read_trace_file(tmp_path / "missing.jsonl")


# --- failures of the agent process -------------------------------------------------------


def _gone(pid: int, *, within_s: float = 5.0) -> bool:
    """True once `pid` no longer runs (a zombie waiting for init to reap it counts as gone)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
        if "\nState:\tZ" in status:
            return True
        time.sleep(0.05)
    return False


SPAWN_CHILD = """
    import subprocess, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    pathlib.Path(os.environ["ASSAY_WORKSPACE"], "child.pid").write_text(str(child.pid))
"""


@pytest.mark.slow
def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    body = SPAWN_CHILD + "    print('working', flush=True)\n    time.sleep(60)\n"
    started = time.monotonic()
    with pytest.raises(AgentError, match=r"agent timed out after 1s"):
        _run(tmp_path, "task", body, timeout_s=1)
    assert time.monotonic() - started < 15
    child = int((tmp_path / "sandbox" / "repo" / "child.pid").read_text())
    assert _gone(child), "the agent's background child survived the timeout"


def test_children_left_behind_are_killed_when_the_agent_exits(tmp_path: Path) -> None:
    output, ctx = _run(tmp_path, "task", SPAWN_CHILD)
    assert output.exit_code == 0
    assert _gone(int((ctx.sandbox.path / "child.pid").read_text()))


@pytest.mark.slow
def test_cancelling_the_run_kills_the_process_group(tmp_path: Path) -> None:
    """The runner cancels attempts on Ctrl-C or at its backstop timeout."""
    script = _agent(tmp_path, SPAWN_CHILD + "    time.sleep(60)\n")
    (tmp_path / "child.pid").unlink(missing_ok=True)
    env = {**os.environ, "ASSAY_WORKSPACE": str(tmp_path)}

    async def cancelled_run() -> None:
        await asyncio.wait_for(
            run_command(
                [sys.executable, str(script)],
                cwd=tmp_path,
                env=env,
                timeout_s=60,
                stdout_path=tmp_path / "out",
                stderr_path=None,
            ),
            timeout=1,
        )

    with pytest.raises(TimeoutError):
        asyncio.run(cancelled_run())
    assert _gone(int((tmp_path / "child.pid").read_text()))


def test_missing_and_non_executable_programs(tmp_path: Path) -> None:
    not_executable = tmp_path / "agent.sh"
    not_executable.write_text("#!/bin/sh\necho hi\n")
    for argv, message in [
        (("no-such-agent-xyz", "{workspace}"), "agent command not found: no-such-agent-xyz"),
        (("./missing-agent",), "agent command not found: ./missing-agent"),
        ((str(not_executable),), f"agent command not executable: {not_executable}"),
    ]:
        ctx = AttemptContext(
            case=_case("task", tmp_path),
            sandbox=_sandbox(tmp_path / argv[0].replace("/", "_"), "task"),
            model=None,
            judge_model=None,
            timeout_s=5,
            attempt=0,
            artifacts_dir=tmp_path / "artifacts",
            agent_command=argv,
        )
        with pytest.raises(AgentError, match=message):
            asyncio.run(CommandAgent().run(ctx))


def test_non_zero_exit_is_recorded_for_tasks(tmp_path: Path) -> None:
    output, _ = _run(tmp_path, "task", "print('gave up'); sys.exit(3)")
    assert output.exit_code == 3


def test_non_zero_exit_is_an_error_for_reviews_and_hides_secrets(tmp_path: Path) -> None:
    body = """
        print("auth failed with key " + os.environ["MY_SERVICE_API_KEY"], file=sys.stderr)
        sys.exit(4)
    """
    secret = "sk-very-secret-value-42"
    with pytest.raises(AgentError) as caught:
        _run(tmp_path, "review", body, env={"MY_SERVICE_API_KEY": secret})
    message = str(caught.value)
    assert "agent exited with code 4" in message
    assert "auth failed with key [redacted]" in message
    assert secret not in message


def test_write_outside_the_workspace_is_detected(tmp_path: Path) -> None:
    body = """
        pathlib.Path("..", "escape.txt").write_text("out")
        print(json.dumps({"findings": []}))
    """
    with pytest.raises(AgentError, match="agent wrote outside its workspace: escape.txt"):
        _run(tmp_path, "review", body)


# --- the process runner itself -----------------------------------------------------------


def test_a_huge_printer_is_bounded_in_memory_and_disk(tmp_path: Path) -> None:
    script = _agent(
        tmp_path,
        """
        line = b'{"type": "tool", "name": "spam"}' + b"x" * 990 + b"\\n"
        block = line * 1024
        for _ in range(24):  # 24 MiB of stdout
            sys.stdout.buffer.write(block)
        sys.stderr.buffer.write(b"e" * (3 * 1024 * 1024))
        """,
    )
    lines = 0

    def count(_: str) -> None:
        nonlocal lines
        lines += 1

    cap = 1024 * 1024
    tracemalloc.start()
    try:
        result = asyncio.run(
            run_command(
                [sys.executable, str(script)],
                cwd=tmp_path,
                env=dict(os.environ),
                timeout_s=60,
                stdout_path=tmp_path / "out",
                stderr_path=tmp_path / "err",
                max_capture_bytes=cap,
                on_stdout_line=count,
            )
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0 and result.truncated
    assert (tmp_path / "out").stat().st_size == cap
    assert (tmp_path / "err").stat().st_size == cap
    assert lines == 24 * 1024  # every line still reached the callback
    assert peak < 8 * 1024 * 1024, f"peak traced memory {peak} bytes"
    assert result.stderr_tail.endswith("e" * 100) and len(result.stderr_tail) <= 4096


SECRET = "sk-live-SUPERSECRET_value_1234"


@pytest.mark.parametrize("whose", ["the command's", "assay's"])
def test_a_secret_cut_by_the_output_tail_is_masked_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whose: str
) -> None:
    # The output ends 4,095 bytes after the key's sixth character: a tail cut before it is
    # masked would keep `e-SUPERSECRET_value_1234`.
    env = dict(os.environ)
    if whose == "assay's":  # a verification command's environment has no keys; assay's has
        monkeypatch.setenv("MY_API_KEY", SECRET)
    else:
        env["MY_API_KEY"] = SECRET
    body = f"""
        text = {SECRET!r} + "\\n" + "x" * (4096 - ({len(SECRET)} - 6) - 1)
        sys.stdout.write(text)
        sys.stderr.write(text)
    """
    result = asyncio.run(
        run_command(
            [sys.executable, str(_agent(tmp_path, body))],
            cwd=tmp_path,
            env=env,
            timeout_s=60,
            stdout_path=tmp_path / "out",
            stderr_path=tmp_path / "err",
        )
    )
    for tail in (result.stdout_tail, result.stderr_tail):
        assert tail.endswith("x" * 100) and len(tail.encode()) <= 4096
        assert SECRET[-8:] not in tail and "SUPERSECRET" not in tail


def test_the_stderr_quoted_in_an_agent_error_is_masked_before_it_is_cut() -> None:
    from assay.agents.command import _with_stderr
    from assay.isolation.processes import CommandResult

    # The message keeps the last 2,000 characters, which start inside the key.
    stderr = "auth failed: " + SECRET + "y" * (2000 - (len(SECRET) - 6))
    result = CommandResult(
        exit_code=1,
        timed_out=False,
        duration_s=0.1,
        stdout_tail="",
        stderr_tail=stderr,
        truncated=False,
    )
    message = _with_stderr("agent exited with code 1", result, {"MY_API_KEY": SECRET})
    assert message.endswith("y" * 100) and "SUPERSECRET" not in message


@pytest.mark.slow
def test_a_daemon_holding_the_pipes_leaves_no_traceback(tmp_path: Path) -> None:
    # `setsid` takes a grandchild out of the process group, so it survives the group
    # kill and keeps the output pipes open; the run must still end cleanly.
    program = textwrap.dedent(
        f"""
        import asyncio, os, sys
        from pathlib import Path
        from assay.isolation import processes as proc
        proc._DRAIN_AFTER_EXIT_S = 0.5
        script = "(setsid sleep 30 & echo $! > {tmp_path}/daemon.pid)"
        result = asyncio.run(proc.run_command(
            ["/bin/sh", "-c", script], cwd=Path("{tmp_path}"), env=dict(os.environ),
            timeout_s=30, stdout_path=Path("{tmp_path}/out"), stderr_path=Path("{tmp_path}/err"),
        ))
        print(result.exit_code)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    os.kill(int((tmp_path / "daemon.pid").read_text()), signal.SIGKILL)
    assert (done.returncode, done.stdout, done.stderr) == (0, "0\n", "")


def test_run_command_reports_launch_problems(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="command not found: nope-not-here"):
        asyncio.run(
            run_command(
                ["nope-not-here"],
                cwd=tmp_path,
                env={"PATH": os.environ["PATH"]},
                timeout_s=5,
                stdout_path=tmp_path / "o",
                stderr_path=None,
            )
        )


def test_stdin_is_dev_null_and_stderr_can_merge(tmp_path: Path) -> None:
    script = _agent(tmp_path, "print(repr(sys.stdin.read()))\nprint('err', file=sys.stderr)\n")
    result = asyncio.run(
        run_command(
            [sys.executable, str(script)],
            cwd=tmp_path,
            env=dict(os.environ),
            timeout_s=10,
            stdout_path=tmp_path / "log",
            stderr_path=None,
        )
    )
    assert result.exit_code == 0 and not result.timed_out
    assert (tmp_path / "log").read_text().split() == ["''", "err"]
    assert result.stderr_tail == ""


def test_secret_environment_rules() -> None:
    env = {
        "PATH": "/bin",
        "ANTHROPIC_API_KEY": "sk-ant-123456",
        "ANTHROPIC_BASE_URL": "http://localhost:1",
        "OPENAI_ORG": "org",
        "GITHUB_TOKEN": "ghs_abcdef",
        "GH_TOKEN": "gho_abcdef",
        "ACTIONS_RUNTIME_TOKEN": "rt",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "https://x",
        "DB_PASSWORD": "hunter22",
        "AWS_SECRET": "s3cr3t-value",
        "GITHUB_ENV": "/runner/set_env",
        "INPUT_THRESHOLD": "0.8",
        "HOME": "/home/u",
    }
    assert scrubbed_environ(env) == {"PATH": "/bin", "HOME": "/home/u"}
    text = "key sk-ant-123456 url http://localhost:1 pw hunter22 home /home/u"
    assert redact(text, env) == ("key [redacted] url http://localhost:1 pw [redacted] home /home/u")
