"""`assay doctor`: what a run here would do and why, on a machine with bwrap and one
without (PATH holding git alone), with and without keys, inside an Action; and a task
suite without an agent command refused up front by `run` (exit 2) and named by
`validate` and `doctor`."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from assay.cli import main
from assay.isolation.bwrap import probe_bwrap

DATA = Path(__file__).parent / "data" / "suites"
KEY = "sk-ant-doctor-secret-value"


def warden_suite(tmp_path: Path) -> Path:
    (tmp_path / "handler.ts").write_text("export const f = (id) => getUser(id).name;\n")
    (tmp_path / "skill.md").write_text("---\nname: bugs\ndescription: d\n---\nFind bugs.\n")
    suite = tmp_path / "bugs.yaml"
    suite.write_text(
        "skill: skill.md\nevals:\n  - name: one\n    given: g\n    files: [handler.ts]\n"
        "    should_find:\n      - finding: null access\n"
    )
    return suite


def doctor(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["doctor", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture()
def auto_isolation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_ISOLATION", raising=False)


@pytest.fixture()
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A machine without bubblewrap: PATH holds git alone."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    monkeypatch.setenv("PATH", str(bin_dir))


def test_a_machine_with_bwrap_and_a_key_is_ready(
    auto_isolation: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if probe_bwrap()[0] is None:
        pytest.skip("bwrap does not work here: apt-get install bubblewrap")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    suite = warden_suite(tmp_path)
    code, out, _ = doctor(capsys, str(suite))
    assert code == 0, out
    assert "  --isolation      auto (default) -> bwrap: bwrap runs here" in out
    assert "  anthropic        ANTHROPIC_API_KEY" in out
    assert "git                git version " in out
    assert "cases              1 run planned, 1 would be scored" in out
    assert "note: 1 case ran the default model openrouter/anthropic/claude-sonnet-4.6" in out
    assert "github actions     not running inside one" in out
    assert out.endswith("ready: a run would score 1 run\n")
    assert KEY not in out
    code, out, _ = doctor(capsys, "--json", str(suite))
    found = json.loads(out)
    assert code == 0 and found["ready"] is True and found["blockers"] == []
    assert found["sandbox"]["picks"] == "bwrap" and found["sandbox"]["bwrap_works"] is True
    assert found["sandbox"]["user_namespaces"]["allowed"] is True
    anthropic = next(r for r in found["credentials"] if r["provider"] == "anthropic")
    assert anthropic["found"] == ["ANTHROPIC_API_KEY"] and anthropic["ready"] is True
    assert found["cases"]["models"] == ["anthropic/claude-sonnet-4-6"]
    assert KEY not in out


def test_a_machine_without_bwrap_runs_unsandboxed_under_auto_and_is_blocked_under_bwrap(
    auto_isolation: None,
    no_bwrap: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    suite = warden_suite(tmp_path)
    code, out, _ = doctor(capsys, str(suite))
    assert code == 0, out
    assert "  bwrap            not installed" in out
    assert "  --isolation      auto (default) -> none: bwrap (bubblewrap) is not installed" in out
    assert "WITHOUT an OS sandbox (apt-get install bubblewrap)" in out
    monkeypatch.setenv("ASSAY_ISOLATION", "bwrap")
    code, out, _ = doctor(capsys, "--json", str(suite))
    found = json.loads(out)
    assert code == 1 and found["ready"] is False
    assert found["sandbox"]["isolation_from"] == "ASSAY_ISOLATION"
    assert found["blockers"] == [
        "--isolation bwrap (ASSAY_ISOLATION), but bwrap (bubblewrap) is not installed"
    ]


def test_no_key_blocks_the_run_and_names_the_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = doctor(capsys, str(warden_suite(tmp_path)))
    assert code == 1
    assert "  anthropic        none (set ANTHROPIC_API_KEY or ASSAY_ANTHROPIC_API_KEY)" in out
    assert (
        "  needs: 1 case needs OPENROUTER_API_KEY (or ANTHROPIC_API_KEY for the same model)"
    ) in out
    assert "blocked: no case would be scored: every one would be skipped" in out


def test_inside_an_action_it_names_the_event_and_the_token_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/app")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_doctor_secret")
    code, out, _ = doctor(capsys, str(warden_suite(tmp_path)))
    assert code == 0
    assert "github actions     event pull_request, repository acme/app, tokens: GITHUB_TOKEN" in out
    assert "ghs_doctor_secret" not in out and KEY not in out


def test_a_task_suite_without_an_agent_command_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suites = tmp_path / "pvyai"
    shutil.copytree(DATA / "pvyai", suites)
    monkeypatch.chdir(tmp_path)
    suite = suites / "regression.json"
    code = main(["run", str(suite), "--report-dir", str(tmp_path / "report")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"assay: error: {suite}: no agent command for 3 cases of this suite (")
    assert "pass --agent-command, set agent_command in [tool.assay]" in err
    assert "or run an agent CLI with --runtime <preset> (aider, claude-code" in err
    assert not (tmp_path / "report" / "results.jsonl").exists()
    assert main(["validate", str(suite)]) == 0
    assert f"{suite}: warning: no agent command for 3 cases" in capsys.readouterr().err
    code, out, _ = doctor(capsys, str(suite))
    assert code == 1 and f"error: {suite}: no agent command for 3 cases" in out
    # Named on the command line, the same suite runs.
    agent = f"{sys.executable} -c pass"
    code = main(["run", str(suite), "--agent-command", agent, "--report-dir", str(tmp_path / "r")])
    assert code in (0, 1)
    assert (tmp_path / "r" / "report.json").is_file()
