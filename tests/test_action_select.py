"""`select: affected` in the Action: a PR runs the cases its changes touch, and says why."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.github_publish import comments
from tests.test_action_ci import EVENTS, REPO, TOKEN, Ci, ci_environment


@pytest.fixture(name="ci")
def _ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ci]:
    with ci_environment(tmp_path, monkeypatch, token=TOKEN) as env:
        yield env


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1"},
    )
    return done.stdout.strip()


def _pull_request_from(ci: Ci, base_sha: str) -> None:
    payload = json.loads((EVENTS / "pull_request_opened.json").read_text())
    payload["pull_request"]["base"]["sha"] = base_sha
    path = ci.root / "event.json"
    path.write_text(json.dumps(payload))
    # A pull_request run checks out the PR's merge commit, which GITHUB_SHA names.
    merge_sha = _git(ci.workspace, "rev-parse", "HEAD")
    ci.environ.update(
        GITHUB_EVENT_NAME="pull_request", GITHUB_EVENT_PATH=str(path), GITHUB_SHA=merge_sha
    )


@pytest.mark.slow
def test_select_affected_runs_every_case_when_an_affects_all_path_changed(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(ci.workspace, "init", "-q", "-b", "main")
    _git(ci.workspace, "add", "-A")
    _git(ci.workspace, "commit", "-q", "-m", "base")
    base = _git(ci.workspace, "rev-parse", "HEAD")
    (ci.workspace / "agent.py").write_text((ci.workspace / "agent.py").read_text() + "# v2\n")
    _git(ci.workspace, "commit", "-q", "-am", "agent")
    ci.fake.add_pull(REPO, 7, files=[{"filename": "agent.py"}, {"filename": "evals/tasks.json"}])
    _pull_request_from(ci, base)
    ci.environ.update(INPUT_SELECT="affected", INPUT_AFFECTS_ALL="agent.py")
    ci.run(monkeypatch, capsys)
    (comment,) = comments(ci.fake, REPO)
    assert f"selected: all 2 case(s): agent.py changed since {base}" in comment["body"]


def test_select_affected_with_nothing_affected_passes_with_nothing_run(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(ci.workspace, "init", "-q", "-b", "main")
    _git(ci.workspace, "add", "-A")
    _git(ci.workspace, "commit", "-q", "-m", "base")
    base = _git(ci.workspace, "rev-parse", "HEAD")
    (ci.workspace / "agent.py").write_text((ci.workspace / "agent.py").read_text() + "# v2\n")
    _git(ci.workspace, "commit", "-q", "-am", "agent")
    ci.fake.add_pull(REPO, 7, files=[{"filename": "agent.py"}, {"filename": "evals/tasks.json"}])
    _pull_request_from(ci, base)
    ci.environ.update(INPUT_SELECT="affected")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    reason = f"no cases affected by changes since {base}"
    assert f"::notice title=assay%3A no cases affected::{reason}: nothing to run" in out
    assert (ci.outputs["total"], ci.outputs["verdict"]) == ("0", "pass")
    (comment,) = comments(ci.fake, REPO)
    assert f"selected: {reason}" in comment["body"]


@pytest.mark.slow
def test_select_affected_on_a_push_runs_every_case(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A push to the default branch has no pull request to compare with: everything runs.
    _git(ci.workspace, "init", "-q", "-b", "main")
    _git(ci.workspace, "add", "-A")
    _git(ci.workspace, "commit", "-q", "-m", "base")
    ci.use_event("push", "push.json")
    ci.environ.update(INPUT_SELECT="affected", INPUT_THRESHOLD="0.5")
    code, _, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    report_path = ci.root / "runner-temp" / "assay-report" / "report.json"
    report = json.loads(report_path.read_text())
    assert report["summary"]["total"] == 2 and report["run"].get("selection") is None


@pytest.mark.parametrize("event", ["pull_request_target", "pull_request"])
@pytest.mark.slow
def test_select_affected_runs_every_case_when_the_checkout_is_not_the_prs_code(
    ci: Ci, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], event: str
) -> None:
    # pull_request_target checks out the base branch; so does a pull_request job whose
    # checkout step names another ref. Diffing that against the PR's base finds nothing.
    _git(ci.workspace, "init", "-q", "-b", "main")
    _git(ci.workspace, "add", "-A")
    _git(ci.workspace, "commit", "-q", "-m", "base")
    base = _git(ci.workspace, "rev-parse", "HEAD")
    ci.fake.add_pull(REPO, 7, files=[{"filename": "evals/tasks.json"}])
    _pull_request_from(ci, base)
    ci.environ.update(GITHUB_EVENT_NAME=event, GITHUB_SHA="4" * 40)
    ci.environ.update(INPUT_SELECT="affected", INPUT_THRESHOLD="0.5")
    code, out, _ = ci.run(monkeypatch, capsys)
    assert code == 0
    assert "::notice title=assay%3A select::select: affected runs every case: " in out
    report_path = ci.root / "runner-temp" / "assay-report" / "report.json"
    report = json.loads(report_path.read_text())
    assert report["summary"]["total"] == 2 and report["run"].get("selection") is None
