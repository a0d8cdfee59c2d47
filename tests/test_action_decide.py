"""The decision step: run/skip with nothing but the standard library, before any install.

Each test runs `python -P -S -m assay.action.decide` as action.yml does: `-S` leaves every
site-packages off sys.path, so pydantic, PyGithub and requests cannot be imported, and
the PR's files come from the loopback GitHub fake over real HTTP through urllib.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.github import FakeGitHub
from tests.test_action_ci import TOKEN, Ci
from tests.test_action_publish import parse_outputs

ROOT = Path(__file__).resolve().parents[1]
EVENTS = Path(__file__).parent / "data" / "events"
REPO = "acme/widgets"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        server.add_repo(REPO)
        yield server  # type: ignore[misc]


def _decide(
    tmp_path: Path, fake: FakeGitHub, event: str, fixture: str, **inputs: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    output = tmp_path / "github_output"
    workflow = tmp_path / "workspace" / ".github" / "workflows" / "evals.yml"
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_text("jobs:\n  evals:\n    steps:\n      - with:\n          trigger-paths: x\n")
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(ROOT / "src"),
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(EVENTS / fixture),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": fake.url,
        "GITHUB_WORKSPACE": str(tmp_path / "workspace"),
        "GITHUB_WORKFLOW_REF": f"{REPO}/.github/workflows/evals.yml@refs/heads/main",
        "GITHUB_OUTPUT": str(output),
        "INPUT_GITHUB_TOKEN": TOKEN,
        **inputs,
    }
    done = subprocess.run(
        [sys.executable, "-P", "-S", "-m", "assay.action.decide"],
        cwd=tmp_path / "workspace",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, parse_outputs(output.read_text()) if output.exists() else {}


def test_the_bare_interpreter_cannot_import_assays_dependencies() -> None:
    """Otherwise the tests below would prove nothing about the standard library."""
    for module in ("pydantic", "github", "requests", "yaml"):
        done = subprocess.run(
            [sys.executable, "-P", "-S", "-c", f"import {module}"],
            capture_output=True,
            check=False,
        )
        assert done.returncode != 0, module


def test_a_pr_changing_an_eval_file_runs_listing_files_through_the_api(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    names = [f"src/f{i}.py" for i in range(150)] + ["evals/x.yaml"]
    fake.add_pull(REPO, 7, files=[{"filename": n, "status": "modified"} for n in names])
    done, outputs = _decide(tmp_path, fake, "pull_request", "pull_request_synchronize.json")
    assert done.returncode == 0, done.stderr
    assert outputs == {"ran": "true", "reason": "PR #7 changes evals/x.yaml (matches evals/**)"}
    assert fake.count(rf"/repos/{REPO}/pulls/7/files", "GET") == 2  # paginated, 100 a page
    assert f"::add-mask::{TOKEN}" in done.stdout.splitlines()
    assert "assay: running the evals: PR #7 changes evals/x.yaml" in done.stdout


def test_a_pr_changing_nothing_relevant_is_skipped(tmp_path: Path, fake: FakeGitHub) -> None:
    fake.add_pull(REPO, 7, files=[{"filename": "src/app.py"}, {"filename": "README.md"}])
    done, outputs = _decide(tmp_path, fake, "pull_request", "pull_request_synchronize.json")
    assert done.returncode == 0, done.stderr
    assert outputs["ran"] == "false"
    assert outputs["reason"].startswith("PR #7 changes no file matching trigger-paths")


def test_the_agents_own_prompts_run_the_evals_by_default(tmp_path: Path, fake: FakeGitHub) -> None:
    fake.add_pull(REPO, 7, files=[{"filename": "tools/reviewer/SKILL.md"}])
    _, outputs = _decide(tmp_path, fake, "pull_request", "pull_request_synchronize.json")
    assert outputs == {
        "ran": "true",
        "reason": "PR #7 changes tools/reviewer/SKILL.md (matches **/SKILL.md)",
    }


def test_a_fork_is_skipped_with_a_notice_without_asking_the_api(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    done, outputs = _decide(tmp_path, fake, "pull_request", "pull_request_fork.json")
    assert done.returncode == 0 and outputs["ran"] == "false"
    assert any(line.startswith("::notice title=assay") for line in done.stdout.splitlines())
    assert fake.count(r"/repos/.*", "GET") == 0


def test_no_api_answer_falls_back_and_runs_to_be_safe(tmp_path: Path, fake: FakeGitHub) -> None:
    # No such pull on the fake (404) and no git checkout: the decision still comes, and says why.
    done, outputs = _decide(tmp_path, fake, "pull_request", "pull_request_synchronize.json")
    assert done.returncode == 0 and outputs["ran"] == "true"
    assert "running the evals to be safe" in outputs["reason"]
    assert "::warning::the GitHub API could not list the PR's files (404" in done.stdout


def test_an_invalid_trigger_path_is_a_located_usage_error(tmp_path: Path, fake: FakeGitHub) -> None:
    done, outputs = _decide(
        tmp_path, fake, "pull_request", "pull_request_synchronize.json", INPUT_TRIGGER_PATHS="[z-a]"
    )
    assert done.returncode == 2 and outputs == {}
    assert done.stdout.splitlines()[-1].startswith(
        "::error file=.github/workflows/evals.yml,line=5,title=assay%3A configuration::"
        "input `trigger-paths`: invalid pattern '[z-a]'"
    )
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_assay_ci_takes_the_steps_decision_instead_of_deciding_again(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A PR that would be skipped: the decision step said run (e.g. it saw the label first).
    ci.fake.add_pull(REPO, 7, files=[{"filename": "src/app.py"}])
    ci.use_event("pull_request", "pull_request_synchronize.json")
    ci.environ["ASSAY_RUN_REASON"] = "PR #7 carries the 'run-evals' label"
    ci.environ["INPUT_THRESHOLD"] = "0"
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    assert ci.fake.count(rf"/repos/{REPO}/pulls/7/files", "GET") == 0
    assert "skipping the evals" not in out
    report = json.loads((ci.root / "runner-temp" / "assay-report" / "report.json").read_text())
    assert report["summary"]["total"] == 2
    assert "ran" not in ci.outputs  # the decision step wrote `ran` and `reason`


@pytest.fixture
def ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ci]:
    from tests.test_action_ci import ci_environment

    with ci_environment(tmp_path, monkeypatch, token=TOKEN) as env:
        yield env


def _imports(path: Path) -> set[str]:
    """Every module `path` imports at run time, lazily inside functions too (what
    `if TYPE_CHECKING:` guards never runs, so it does not count)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_everything_the_decision_imports_is_standard_library() -> None:
    src = ROOT / "src"
    seen: set[Path] = set()
    pending = [src / "assay" / "action" / "decide.py"]
    foreign: set[str] = set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        for module in _imports(path):
            top = module.split(".")[0]
            if top == "assay":
                candidate = src.joinpath(*module.split("."))
                for found in (candidate.with_suffix(".py"), candidate / "__init__.py"):
                    if found.is_file():
                        pending.append(found)
            elif top not in sys.stdlib_module_names and top != "__future__":
                foreign.add(f"{path.relative_to(src)}: {module}")
    assert foreign == set()
    names = {p.relative_to(src).as_posix() for p in seen}
    assert "assay/action/rest.py" in names and "assay/action/changed_files.py" in names


def test_an_unexpected_exception_is_one_error_and_a_neutralised_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from assay.action import decide

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("##[error]forged\n::error::forged too")

    monkeypatch.setattr(decide, "decide_event", broken)
    environ = {"GITHUB_EVENT_NAME": "push", "GITHUB_WORKSPACE": str(tmp_path)}
    assert decide.main(environ) == 2
    out, err = capfd.readouterr()
    lines = (out + err).splitlines()
    assert [line for line in lines if line.startswith("::")] == [
        "::error title=assay%3A unexpected error::"
        "RuntimeError: ##\\[error]forged%0A: :error::forged too"
    ]
    assert "Traceback" in err and "##[error]" not in err
