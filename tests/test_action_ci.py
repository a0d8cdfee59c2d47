"""`assay ci` end to end: event fixture -> decision -> real run of a tiny task suite -> publishing.

GitHub is the loopback fake, reached through the real PyGithub client (GITHUB_API_URL);
the agent under test is a small Python script (ASSAY_AGENT_COMMAND); verification
commands are real `python -c` processes. No model is needed.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay.action import github_api
from assay.action.input_text import DEFAULT_TRIGGER_PATHS
from assay.action.inputs import MODEL_KEY_VARIABLES
from assay.cli import main
from assay.isolation.bwrap import probe_bwrap
from tests.fakes.github import FakeGitHub
from tests.fakes.github_publish import BOT_LOGIN, add_publish_routes, check_runs, comments
from tests.test_action_publish import parse_outputs

EVENTS = Path(__file__).parent / "data" / "events"
REPO = "acme/widgets"
TOKEN = "ghs_ci_token_5e3f"
MODEL_KEY = "sk-ant-test-9f8e7d6c5b4a"
MODEL_VARIABLES = tuple(v for v in MODEL_KEY_VARIABLES.values() if v != "OPENAI_BASE_URL")
TRIGGER_PATHS = (*DEFAULT_TRIGGER_PATHS, "agent.py")
REPORT_KEYS = {
    *("ran", "reason", "score", "passed", "total", "failed", "errors", "verdict", "report-path"),
    "history-dir",  # a step output only: action.yml uploads the history from it
}
HOSTILE = (
    "x\n::error::pwned\r\n::set-output name=x::y\n::add-mask::\n::stop-commands::token\n"
    "##[error]boom %0A::warning::sneaky\r::notice::cr"
)

AGENT = """\
import pathlib, sys
case_id, workspace = sys.argv[1], pathlib.Path(sys.argv[2])
print("::error::agent stdout is captured, never echoed")
if case_id.endswith("fix-greeting"):
    (workspace / "greet.py").write_text("def greet(name):\\n    return 'hello ' + name\\n")
"""


def _task_suite(*, hostile: bool) -> dict[str, object]:
    broken_id = "broken-::add-mask::" if hostile else "broken"
    check_name = HOSTILE if hostile else "never passes"
    return {
        "id": "demo",
        "name": "Demo tasks",
        "tasks": [
            {
                "id": "fix-greeting",
                "name": "Fix the greeting",
                "prompt": "Make greet() say hello",
                "workspaceFixture": "fixtures/proj",
                "verificationCommands": [
                    {
                        "id": "check",
                        "name": "greeting",
                        "command": [
                            sys.executable,
                            "-c",
                            "import greet, sys; sys.exit(greet.greet('x') != 'hello x')",
                        ],
                    }
                ],
                "expectedChangedFiles": ["greet.py"],
            },
            {
                "id": broken_id,
                "name": HOSTILE if hostile else "Broken",
                "prompt": "Leave everything as it is",
                "workspaceFixture": "fixtures/proj",
                "verificationCommands": [
                    {
                        "id": "::stop-commands::token" if hostile else "never",
                        "name": check_name,
                        "command": [
                            sys.executable,
                            "-c",
                            "print('\\n::error::check output'); raise SystemExit(1)",
                        ],
                    }
                ],
                "expectedChangedFiles": ["greet.py"],
            },
        ],
    }


def make_workspace(root: Path, *, hostile: bool = False, review: bool = False) -> Path:
    ws = root / "workspace"
    (ws / "evals" / "fixtures" / "proj").mkdir(parents=True)
    (ws / "evals" / "fixtures" / "proj" / "greet.py").write_text(
        "def greet(name):\n    return 'hi ' + name\n"
    )
    # The check imports greet.py: its bytecode is no change of the agent's (as in PVYai).
    (ws / "evals" / "fixtures" / "proj" / ".gitignore").write_text("__pycache__/\n")
    (ws / "evals" / "tasks.json").write_text(
        json.dumps(_task_suite(hostile=hostile), indent=2) + "\n"
    )
    (ws / "agent.py").write_text(AGENT)
    if review:
        (ws / "evals" / "skills").mkdir()
        (ws / "evals" / "skills" / "bugs.md").write_text("Find bugs.\n")
        (ws / "evals" / "fixtures" / "null-access").mkdir()
        (ws / "evals" / "fixtures" / "null-access" / "handler.ts").write_text(
            "export const name = (users: {id: number, name: string}[], id: number) =>\n"
            "  users.find((u) => u.id === id).name;\n"
        )
        (ws / "evals" / "review.yaml").write_text(
            "skill: skills/bugs.md\n"
            "model: anthropic/claude-sonnet-4-6\n"  # Warden's default is OpenRouter's
            "evals:\n"
            "  - name: null-access\n"
            "    given: code that reads a property of a user that may be missing\n"
            "    files:\n"
            "      - fixtures/null-access/handler.ts\n"
            "    should_find:\n"
            "      - finding: reads .name of a user that Array.find() may not return\n"
            "        severity: high\n"
        )
    return ws


def source_line(report_dir: Path, case_id: str) -> int:
    """Where report.json says the case is written (the loader's answer; annotations use it)."""
    report = json.loads((report_dir / "report.json").read_text())
    (case,) = [c for c in report["cases"] if c["id"] == case_id]
    assert case["source"]["path"] == "evals/tasks.json"
    line = case["source"]["line"]
    assert isinstance(line, int) and line > 1
    return line


@dataclass
class Ci:
    """One `assay ci` invocation's environment and what it left behind."""

    root: Path
    workspace: Path
    fake: FakeGitHub
    environ: dict[str, str]

    @property
    def outputs(self) -> dict[str, str]:
        path = self.root / "github_output"
        return parse_outputs(path.read_text()) if path.exists() else {}

    @property
    def summary(self) -> str:
        path = self.root / "step_summary.md"
        return path.read_text() if path.exists() else ""

    def use_event(self, name: str, fixture: str, **changes: object) -> None:
        payload = json.loads((EVENTS / fixture).read_text())
        payload.update(changes)
        path = self.root / "event.json"
        path.write_text(json.dumps(payload))
        self.environ.update(GITHUB_EVENT_NAME=name, GITHUB_EVENT_PATH=str(path))

    def run(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> tuple[int, str, str]:
        for name, value in self.environ.items():
            monkeypatch.setenv(name, value)
        code = main(["ci"])
        captured = capsys.readouterr()
        return code, captured.out, captured.err


@contextlib.contextmanager
def ci_environment(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    token: str,
    routes: tuple[Callable[[FakeGitHub], object], ...] = (add_publish_routes,),
    inputs: dict[str, str] | None = None,
) -> Iterator[Ci]:
    """A workspace, a fake GitHub with `routes`, and the environment `assay ci` reads."""
    monkeypatch.setattr(github_api, "WRITE_INTERVAL_S", 0.0)
    monkeypatch.setattr(github_api, "BACKOFF_S", 0.0)
    ws = make_workspace(tmp_path)
    monkeypatch.chdir(ws)
    (tmp_path / "runner-temp").mkdir()
    with FakeGitHub(token=token) as fake:
        for add_routes in routes:
            add_routes(fake)
        fake.add_repo(REPO)
        environ = {
            "GITHUB_ACTIONS": "true",
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": fake.url,
            "GITHUB_SHA": "4" * 40,
            "GITHUB_WORKSPACE": str(ws),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "step_summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "github_output"),
            "GITHUB_WORKFLOW": "Evals",
            "GITHUB_JOB": "evals",
            "GITHUB_RUN_ID": "1234",
            "RUNNER_TEMP": str(tmp_path / "runner-temp"),
            "INPUT_GITHUB_TOKEN": token,
            "INPUT_PATHS": "evals",
            # The agent's own script, as a workflow lists it (else assay warns that it is not).
            "INPUT_TRIGGER_PATHS": "\n".join(TRIGGER_PATHS),
            "ASSAY_AGENT_COMMAND": f"{sys.executable} {ws / 'agent.py'} {{case_id}} {{workspace}}",
            **(inputs or {}),
        }
        yield Ci(tmp_path, ws, fake, environ)  # type: ignore[misc]


@pytest.fixture
def ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ci]:
    with ci_environment(
        tmp_path, monkeypatch, token=TOKEN, inputs={"INPUT_THRESHOLD": "0.75"}
    ) as env:
        yield env


SANDBOX_WARNING = "::warning title=assay%3A no OS sandbox::"
"""Every test here runs with ASSAY_ISOLATION=none (tests/conftest.py), which warns."""


def _commands(out: str) -> list[str]:
    lines = out.replace("\r", "\n").split("\n")
    return [
        line
        for line in lines
        if line.lstrip().startswith("::") and not line.startswith(SANDBOX_WARNING)
    ]


@pytest.mark.slow
def test_a_run_without_the_os_sandbox_warns_in_the_log_and_the_summary(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.use_event("push", "push.json")
    _, out, _ = ci.run(monkeypatch, capsys)
    assert "> [!WARNING]" in ci.summary and "WITHOUT an OS sandbox" in ci.summary
    assert f"{SANDBOX_WARNING}agents and verification commands run WITHOUT an OS sandbox" in out


@pytest.mark.slow
def test_a_preset_that_cannot_run_the_model_says_so_once_as_a_notice_and_in_the_summary(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.fakes.agent_clis import install_fake_cli

    install_fake_cli(ci.root / "bin", "codex")
    monkeypatch.setenv("PATH", f"{ci.root / 'bin'}:{Path(sys.executable).parent}:/usr/bin:/bin")
    del ci.environ["ASSAY_AGENT_COMMAND"]
    ci.environ.update(ASSAY_RUNTIME="codex", INPUT_MODEL="claude-haiku-4-5")
    ci.use_event("push", "push.json")
    _, out, _ = ci.run(monkeypatch, capsys)
    note = (
        "codex runs openai/ models, not claude-haiku-4-5: its cases ran with codex's own "
        "default model (choose one with --model, and the judge with --judge-model)"
    )
    notices = [c for c in _commands(out) if c.startswith("::notice title=assay%3A agent model::")]
    assert notices == [f"::notice title=assay%3A agent model::{note}"]
    # Said once (the other note says that the suite's task cases ran one at a time).
    assert ci.summary.count(note) == 1 and ci.summary.count("> [!NOTE]") == 2


@pytest.mark.slow
def test_push_runs_the_suite_and_publishes(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.use_event("push", "push.json")
    ci.environ["INPUT_THRESHOLD"] = "0.5"
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    report_path = ci.root / "runner-temp" / "assay-report" / "report.json"
    assert ci.outputs == {
        "ran": "true",
        "reason": "push event",
        "score": "0.5000",
        "passed": "1",
        "total": "2",
        "failed": "1",
        "errors": "0",
        "verdict": "inconclusive",  # 1 of 2 against 0.5: the interval holds both sides
        "report-path": str(report_path),
        "history-dir": str(ci.root / "runner-temp" / ".assay-history"),  # for action.yml
    }
    assert json.loads(report_path.read_text())["summary"]["gate"] == "pass"
    assert "## ✅ Evaluation Results" in ci.summary
    line = source_line(report_path.parent, "demo/broken")
    assert _commands(out) == [
        f"::add-mask::{TOKEN}",
        f"::error file=evals/tasks.json,line={line},title=demo/broken::never: exit code 1; "
        "changed_files: missing: greet.py",
    ]
    assert "gate: PASS" in out
    assert comments(ci.fake, REPO) == []


@pytest.mark.slow
def test_pr_changing_evals_comments_once_and_edits_on_rerun(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.fake.add_pull(REPO, 7, files=[{"filename": "src/app.py"}, {"filename": "evals/tasks.json"}])
    ci.use_event("pull_request", "pull_request_opened.json")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 1  # 0.5 < 0.75
    assert ci.outputs["ran"] == "true"
    assert ci.outputs["reason"] == "PR #7 changes evals/tasks.json (matches evals/**)"
    assert "assay: running the evals: PR #7 changes evals/tasks.json" in out
    (first,) = comments(ci.fake, REPO)
    assert first["user"]["login"] == BOT_LOGIN
    assert first["body"].startswith("<!-- assay:evals workflow=Evals job=evals -->\n")
    assert "Score 0.50" in first["body"] and "gate **fail**" in first["body"]

    (ci.root / "github_output").unlink()
    code, _, _ = ci.run(monkeypatch, capsys)
    assert code == 1
    (again,) = comments(ci.fake, REPO)
    assert again["id"] == first["id"] and again["edits"] == 1
    assert ci.fake.count(rf"/repos/{REPO}/issues/7/comments", "POST") == 1


def test_pr_without_eval_changes_is_skipped(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.fake.add_pull(REPO, 7, files=[{"filename": "src/app.py"}, {"filename": "README.md"}])
    ci.use_event("pull_request", "pull_request_synchronize.json")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    assert ci.outputs == {
        "ran": "false",
        "reason": (
            "PR #7 changes no file matching trigger-paths (evals/**, fixtures/**, assay.toml, "
            ".github/workflows/*eval*, skills/**, prompts/**, **/SKILL.md, AGENTS.md, CLAUDE.md, "
            "agent.py) and does not carry the 'run-evals' label"
        ),
    }
    assert _commands(out) == [f"::add-mask::{TOKEN}"]
    assert ci.summary == "" and comments(ci.fake, REPO) == []
    assert not (ci.root / "runner-temp" / "assay-report").exists()


@pytest.mark.slow
def test_every_model_key_input_is_masked_first_and_not_left_behind(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = {
        "INPUT_ANTHROPIC_API_KEY": "sk-ant-mask-1",
        "INPUT_OPENAI_API_KEY": "sk-openai-mask-2",
        "INPUT_OPENROUTER_API_KEY": "sk-or-mask-3",
        "INPUT_GEMINI_API_KEY": "AIza-gemini-mask-4",
    }
    ci.environ.update(keys, INPUT_OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    for name in (*MODEL_VARIABLES, "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    ci.use_event("push", "push.json")
    ci.environ["INPUT_THRESHOLD"] = "0"
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    assert _commands(out)[:5] == [
        *(f"::add-mask::{value}" for value in keys.values()),
        f"::add-mask::{TOKEN}",
    ]
    # The run had them (the key-free task suite ran); nothing is left behind in the process.
    for name in (*MODEL_VARIABLES, "OPENAI_BASE_URL"):
        assert name not in os.environ
    outputs = (ci.root / "runner-temp" / "assay-report").rglob("*")
    for path in [p for p in outputs if p.is_file()]:
        text = path.read_text(errors="replace")
        assert not any(value in text for value in keys.values()), path


@pytest.mark.slow
def test_files_the_results_depend_on_outside_trigger_paths_get_one_warning(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.use_event("push", "push.json")
    ci.environ.update(INPUT_TRIGGER_PATHS="fixtures/**", INPUT_THRESHOLD="0")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    (warning,) = [line for line in _commands(out) if "trigger-paths" in line]
    assert warning == (
        "::warning title=assay%3A trigger-paths::trigger-paths does not cover agent.py "
        "(the agent command), evals/tasks.json (suite demo): a pull request that changes only "
        "these skips the evals. Add them (or their directories) to the trigger-paths input; "
        "see docs/github-action.md#trigger-paths"
    )


@pytest.mark.slow
def test_the_projects_own_agent_command_counts_for_trigger_paths_too(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The agent command most projects set once, in `[tool.assay]`, is checked as well."""
    command = ci.environ.pop("ASSAY_AGENT_COMMAND")
    (ci.workspace / "pyproject.toml").write_text(
        f"[tool.assay]\nagent_command = {json.dumps(command)}\n"
    )
    ci.use_event("push", "push.json")
    ci.environ.update(INPUT_TRIGGER_PATHS="fixtures/**\nevals/**", INPUT_THRESHOLD="0")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    (warning,) = [line for line in _commands(out) if "trigger-paths" in line]
    assert "trigger-paths does not cover agent.py (the agent command):" in warning


def test_fork_pr_is_skipped_with_one_notice(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.use_event("pull_request", "pull_request_fork.json")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    assert ci.outputs == {"ran": "false", "reason": "fork PR #8 skipped"}
    notices = [line for line in _commands(out) if line.startswith("::notice")]
    assert len(notices) == 1
    assert notices[0].startswith(
        "::notice title=assay%3A evals skipped::PR #8 comes from mallory/widgets"
    )
    assert "docs/github-action.md#fork-pull-requests" in notices[0]
    assert ci.fake.requests == []  # decided from the payload alone


def test_labeled_with_another_label_does_nothing(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.use_event("pull_request", "pull_request_labeled_other.json")
    code, _, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    assert ci.outputs == {"ran": "false", "reason": "labeled with 'documentation', not 'run-evals'"}


@pytest.mark.slow
def test_pr_over_the_file_cap_warns_and_runs(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.fake.add_pull(REPO, 9, files=[{"filename": f"src/f{i}.py"} for i in range(3100)])
    ci.use_event("pull_request", "pull_request_huge.json")
    ci.environ["INPUT_COMMENT"] = "false"
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 1
    warnings = [line for line in _commands(out) if line.startswith("::warning")]
    assert "PR #9 changes 3100 files; the GitHub API lists only the first 3000" in warnings[0]
    assert "fetch-depth: 0" in warnings[1]
    assert ci.outputs["ran"] == "true"
    assert ci.outputs["reason"].startswith("could not list every file PR #9 changes")


def test_missing_model_key_is_one_clear_error(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    make_workspace(ci.root / "with-review", review=True)
    ci.workspace = ci.root / "with-review" / "workspace"
    monkeypatch.chdir(ci.workspace)
    ci.environ["GITHUB_WORKSPACE"] = str(ci.workspace)
    ci.use_event("workflow_dispatch", "workflow_dispatch.json")
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 2
    errors = [line for line in _commands(out) if line.startswith("::error")]
    assert len(errors) == 1
    assert errors[0].startswith(
        "::error title=assay%3A missing model key::this run needs a model key"
    )
    assert "bugs/null-access" in errors[0] and "ANTHROPIC_API_KEY" in errors[0]
    assert ci.outputs == {"ran": "true", "reason": "workflow_dispatch event"}
    assert "Traceback" not in out + err


def test_a_missing_openai_key_names_the_openai_input(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    make_workspace(ci.root / "with-review", review=True)
    ci.workspace = ci.root / "with-review" / "workspace"
    monkeypatch.chdir(ci.workspace)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ASSAY_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    ci.environ.update(
        GITHUB_WORKSPACE=str(ci.workspace),
        INPUT_MODEL="openai/gpt-4o",
        INPUT_ANTHROPIC_API_KEY="sk-ant-present",
    )
    ci.use_event("workflow_dispatch", "workflow_dispatch.json")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 2
    (error,) = [line for line in _commands(out) if line.startswith("::error")]
    assert "set the openai-api-key input from a secret" in error
    assert "secrets.OPENAI_API_KEY" in error and "anthropic-api-key" not in error


@pytest.mark.slow
def test_forbidden_check_run_only_warns(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci.fake.repos[REPO].extra["permissions"] = {"checks": "read"}
    ci.use_event("push", "push.json")
    ci.environ.update(INPUT_CHECK_RUN="true", INPUT_THRESHOLD="0.25")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    warnings = [line for line in _commands(out) if line.startswith("::warning")]
    assert len(warnings) == 1 and "403 Resource not accessible by integration" in warnings[0]
    assert check_runs(ci.fake, REPO) == []
    assert ci.outputs["passed"] == "1" and "Evaluation Results" in ci.summary


def test_bad_input_is_a_located_config_error(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = ci.workspace / ".github" / "workflows" / "evals.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(
        "jobs:\n  evals:\n    steps:\n      - uses: ./\n        with:\n          threshold: 1.5\n"
    )
    ci.use_event("push", "push.json")
    ci.environ.update(
        INPUT_THRESHOLD="1.5",
        INPUT_MAX_ANNOTATIONS="many",
        GITHUB_WORKFLOW_REF=f"{REPO}/.github/workflows/evals.yml@refs/heads/main",
    )
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 2
    errors = [line for line in _commands(out) if line.startswith("::error")]
    assert len(errors) == 2
    assert errors[0].startswith(
        "::error file=.github/workflows/evals.yml,line=6,title=assay%3A configuration"
        "::input `threshold`:"
    )
    assert "got '1.5'" in errors[0]
    assert errors[1].startswith("::error title=assay%3A configuration::input `max-annotations`:")
    assert ci.outputs == {} and "Traceback" not in err


def test_invalid_suite_is_annotated_on_its_file(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (ci.workspace / "evals" / "broken.json").write_text(
        '{\n  "id": "broken",\n  "tasks": [\n    {"id": "t", "name": "T"}\n  ]\n}\n'
    )
    ci.use_event("workflow_dispatch", "workflow_dispatch.json")
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 2
    errors = [line for line in _commands(out) if line.startswith("::error")]
    assert errors and all(
        line.startswith("::error file=evals/broken.json,line=") for line in errors
    ), errors
    assert "Traceback" not in out + err


def test_outside_actions_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ci"]) == 2
    out = capsys.readouterr().out
    assert (
        "::error title=assay%3A configuration::`assay ci` is the GitHub Action's entry point" in out
    )


def test_hostile_text_cannot_forge_workflow_commands_or_leak_the_key(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_workspace(ci.root / "hostile", hostile=True)
    monkeypatch.chdir(ws)
    ci.workspace = ws
    ci.environ.update(
        GITHUB_WORKSPACE=str(ws),
        INPUT_ANTHROPIC_API_KEY=MODEL_KEY,
        INPUT_CHECK_RUN="true",
        ASSAY_AGENT_COMMAND=f"{sys.executable} {ws / 'agent.py'} {{case_id}} {{workspace}}",
    )
    ci.fake.add_pull(REPO, 11, title=HOSTILE, files=[{"filename": "evals/\n::error::file.yaml"}])
    ci.use_event("pull_request", "pull_request_hostile.json")
    code, out, err = ci.run(monkeypatch, capsys)
    assert code == 1

    # The only command lines are assay's own: two masks and one annotation per failed case.
    own = _commands(out) + _commands(err)
    assert own[:2] == [f"::add-mask::{MODEL_KEY}", f"::add-mask::{TOKEN}"]
    assert len(own) == 3
    report_dir = ci.root / "runner-temp" / "assay-report"
    line = source_line(report_dir, "demo/broken-::add-mask::")
    assert own[2].startswith(
        f"::error file=evals/tasks.json,line={line},title=demo/broken-%3A%3Aadd-mask%3A%3A::"
    )
    assert "##[" not in out + err
    assert ": :error::pwned" in out  # the PR title was printed, defused
    assert ": :error::file.yaml (matches evals/**)" in out  # so was the hostile file name
    assert set(ci.outputs) == REPORT_KEYS

    # The key appears nowhere but in its own mask command.
    (comment,) = comments(ci.fake, REPO)
    (run,) = check_runs(ci.fake, REPO)
    places = {
        "stdout": out.replace(f"::add-mask::{MODEL_KEY}", ""),
        "stderr": err,
        "summary": ci.summary,
        "outputs": (ci.root / "github_output").read_text(),
        "comment": comment["body"],
        "check run": json.dumps(run),
        **{str(p): p.read_text(errors="replace") for p in report_dir.rglob("*") if p.is_file()},
    }
    leaks = [where for where, text in places.items() if MODEL_KEY in text]
    assert leaks == []
    assert os.environ.get("ANTHROPIC_API_KEY") is None  # bridged for the run only


@pytest.mark.slow
def test_subprocess_run(ci: Ci, tmp_path: Path) -> None:
    ci.use_event("push", "push.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "ASSAY_"))}
    env.update(ci.environ, INPUT_THRESHOLD="0.9", PYTHONUTF8="1")
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())", "ci"],
        cwd=ci.workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    line = source_line(ci.root / "runner-temp" / "assay-report", "demo/broken")
    assert ci.outputs["ran"] == "true" and ci.outputs["score"] == "0.5000"
    assert [line for line in done.stdout.splitlines() if line.startswith("::")] == [
        f"::add-mask::{TOKEN}",
        *_no_sandbox_warning(),
        f"::error file=evals/tasks.json,line={line},title=demo/broken::never: exit code 1; "
        "changed_files: missing: greet.py",
    ]
    assert "gate: FAIL" in done.stdout and "Traceback" not in done.stderr


def _no_sandbox_warning() -> list[str]:
    """The one warning `isolation: auto` gives where bwrap cannot sandbox (a machine without
    bubblewrap), none where it can: the test holds on both."""
    _, why_not = probe_bwrap()
    if not why_not:
        return []
    return [
        "::warning title=assay%3A no OS sandbox::agents and verification commands run WITHOUT "
        "an OS sandbox: they can read this process's files and the host as assay's own user "
        f"({why_not})"
    ]


@pytest.mark.slow
def test_assay_dry_run_and_json_variables_cannot_stop_ci_from_running_and_publishing(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The runner reads ASSAY_* for `assay ci` too, but CI's own choices beat them."""
    ci.use_event("push", "push.json")
    ci.environ.update(ASSAY_DRY_RUN="1", ASSAY_JSON="1", INPUT_THRESHOLD="0.5")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    assert ci.outputs["ran"] == "true" and ci.outputs["total"] == "2"
    assert (ci.root / "runner-temp" / "assay-report" / "report.json").is_file()
    assert not out.lstrip().startswith("{")  # no report.json on stdout
