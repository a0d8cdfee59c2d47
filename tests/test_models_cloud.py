"""`assay.models.generate` for bedrock/, vertex/ and gemini/ through the real SDKs to the
loopback fakes of their wire shapes: answers, forced tool calls, usage and cost, retries,
the record/replay cache, and what a missing credential or a rejected one says."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from assay.core.usage import Usage
from assay.errors import ModelError, ModelUnavailable
from assay.models import Message, ModelRequest, ToolSpec, generate
from assay.models import retry as retry_module
from assay.models.names import missing_credentials
from assay.models.pricing import cost_usd
from assay.options import RunOptions
from tests.fakes.anthropic_api import (
    dropped,
    rate_limited,
    server_error,
    text_reply,
    tool_use_reply,
)
from tests.fakes.cloud import SETUPS, CloudSetup

VERDICT = ToolSpec(
    name="record_verdict",
    description="Record the verdict.",
    input_schema={
        "type": "object",
        "properties": {"met": {"type": "boolean"}, "reasoning": {"type": "string"}},
        "required": ["met", "reasoning"],
    },
)
CLAUDE_PRICE = "claude-sonnet-4-6"
"""What the Bedrock and Vertex ids in SETUPS are priced as."""

pytestmark = pytest.mark.parametrize("cloud", SETUPS, ids=str)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waited: list[float] = []

    async def no_wait(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(retry_module, "sleep", no_wait)
    return waited


def ask(model: str, text: str = "Review this diff.", **fields: Any) -> ModelRequest:
    return ModelRequest(
        model=model,
        system="You review code.",
        messages=(Message("user", ({"type": "text", "text": text},)),),
        **fields,
    )


def run(request: ModelRequest, options: RunOptions | None = None) -> Any:
    return asyncio.run(generate(request, options=options))


def price_name(cloud: CloudSetup) -> str:
    return "gemini-2.5-flash" if cloud.provider == "gemini" else CLAUDE_PRICE


@pytest.mark.slow
def test_a_text_answer_with_usage_and_cost(
    cloud: CloudSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    with cloud.serving(monkeypatch) as fake:
        fake.reply(text_reply("LGTM", input_tokens=120, output_tokens=30))
        response = run(ask(cloud.model))
    assert response.text() == "LGTM" and response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (120, 30)
    expected = cost_usd(price_name(cloud), Usage(input_tokens=120, output_tokens=30))
    assert expected and response.usage.cost_usd == pytest.approx(expected)
    assert fake.calls == 1


def test_a_forced_tool_call_is_the_structured_verdict(
    cloud: CloudSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    with cloud.serving(monkeypatch) as fake:
        fake.reply(tool_use_reply("record_verdict", {"met": True, "reasoning": "found it"}))
        response = run(
            ask(cloud.model, tools=(VERDICT,), tool_choice="record_verdict", purpose="judge")
        )
        (body,) = fake.bodies()
    (call,) = response.tool_uses()
    assert (call["name"], call["input"]) == (
        "record_verdict",
        {"met": True, "reasoning": "found it"},
    )
    if cloud.provider == "gemini":  # function calling, forced with mode ANY
        calling = body["toolConfig"]["functionCallingConfig"]
        assert calling == {"mode": "ANY", "allowedFunctionNames": ["record_verdict"]}
        assert body["tools"][0]["functionDeclarations"][0]["name"] == "record_verdict"
    else:  # Anthropic tool use, the body as the Messages API has it less `model`
        assert body["tool_choice"] == {"type": "tool", "name": "record_verdict"}
        assert "model" not in body and body["anthropic_version"]


def test_a_tool_loop_sends_calls_and_results_back(
    cloud: CloudSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    with cloud.serving(monkeypatch) as fake:
        fake.reply(
            tool_use_reply(
                "record_verdict", {"met": False, "reasoning": "x"}, tool_use_id="toolu_1"
            )
        )
        first = run(ask(cloud.model, tools=(VERDICT,)))
        call = first.tool_uses()[0]
        follow_up = ask(cloud.model, tools=(VERDICT,))
        follow_up = ModelRequest(
            model=cloud.model,
            system="You review code.",
            tools=(VERDICT,),
            messages=(
                *follow_up.messages,
                Message("assistant", tuple(first.content)),
                Message(
                    "user",
                    ({"type": "tool_result", "tool_use_id": call["id"], "content": "noted"},),
                ),
            ),
        )
        assert run(follow_up).text() == "ok"
        second = fake.bodies()[1]
    if cloud.provider == "gemini":
        parts = [p for c in second["contents"] for p in c["parts"]]
        assert parts[1]["functionCall"]["name"] == "record_verdict"
        assert parts[2]["functionResponse"] == {
            "id": call["id"],
            "name": "record_verdict",
            "response": {"output": "noted"},
        }
    else:
        assert second["messages"][2]["content"][0]["tool_use_id"] == call["id"]


@pytest.mark.parametrize(
    "fault",
    [rate_limited(retry_after="1"), server_error(), dropped()],
    ids=["429", "500", "dropped"],
)
def test_transient_faults_are_retried(
    cloud: CloudSetup, fault: Any, monkeypatch: pytest.MonkeyPatch, no_backoff: list[float]
) -> None:
    with cloud.serving(monkeypatch) as fake:
        fake.inject(fault)
        assert run(ask(cloud.model)).text() == "ok"
        assert fake.calls == 2
    assert len(no_backoff) == 1


def test_the_cache_records_then_replays_without_a_call(
    cloud: CloudSetup, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    options = RunOptions(cache_dir=tmp_path / "cache")
    with cloud.serving(monkeypatch) as fake:
        fake.reply(tool_use_reply("record_verdict", {"met": True, "reasoning": "r"}))
        recorded = run(ask(cloud.model, tools=(VERDICT,), tool_choice="any"), options)
        replayed = run(ask(cloud.model, tools=(VERDICT,), tool_choice="any"), options)
        assert fake.calls == 1
    assert replayed.content == recorded.content and replayed.usage == recorded.usage


def test_a_rejected_credential_is_a_model_error_naming_the_model(
    cloud: CloudSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    with cloud.serving(monkeypatch) as fake:
        fake.api_key = "something-else"
        with pytest.raises(ModelError, match=cloud.provider):
            run(ask(cloud.model))


def test_without_credentials_the_model_is_unavailable(cloud: CloudSetup) -> None:
    reason = missing_credentials(cloud.model)
    assert reason is not None and reason.startswith(f"no credentials for {cloud.model}")
    with pytest.raises(ModelUnavailable, match="no credentials"):
        run(ask(cloud.model))


@pytest.mark.parametrize(
    ("model_id", "priced_as"),
    [
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1"),
        ("global.anthropic.claude-sonnet-4-6-v1", "claude-sonnet-4-6"),
        ("apac.anthropic.claude-sonnet-4-6", "claude-sonnet-4-6"),
    ],
)
def test_bedrock_ids_are_priced_as_the_claude_model_they_name(
    cloud: CloudSetup, model_id: str, priced_as: str
) -> None:
    del cloud  # the module's parametrisation; pricing is per provider name here
    from assay.models.registry import provider_cost

    usage = Usage(input_tokens=1000, output_tokens=100)
    assert provider_cost("bedrock", model_id, usage) == cost_usd(priced_as, usage)
    assert provider_cost("vertex", priced_as + "@20250929", usage) == cost_usd(priced_as, usage)


def test_a_missing_region_or_project_is_named(
    cloud: CloudSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    with cloud.serving(monkeypatch):
        if cloud.provider == "gemini":
            pytest.skip("Gemini's API has no region or project")
        for name in ("AWS_REGION", "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION"):
            monkeypatch.delenv(name, raising=False)
        with pytest.raises(ModelUnavailable, match="AWS_REGION|ANTHROPIC_VERTEX_PROJECT_ID"):
            run(ask(cloud.model))
