"""Model-backed cases through the whole runner: the builtin reviewer and the findings judge
over the real anthropic SDK, talking to the loopback fake of the Messages API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.models import retry
from assay.options import RunOptions
from assay.suites.case import Case, Expectation, FixtureFile, ReviewSpec
from tests.fakes import anthropic_api as fakes

API_KEY = "sk-ant-runner-test-key"
FINDING = {
    "severity": "high",
    "confidence": "high",
    "title": "user.name read without a null check",
    "description": "getUser may return null.",
    "location": {"path": "bugs/handler.ts", "startLine": 2},
}


def judge_verdict(met: bool) -> dict[str, Any]:
    return fakes.tool_use_reply(
        "record_verdict",
        {
            "should_find": [
                {
                    "index": 0,
                    "met": met,
                    "matchedFindingIndex": 0 if met else None,
                    "reasoning": "the finding names the null access" if met else "missed",
                }
            ],
            "should_not_find": [],
        },
    )


def responder(body: dict[str, Any]) -> dict[str, Any]:
    """Agent turns submit the finding; the judge answers per case, by the case's `given`."""
    text = json.dumps(body["messages"])
    if body["system"][0]["text"].startswith("You are the judge"):
        if "GARBLED-CASE" in text:
            return fakes.text_reply("I would rather not use the tool.")
        return judge_verdict(met="MISSED-CASE" not in text)
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


def review_case(tmp_path: Path, name: str, given: str) -> Case:
    fixture = tmp_path / "handler.ts"
    fixture.write_text("export function greet(id: string) {\n  return getUser(id).name;\n}\n")
    spec = ReviewSpec(
        given=given,
        files=(FixtureFile(fixture, "bugs/handler.ts"),),
        should_find=(Expectation("null access on user.name", "high"),),
    )
    return Case(
        id=f"bugs/{name}",
        suite="bugs",
        name=name,
        kind="review",
        format="review-yaml",
        source_path=tmp_path / "bugs.yaml",
        source_line=3,
        spec=spec,
    )


def test_review_cases_run_through_the_builtin_agent_and_the_judge(
    fake: Any, tmp_path: Path
) -> None:
    cases = [
        review_case(tmp_path, "caught", "greet reads name of a maybe-null user"),
        review_case(tmp_path, "missed", "MISSED-CASE greet reads name"),
        review_case(tmp_path, "garbled", "GARBLED-CASE greet reads name"),
    ]
    options = RunOptions(
        models=("anthropic/claude-sonnet-4-6",), report_dir=tmp_path / "report", max_errors=1
    )
    report = assay.run(options, cases=cases)

    by_name = {c.id.split("/")[1]: c for c in report.cases}
    caught = by_name["caught"]
    assert (caught.status, caught.runtime, caught.model) == (
        "pass",
        "builtin",
        "anthropic/claude-sonnet-4-6",
    )
    assert caught.findings[0]["title"] == FINDING["title"]
    assert caught.judge and caught.usage.input_tokens > 0
    assert caught.usage.cost_usd is not None and caught.usage.cost_usd > 0
    transcript = caught.attempts[0].transcript
    assert transcript and (tmp_path / "report" / transcript).is_file()

    assert by_name["missed"].status == "fail"
    garbled = by_name["garbled"]
    assert garbled.status == "error" and "judge" in garbled.reason.lower()
    assert "I would rather not use the tool." in garbled.judge["raw"]
    assert report.run.judge_model == "anthropic/claude-sonnet-4-6"
    assert report.summary.cost_usd is not None
    assert fake.calls >= 6
    for path in (tmp_path / "report").rglob("*"):
        if path.is_file():
            assert API_KEY not in path.read_text(errors="replace"), path
