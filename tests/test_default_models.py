"""Default models follow the keys the user has (issue 35): a Warden suite that names no
model defaults to OpenRouter's Claude; with only ANTHROPIC_API_KEY it runs the same model
through Anthropic and says so once; a model the user named is never moved, and when no
key serves a case `validate` and `run` say which variable would."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.models import retry
from assay.models.fallback import equivalents, same_model_elsewhere
from tests.fakes import anthropic_api as fakes

API_KEY = "sk-ant-default-models-key"
FINDING = {
    "severity": "high",
    "confidence": "high",
    "title": "user.name read without a null check",
    "description": "getUser may return null.",
    "location": {"path": "handler.ts", "startLine": 2},
}


def responder(body: dict[str, Any]) -> dict[str, Any]:
    if body["system"][0]["text"].startswith("You are the judge"):
        return fakes.tool_use_reply(
            "record_verdict",
            {
                "should_find": [
                    {"index": 0, "met": True, "matchedFindingIndex": 0, "reasoning": "named"}
                ],
                "should_not_find": [],
            },
        )
    return fakes.tool_use_reply("submit_findings", {"findings": [FINDING]})


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    async def no_sleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(retry, "sleep", no_sleep)
    with fakes.FakeAnthropic(api_key=API_KEY, responder=responder) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def minimal_suite(tmp_path: Path, model_line: str = "") -> Path:
    """A first Warden eval as a new user writes it: no runtime, no model."""
    (tmp_path / "handler.ts").write_text("export const f = (id) => getUser(id).name;\n")
    (tmp_path / "skill.md").write_text("---\nname: bugs\ndescription: d\n---\nFind bugs.\n")
    suite = tmp_path / "bugs.yaml"
    suite.write_text(
        "skill: skill.md\n"
        + model_line
        + "evals:\n"
        + "".join(
            f"  - name: {name}\n    given: reads a maybe-null user\n"
            "    files: [handler.ts]\n    should_find:\n      - finding: null access\n"
            for name in ("one", "two", "three")
        )
    )
    return suite


def test_openrouter_and_anthropic_names_map_both_ways() -> None:
    assert equivalents("openrouter/anthropic/claude-sonnet-4.6") == ("anthropic/claude-sonnet-4-6",)
    assert equivalents("anthropic/claude-sonnet-4-6") == ("openrouter/anthropic/claude-sonnet-4.6",)
    assert equivalents("anthropic/claude-3-5-haiku-20241022") == (
        "openrouter/anthropic/claude-3.5-haiku",
    )
    assert equivalents("openrouter/openai/gpt-4o") == ("openai/gpt-4o",)
    assert equivalents("openrouter/meta-llama/llama-3") == ()
    env = {"ANTHROPIC_API_KEY": "k"}
    assert same_model_elsewhere("openrouter/anthropic/claude-sonnet-4.6", env) == (
        "anthropic/claude-sonnet-4-6"
    )
    assert same_model_elsewhere("openrouter/anthropic/claude-sonnet-4.6", {}) is None


def test_a_minimal_warden_suite_runs_with_only_an_anthropic_key(
    fake: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = minimal_suite(tmp_path)
    report_dir = tmp_path / "report"
    code = main(["run", str(suite), "--report-dir", str(report_dir)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    report = json.loads((report_dir / "report.json").read_text())
    assert [c["status"] for c in report["cases"]] == ["pass"] * 3
    assert {c["model"] for c in report["cases"]} == {"anthropic/claude-sonnet-4-6"}
    note = (
        "3 cases ran the default model openrouter/anthropic/claude-sonnet-4.6 as "
        "anthropic/claude-sonnet-4-6: OPENROUTER_API_KEY is not set and ANTHROPIC_API_KEY is"
    )
    assert [n for n in report["run"]["notes"] if "default model" in n] == [
        note + "; name a model (--model, or model: in the suite) to choose"
    ]
    assert out.count(note) == 1
    assert note.split(":")[0] in (report_dir / "summary.md").read_text()
    assert fake.calls >= 6


def test_a_model_the_user_named_is_never_moved(
    fake: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = minimal_suite(tmp_path, "model: openrouter/anthropic/claude-sonnet-4.6\n")
    code = main(["run", str(suite), "--report-dir", str(tmp_path / "report")])
    out, err = capsys.readouterr()
    assert code == 1
    assert (
        "warning: 3 cases need OPENROUTER_API_KEY (for openrouter/anthropic/claude-sonnet-4.6)"
        in err
    )
    assert fake.calls == 0
    # Named on the command line: the same.
    suite = minimal_suite(tmp_path)
    argv = ["run", str(suite), "--model", "openrouter/anthropic/claude-sonnet-4.6"]
    assert main([*argv, "--report-dir", str(tmp_path / "r2")]) == 1
    assert fake.calls == 0


def test_without_any_key_validate_and_run_say_which_variable_would_run_the_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = minimal_suite(tmp_path)
    line = "3 cases need OPENROUTER_API_KEY (or ANTHROPIC_API_KEY for the same model)"
    assert main(["validate", str(suite)]) == 0
    assert f"warning: {line}" in capsys.readouterr().err
    assert main(["run", str(suite), "--report-dir", str(tmp_path / "report")]) == 1
    err = capsys.readouterr().err
    assert err.count(f"warning: {line}") == 1


def test_the_actions_key_preflight_counts_the_default_served_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.action.preflight import find_missing_model_key
    from assay.options import RunSettings
    from assay.suites.load import load_suites

    loaded = load_suites([str(minimal_suite(tmp_path))])
    settings = RunSettings()
    missing = find_missing_model_key(loaded.cases, options=settings, config=None)
    assert missing is not None and missing.model == "openrouter/anthropic/claude-sonnet-4.6"
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    assert find_missing_model_key(loaded.cases, options=settings, config=None) is None


def test_assays_own_default_moves_to_openrouter_and_a_named_one_stays(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sys
    from dataclasses import replace

    from assay.options import RunSettings
    from assay.runner.plan import plan_runs, run_notes
    from assay.suites.config import AssayConfig
    from tests.test_runner_plan import review_case

    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    settings = RunSettings()
    (run,) = plan_runs([review_case()], options=settings, config=None)
    moved = "openrouter/anthropic/claude-sonnet-4.6"
    assert (run.model, run.judge_model, run.skip_reason) == (moved, moved, None)
    assert run.moved == (("anthropic/claude-sonnet-4-6", moved),)
    assert run_notes([run], options=settings) == [
        f"1 case ran the default model anthropic/claude-sonnet-4-6 as {moved}: "
        "ANTHROPIC_API_KEY is not set and OPENROUTER_API_KEY is; name a model (--model, or "
        "model: in the suite) to choose"
    ]
    # Named by the case, by [tool.assay] model, or by --model: never moved.
    named = review_case(model="anthropic/claude-sonnet-4-6")
    config = AssayConfig(path=tmp_path / "pyproject.toml", model="anthropic/claude-sonnet-4-6")
    for case, cfg, options in (
        (named, None, settings),
        (review_case(), config, settings),
        (review_case(), None, replace(settings, models=("anthropic/claude-sonnet-4-6",))),
    ):
        (run,) = plan_runs([case], options=options, config=cfg)
        assert run.model == "anthropic/claude-sonnet-4-6" and run.moved == ()
        assert run.skip_reason is not None
    # A named judge stays; the default subject of a command agent is not called, so the
    # default judge moves alone.
    options = replace(settings, agent_command=(sys.executable,))
    (run,) = plan_runs([review_case()], options=options, config=None)
    assert (run.runtime, run.model, run.judge_model) == ("command", None, moved)
    (run,) = plan_runs(
        [review_case()], options=replace(options, judge_model="claude-x"), config=None
    )
    assert run.judge_model == "claude-x" and run.skip_reason is not None
