"""Every runtime records what the agent did: tool calls, messages, turns, tokens, final message.

A preset CLI (the fake `claude` on PATH, printing Claude Code's stream-json) and a command
agent (a Python script) are run for real; their `agent-transcript.json` is in the builtin
agent's transcript format, named by report.json (`--json` too) and shown in report.html.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.agents.cli_transcript import MAX_ITEMS
from assay.errors import AgentError
from assay.report.html_data import viewer_data
from assay.report.model import Report
from tests.agents.test_command_agent import _run
from tests.agents.test_presets import REVIEW_CASE, VERIFY_CASE, judge, on_path, run
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.fake_agent_cli import USAGE

__all__ = ["judge"]  # the fixture, used by name

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def in_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def _blocks(transcript: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        block
        for message in transcript["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == kind
    ]


def test_a_claude_code_review_case_keeps_its_tool_calls_turns_tokens_and_final_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    judge: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
) -> None:
    on_path(tmp_path, "claude-code", monkeypatch)
    capsys.readouterr()
    code, report = run(tmp_path, "claude-code", "-t", REVIEW_CASE, "--json")
    assert report is not None
    (case,) = report.cases
    assert case.status == "pass", case.reason
    (attempt,) = case.attempts
    assert attempt.transcript is not None and attempt.transcript.endswith(
        "/attempt-1/agent-transcript.json"
    )
    report_dir = tmp_path / "report"
    saved = json.loads((report_dir / attempt.transcript).read_text())
    assert saved["format"] == "assay.transcript.v1"
    assert (saved["case_id"], saved["kind"]) == (REVIEW_CASE, "review")

    # The prompt it was given, its tool call with its input and result, its final message.
    assert saved["messages"][0]["role"] == "user"
    assert "diff" in saved["messages"][0]["content"][0]["text"].lower()
    (call,) = _blocks(saved, "tool_use")
    assert (call["name"], call["id"], call["input"]) == ("read_file", "t0", {})
    (result,) = _blocks(saved, "tool_result")
    assert (result["tool_use_id"], result["content"]) == ("t0", "ok")
    final = saved["messages"][-1]
    assert final["role"] == "assistant" and '"findings"' in final["content"][0]["text"]
    said = [m["content"][0].get("text", "") for m in saved["messages"] if m["role"] == "assistant"]
    assert sum('"findings"' in text for text in said) == 1  # the final message, once

    activity = saved["result"]["activity"]
    assert activity["runtime"] == "claude-code"
    assert (activity["turns"], activity["tool_calls"]) == (2, 1)
    tokens = (saved["usage"]["input_tokens"], saved["usage"]["output_tokens"])
    assert tokens == (USAGE["input"] - USAGE["cache_read"], USAGE["output"])
    assert saved["usage"]["cost_usd"] == 0.0123
    assert (report_dir / attempt.transcript).parent.joinpath("agent.stdout").is_file()

    # report.json (and --json) name the record and say what the agent did.
    assert attempt.activity is not None
    assert (attempt.activity.runtime, attempt.activity.turns) == ("claude-code", 2)
    assert attempt.activity.tool_calls == 1
    assert attempt.activity.final_message == final["content"][0]["text"][:500]
    printed = json.loads(capsys.readouterr().out)["cases"][0]["attempts"][0]
    assert printed["transcript"] == attempt.transcript
    assert printed["activity"] == attempt.activity.model_dump(mode="json")

    # report.html's transcript view shows it as a conversation, with its summary.
    data = viewer_data(
        Report.model_validate_json((report_dir / "report.json").read_text()), report_dir
    )
    shown = data["cases"][0]["attempts"][0]["transcript"]
    messages = json.loads(shown["messages"].text)
    assert messages == saved["messages"]
    assert shown["activity"] == {
        "runtime": "claude-code",
        "turns": 2,
        "tool_calls": 1,
        "input_tokens": tokens[0],
        "output_tokens": tokens[1],
    }
    assert '"tool_use"' in (report_dir / "report.html").read_text()  # embedded in the page


def test_a_failing_cli_keeps_what_it_did_in_the_errored_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge: FakeAnthropic
) -> None:
    on_path(tmp_path, "claude-code", monkeypatch)
    monkeypatch.setenv("FAKE_CLI_MODE", "failed")
    _, report = run(tmp_path, "claude-code", "-t", VERIFY_CASE)
    assert report is not None
    (attempt,) = report.cases[0].attempts
    assert attempt.status == "error" and attempt.transcript is not None
    saved = json.loads((tmp_path / "report" / attempt.transcript).read_text())
    assert saved["error"] == "API Error: 529 overloaded"
    assert [b["name"] for b in _blocks(saved, "tool_use")] == ["read_file"]
    assert attempt.activity is not None
    assert (attempt.activity.runtime, attempt.activity.tool_calls) == ("claude-code", 1)


def test_a_command_agent_keeps_its_prose_trace_events_usage_and_answer(tmp_path: Path) -> None:
    body = """
        print("Looking at the diff first.")
        print(json.dumps({"type": "tool", "name": "read_file", "path": "app.py"}))
        print(json.dumps({"type": "verify", "name": "lint"}))
        print(json.dumps({"type": "usage", "usage": {"input_tokens": 12, "output_tokens": 3}}))
        print("key", os.environ["MY_SERVICE_TOKEN"], "in a line of prose")
        print(json.dumps({"findings": [{"title": "SQL injection", "severity": "high"}]}))
    """
    output, ctx = _run(tmp_path, "review", body, env={"MY_SERVICE_TOKEN": "tok-abcdef-123456"})
    assert output.transcript == ctx.artifacts_dir / "agent-transcript.json"
    saved = json.loads(output.transcript.read_text())
    assert "tok-abcdef-123456" not in output.transcript.read_text()
    calls = [(b["name"], b["input"]) for b in _blocks(saved, "tool_use")]
    assert calls == [("read_file", {"path": "app.py"}), ("verify:lint", {})]
    texts = [b["text"] for b in _blocks(saved, "text")]
    assert "Looking at the diff first." in texts
    assert "key [redacted] in a line of prose" in texts
    assert json.loads(texts[-1])["findings"][0]["title"] == "SQL injection"
    assert saved["result"]["activity"]["printed_usage"] == {"input_tokens": 12, "output_tokens": 3}
    assert saved["result"]["activity"]["tool_calls"] == 2 and saved["error"] is None
    assert output.activity is not None
    assert (output.activity["runtime"], output.activity["tool_calls"]) == ("command", 2)
    assert json.loads(output.activity["final_message"]) == json.loads(texts[-1])


def test_a_command_agent_without_an_answer_still_leaves_its_transcript(tmp_path: Path) -> None:
    body = """
        print(json.dumps({"type": "tool", "name": "grep", "pattern": "x" * 5000}))
        print("no answer")
    """
    with pytest.raises(AgentError, match="no findings"):
        _run(tmp_path, "review", body)
    saved = json.loads((tmp_path / "artifacts" / "agent-transcript.json").read_text())
    assert saved["error"].startswith("agent gave no findings")
    (call,) = _blocks(saved, "tool_use")
    assert call["name"] == "grep" and len(call["input"]["summary"]) < 1200  # bounded


def test_a_flood_of_events_is_bounded(tmp_path: Path) -> None:
    body = """
        for n in range(3000):
            print(json.dumps({"type": "tool", "name": f"t{n}"}))
    """
    output, _ = _run(tmp_path, "task", body)
    assert output.transcript is not None
    saved = json.loads(output.transcript.read_text())
    assert len(saved["messages"]) == MAX_ITEMS + 1  # the items kept, and a note of the rest
    assert (
        "more items of the agent's stream are not kept"
        in saved["messages"][-1]["content"][0]["text"]
    )
    assert saved["result"]["activity"]["tool_calls"] == 3000
    assert output.trace_events[:2] == ["tool:t0", "tool:t1"]
