"""Changes hidden from git status (issue 34, point 3), through `assay run` and `assay score`.

The agent writes `greet/__init__.py`, which ends every import of `greet` with
`os._exit(0)`, and `greet/.gitignore` holding `*`, which hides both files from
`git status`: PVYai's verdict is a pass. assay keeps it by default and warns in every
output, naming the files; `--hidden-changes fail` fails the task. Real git, a real
command agent, real verification commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.action.check_run import CHECK_NAME
from assay.cli import main
from assay.errors import ConfigErrors
from assay.report.comment_markdown import render_comment
from assay.report.markdown import render_summary
from assay.report.model import Report
from tests.upstream.test_pvyai_conformance import GIT_ENV
from tests.upstream.test_pvyai_task_parity import _run, _suite, _task

RIG = (
    "pathlib.Path('a.txt').write_text('changed\\n')\n"
    "pathlib.Path('greet').mkdir()\n"
    "pathlib.Path('greet/__init__.py').write_text('import os\\nos._exit(0)\\n')\n"
    "pathlib.Path('greet/.gitignore').write_text('*\\n')\n"
)
"""The agent: the expected change, and a package that passes any test importing it."""
CHECK = "import greet\nraise SystemExit('the task is not done')\n"
"""The verification: fails unless something ends the process first."""
HIDDEN = ("greet/.gitignore", "greet/__init__.py")


def _rigged_suite(root: Path) -> Path:
    task = _task(
        "rigged",
        RIG,
        verificationCommands=[
            {"id": "tests", "name": "Tests", "command": [sys.executable, "check.py"]}
        ],
    )
    return _suite(root, [task], {"fx": {"a.txt": "a\n", "check.py": CHECK}})


def _named_in(text: str) -> bool:
    return all(name in text for name in HIDDEN)


def _named_in_markdown(text: str) -> bool:
    """Named, as Markdown shows the names (`__init__` escaped, so it is not bold)."""
    return all(name.replace("_", "\\_") in text for name in HIDDEN)


def test_a_hidden_change_keeps_pvyais_pass_and_is_a_warning_in_every_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, benchmark, raw = _run(tmp_path, _rigged_suite(tmp_path))
    out = capsys.readouterr().out
    report = Report.model_validate(raw)
    (case,) = report.cases
    assert code == 0 and case.status == "pass"  # PVYai's verdict, kept
    assert benchmark["tasks"][0]["report"]["status"] == "pass"
    (warning,) = report.run.warnings
    assert warning.startswith(
        "parity/rigged: 2 change(s) hidden from git status or PVYai's changed files"
    )
    assert _named_in(warning)
    changed = next(check for check in case.checks if check.id == "changed_files")
    assert (changed.model_extra or {})["hiddenFiles"] == list(HIDDEN)
    # The terminal, summary.md, the PR comment, the check run and report.html.
    assert any(
        line.startswith("WARNING: parity/rigged") and _named_in(line) for line in out.splitlines()
    )
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "> [!WARNING]\n> parity/rigged" in summary and _named_in_markdown(summary)
    comment = render_comment(report, max_bytes=65_000)
    assert "> [!WARNING]\n> parity/rigged" in comment and _named_in_markdown(comment)
    check_run = render_summary(report, max_bytes=65_000, title=CHECK_NAME)
    assert "> [!WARNING]\n> parity/rigged" in check_run and _named_in_markdown(check_run)
    html = (tmp_path / "report" / "report.html").read_text()
    assert "WARNING: parity/rigged" in html and _named_in(html)


def _hidden_check(report: dict[str, Any]) -> dict[str, Any]:
    (case,) = report["cases"]
    assert case["status"] == "fail"
    (check,) = [check for check in case["checks"] if check["status"] != "pass"]
    return dict(check)


def test_hidden_changes_fail_fails_the_task_with_a_check_naming_the_files(
    tmp_path: Path,
) -> None:
    code, _, report = _run(tmp_path, _rigged_suite(tmp_path), "--hidden-changes", "fail")
    check = _hidden_check(report)
    assert code == 1 and check["id"] == "hidden_changes" and check["status"] == "fail"
    assert _named_in(check["message"]) and check["hiddenFiles"] == list(HIDDEN)
    assert _named_in(report["cases"][0]["reason"])


def test_hidden_changes_fail_also_comes_from_the_environment_and_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_HIDDEN_CHANGES", "fail")
    code, _, report = _run(tmp_path / "env", _rigged_suite(_mkdir(tmp_path / "env")))
    assert code == 1 and _hidden_check(report)["id"] == "hidden_changes"
    monkeypatch.delenv("ASSAY_HIDDEN_CHANGES")
    root = _mkdir(tmp_path / "config")
    (root / "pyproject.toml").write_text('[tool.assay]\nhidden_changes = "fail"\n')
    monkeypatch.chdir(root)
    code, _, report = _run(root, _rigged_suite(root))
    assert code == 1 and _hidden_check(report)["id"] == "hidden_changes"


def test_a_hidden_changes_mode_assay_does_not_know_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ASSAY_HIDDEN_CHANGES", "ignore")
    suite = _rigged_suite(tmp_path)
    assert main(["run", str(suite), "--dry-run", "--work-root", str(tmp_path / "w")]) == 2
    assert "ASSAY_HIDDEN_CHANGES" in capsys.readouterr().err


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


# --- assay score: what hides a change in a repository git reads -------------------------------


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True)


def _scored_workspace(root: Path) -> tuple[Path, Path]:
    """A task suite and its workspace as PVYai's `eval run` makes it: one baseline commit."""
    suite = _suite(root, [_task("t", "scored by assay score")], {"fx": {"a.txt": "a\n"}})
    workspace = _mkdir(root / "workspace")
    for name in ("a.txt", "kept.txt", "flagged.txt"):
        (workspace / name).write_text(f"{name}\n")
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", ".")
    _git(workspace, "commit", "-q", "-m", "baseline")
    (workspace / "a.txt").write_text("changed\n")
    return suite, workspace


@pytest.mark.parametrize(
    ("hide", "hidden"),
    [
        (("update-index", "--skip-worktree", "kept.txt"), "kept.txt"),
        (("update-index", "--assume-unchanged", "flagged.txt"), "flagged.txt"),
    ],
)
def test_score_warns_of_an_index_flag_that_hides_a_change_and_fails_on_request(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    hide: tuple[str, ...],
    hidden: str,
) -> None:
    suite, workspace = _scored_workspace(tmp_path)
    _git(workspace, *hide)
    (workspace / hidden).write_text("rigged\n")
    capsys.readouterr()
    assert main(_score_args(suite, workspace)) == 0  # git status sees nothing: PVYai passes
    streams = capsys.readouterr()
    assert (
        "WARNING: parity/t: 1 change(s) hidden from git status or PVYai's changed files"
        in streams.err
        and hidden in streams.err
    )
    assert main([*_score_args(suite, workspace), "--hidden-changes", "fail"]) == 1
    out = capsys.readouterr().out
    assert "hidden_changes" in out and hidden in out


def test_score_warns_of_a_git_info_exclude_rule_that_hides_a_new_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, workspace = _scored_workspace(tmp_path)
    (workspace / "conftest.py").write_text("# rigs the tests\n")
    (workspace / ".git" / "info").mkdir(exist_ok=True)
    (workspace / ".git" / "info" / "exclude").write_text("conftest.py\n")
    capsys.readouterr()
    assert main(_score_args(suite, workspace)) == 0
    streams = capsys.readouterr()
    assert (
        "WARNING: parity/t: 1 change(s) hidden from git status or PVYai's changed files"
        in streams.err
        and "conftest.py" in streams.err
    )
    assert main([*_score_args(suite, workspace), "--hidden-changes", "fail"]) == 1
    assert "conftest.py" in capsys.readouterr().out


def test_score_says_nothing_of_files_the_baselines_own_rules_ignore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, workspace = _scored_workspace(tmp_path)
    (workspace / ".gitignore").write_text("*.log\n")
    _git(workspace, "add", ".gitignore")
    _git(workspace, "commit", "-q", "--amend", "-m", "baseline")
    (workspace / "build.log").write_text("output\n")
    capsys.readouterr()
    assert main([*_score_args(suite, workspace), "--hidden-changes", "fail"]) == 0
    assert "hidden from git status" not in capsys.readouterr().err


def _score_args(suite: Path, workspace: Path) -> list[str]:
    return ["score", "--suite", str(suite), "--task", "t", "--workspace", str(workspace)]


def test_the_actions_hidden_changes_input_reaches_the_run(tmp_path: Path) -> None:
    from assay._cli.ci import _run_args
    from assay._cli.run import build_options
    from assay.action.environment import RunnerEnvironment
    from assay.action.inputs import read_inputs

    env = RunnerEnvironment.from_environ(
        {"GITHUB_EVENT_NAME": "push", "GITHUB_REPOSITORY": "acme/w", "RUNNER_TEMP": str(tmp_path)}
    )
    assert read_inputs({}).hidden_changes is None
    inputs = read_inputs({"INPUT_HIDDEN_CHANGES": "fail"})
    assert build_options(_run_args(inputs, env)).hidden_changes == "fail"
    with pytest.raises(ConfigErrors) as raised:
        read_inputs({"INPUT_HIDDEN_CHANGES": "ignore"})
    assert "hidden-changes" in str(raised.value)


CI_AGENT = """\
import pathlib, sys
case_id, workspace = sys.argv[1], pathlib.Path(sys.argv[2])
(workspace / "greet.py").write_text("def greet(name):\\n    return 'hello ' + name\\n")
(workspace / "rig").mkdir()
(workspace / "rig" / "__init__.py").write_text("import os\\nos._exit(0)\\n")
(workspace / "rig" / ".gitignore").write_text("*\\n")
"""


@pytest.mark.parametrize("mode", ["", "fail"])
def test_assay_ci_warns_in_the_log_summary_comment_and_check_run_and_fails_on_request(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: str,
) -> None:
    from tests.action.test_ci import REPO, TOKEN, ci_environment
    from tests.fakes.github_publish import check_runs, comments

    inputs = {"INPUT_CHECK_RUN": "true", "INPUT_THRESHOLD": "0.5", "INPUT_HIDDEN_CHANGES": mode}
    with ci_environment(tmp_path, monkeypatch, token=TOKEN, inputs=inputs) as ci:
        (ci.workspace / "agent.py").write_text(CI_AGENT)
        ci.fake.add_pull(REPO, 7, files=[{"filename": "evals/tasks.json"}])
        ci.use_event("pull_request", "pull_request_opened.json")
        code, out, _ = ci.run(monkeypatch, capsys)
        names = ("rig/.gitignore", "rig/__init__.py")
        markdown = [name.replace("_", "\\_") for name in names]
        annotation = "::warning title=assay%3A hidden changes::demo/fix-greeting: 2 change(s)"
        assert any(line.startswith(annotation) for line in out.splitlines())
        assert all(name in out for name in names)
        (comment,) = comments(ci.fake, REPO)
        (check_run,) = check_runs(ci.fake, REPO)
        for text in (ci.summary, comment["body"], check_run["output"]["summary"]):
            assert "> [!WARNING]\n> demo/fix-greeting: 2 change(s) hidden" in text
            assert all(name in text for name in markdown)
        report = json.loads((tmp_path / "runner-temp" / "assay-report" / "report.json").read_text())
        fixed = next(case for case in report["cases"] if case["id"] == "demo/fix-greeting")
        assert fixed["status"] == ("fail" if mode == "fail" else "pass")
        assert code == (1 if mode == "fail" else 0)
