"""`assay scaffold --draft`: the model drafts the case's assertions, marked as a draft.

The pull request is on the GitHub fake (real PyGithub); the model is the loopback fake
Anthropic API (real SDK). `validate --strict` refuses the draft until a person edits it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.scaffold import github_source
from tests.fakes.anthropic_api import FakeAnthropic, malformed_tool_reply, tool_use_reply
from tests.fakes.github import FakeGitHub
from tests.scaffold.test_helpers import (
    PR_URL,
    TITLE,
    run_cli,
    serving,
    simple_pull,
    snapshot,
)

NAME = "fix-replay-delete-accepts-project-read-scope"
MODEL = "anthropic/claude-haiku-4-5"
PATCH = (
    "@@ -1,2 +1,2 @@\n-ALLOWED = ('project:read', 'project:write')\n+ALLOWED = ('project:write',)"
)
BASE_APP = "ALLOWED = ('project:read', 'project:write')\ndef delete_replay(scope): ...\n"
FINDING = (
    "delete_replay in src/app.py accepts the project:read scope, so a read-only token "
    "can delete replays"
)
REVIEW_DRAFT = {
    "should_find": [{"finding": FINDING, "severity": "high"}],
    "should_not_find": ["delete_replay has no docstring"],
}
RUBRIC = (
    "A good review notices that the change drops project:read from the scopes that may "
    "delete a replay, and says read-only tokens could delete before; it must not flag style."
)


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(github_source, "RETRY_BACKOFF_S", 0)


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-draft-test-0123456789")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    from tests.fakes.github_contents import pr_file

    with serving(monkeypatch) as fake:
        simple_pull(
            fake,
            {"LICENSE": "MIT\n", "src/app.py": BASE_APP},
            pr_files=[pr_file("src/app.py", patch=PATCH)],
        )
        yield fake


def _scaffold(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(capsys, "scaffold", PR_URL, "--root", str(root), "--draft", *extra)


def _prompt_of(body: dict[str, Any]) -> str:
    return "".join(
        block.get("text", "")
        for message in body["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
    )


def test_the_draft_is_the_models_answer_marked_until_a_person_edits_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    model: FakeAnthropic,
    github: FakeGitHub,
) -> None:
    model.reply(tool_use_reply("draft_review_case", REVIEW_DRAFT))
    root, cache = tmp_path / "evals", tmp_path / "cache"
    code, out, err = _scaffold(capsys, root, "--model", MODEL, "--cache", str(cache))
    assert (code, err) == (0, ""), err

    # The model read the fix: the title, the patch and the captured base-side file.
    assert model.calls == 1
    request = model.bodies()[0]
    assert request["model"] == MODEL.split("/", 1)[1]
    assert request["tool_choice"] == {"type": "tool", "name": "draft_review_case"}
    prompt = _prompt_of(request)
    assert TITLE in prompt and PATCH in prompt and BASE_APP.splitlines()[1] in prompt

    case_file = root / "security-review" / f"{NAME}.json"
    scenario = json.loads(case_file.read_text())
    assert scenario["should_find"] == REVIEW_DRAFT["should_find"]
    assert scenario["should_not_find"] == REVIEW_DRAFT["should_not_find"]
    marker = scenario["notes"]["draft"]
    assert marker["model"] == MODEL and len(marker["sha256"]) == 64
    assert f"drafted should_find with {MODEL}" in out
    assert f"  assay check {case_file}\n" in out
    assert "TODO" not in case_file.read_text()

    # Unedited: a warning, and --strict refuses it.
    code, out, err = run_cli(capsys, "validate", "--root", str(root), str(case_file))
    assert code == 0 and "still the model's draft" in err and "(an error with --strict)" in err
    code, out, err = run_cli(capsys, "validate", "--strict", "--root", str(root), str(case_file))
    assert code == 2 and "still the model's draft" in err and "notes.draft" in err

    # A person edits the finding (the marker stays): accepted (with the category's skill,
    # whose absence --strict refuses too).
    (root / "skills").mkdir()
    (root / "skills" / "security-review.md").write_text("Find security bugs.\n")
    scenario["should_find"][0]["finding"] = FINDING + "; only project:write may delete"
    case_file.write_text(json.dumps(scenario, indent=2))
    code, out, err = run_cli(capsys, "validate", "--strict", "--root", str(root), str(case_file))
    assert (code, err) == (0, ""), err

    # Put back as drafted, it is a draft again; deleting the marker accepts it as it is.
    scenario["should_find"] = REVIEW_DRAFT["should_find"]
    case_file.write_text(json.dumps(scenario, indent=2))
    assert run_cli(capsys, "validate", "--strict", "--root", str(root), str(case_file))[0] == 2
    del scenario["notes"]["draft"]
    case_file.write_text(json.dumps(scenario, indent=2))
    assert run_cli(capsys, "validate", "--strict", "--root", str(root), str(case_file))[0:3:2] == (
        0,
        "",
    )

    # Recorded: --offline replays the same draft without calling the model.
    replayed = tmp_path / "again"
    code, out, err = _scaffold(
        capsys, replayed, "--model", MODEL, "--cache", str(cache), "--offline"
    )
    assert (code, err, model.calls) == (0, "", 1)
    again = json.loads((replayed / "security-review" / f"{NAME}.json").read_text())
    assert again["should_find"] == REVIEW_DRAFT["should_find"]
    assert again["notes"]["draft"] == marker


def test_a_rubric_draft_goes_into_the_manifest_entry(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    model: FakeAnthropic,
    github: FakeGitHub,
) -> None:
    model.reply(tool_use_reply("draft_rubric", {"rubric": RUBRIC}))
    root = tmp_path / "evals"
    code, out, err = _scaffold(capsys, root, "--format", "rubric", "--model", MODEL)
    assert (code, err) == (0, ""), err
    manifest_file = root / "rubric" / "rubric.json"
    manifest = json.loads(manifest_file.read_text())
    (entry,) = manifest["cases"]
    assert entry["rubric"] == RUBRIC and entry["draft"]["model"] == MODEL
    assert f"  assay check {manifest_file}\n" in out

    code, _, err = run_cli(capsys, "validate", "--strict", str(manifest_file))
    assert code == 2 and "the rubric is still the model's draft" in err
    entry["rubric"] = RUBRIC + " It should also ask for a test."
    manifest_file.write_text(json.dumps(manifest, indent=2))
    code, _, err = run_cli(capsys, "validate", "--strict", str(manifest_file))
    assert (code, err) == (0, ""), err


def test_an_answer_outside_the_schema_is_asked_again_once_then_nothing_is_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    model: FakeAnthropic,
    github: FakeGitHub,
) -> None:
    bad = {"should_find": [{"finding": FINDING, "severity": "catastrophic"}], "should_not_find": []}
    model.reply(malformed_tool_reply("draft_review_case"), tool_use_reply("draft_review_case", bad))
    root = tmp_path / "evals"
    code, out, err = _scaffold(capsys, root, "--model", MODEL)
    assert code == 2 and model.calls == 2
    assert f"--draft: {MODEL} gave no usable draft" in err and "severity" in err
    assert "nothing was written" in err and err.count("\n") == 1
    assert snapshot(root) == {}

    # The retry's answer, when valid, is the draft.
    model.reply(
        tool_use_reply("draft_review_case", bad),
        tool_use_reply("draft_review_case", REVIEW_DRAFT),
    )
    code, _, err = _scaffold(capsys, root, "--model", MODEL)
    assert (code, err, model.calls) == (0, "", 4)
    scenario = json.loads((root / "security-review" / f"{NAME}.json").read_text())
    assert scenario["should_find"] == REVIEW_DRAFT["should_find"]


def test_offline_without_a_recording_writes_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    model: FakeAnthropic,
    github: FakeGitHub,
) -> None:
    root = tmp_path / "evals"
    code, _, err = _scaffold(
        capsys, root, "--model", MODEL, "--cache", str(tmp_path / "c"), "--offline"
    )
    assert code == 2 and model.calls == 0
    assert "cannot be called: not in cache (--offline)" in err
    assert snapshot(root) == {}


def test_model_options_need_draft(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path), "--model", MODEL)
    assert code == 2 and "go with --draft" in err
