"""`assay.models.generate` against the loopback Anthropic fake, through the real SDK."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from assay.errors import ModelError, ModelUnavailable
from assay.models import (
    Message,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    ToolSpec,
    generate,
    limiter_for,
    provider_for,
)
from assay.models import retry as retry_module
from assay.options import RunOptions
from tests.fakes.anthropic_api import (
    FakeAnthropic,
    anthropic_error,
    dropped,
    malformed_tool_reply,
    overloaded,
    rate_limited,
    server_error,
    text_reply,
    tool_use_reply,
)
from tests.fakes.loopback import Reply

KEY = "sk-ant-test-0123456789abcdef"
MODEL = "anthropic/claude-sonnet-4-6"
FIND_TOOL = ToolSpec(
    name="report_findings",
    description="Report the findings of the review.",
    input_schema={"type": "object", "properties": {"findings": {"type": "array"}}},
)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waited: list[float] = []

    async def no_wait(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(retry_module, "sleep", no_wait)
    return waited


def ask(text: str = "Review this diff.", **fields: Any) -> ModelRequest:
    return ModelRequest(
        model=fields.pop("model", MODEL),
        system="You review code.",
        messages=(Message("user", ({"type": "text", "text": text},)),),
        **fields,
    )


def call(request: ModelRequest, **kwargs: Any) -> ModelResponse:
    return asyncio.run(generate(request, **kwargs))


def test_text_reply_with_usage_and_cost(fake: FakeAnthropic) -> None:
    fake.reply(
        text_reply(
            "No issues.", input_tokens=1000, output_tokens=200, cache_read=500, cache_write=100
        )
    )
    response = call(ask())
    assert response.text() == "No issues."
    assert response.stop_reason == "end_turn"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens) == (1000, 200)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (500, 100)
    assert usage.cost_usd == pytest.approx((1000 * 3 + 200 * 15 + 500 * 0.3 + 100 * 3.75) / 1e6)


def test_request_wire_format(fake: FakeAnthropic) -> None:
    call(ask(max_tokens=777))
    [body] = fake.bodies()
    assert body["model"] == "claude-sonnet-4-6"  # the provider prefix is not sent
    assert body["max_tokens"] == 777
    assert body["system"] == [
        {"type": "text", "text": "You review code.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Review this diff."}]}
    ]
    # API version 2026-10-21 rejects sampling parameters; no tools -> no tool_choice.
    assert "temperature" not in body and "tool_choice" not in body
    [request] = fake.requests
    assert request.headers["x-stainless-retry-count"] == "0"


def test_cache_prefix_off_sends_no_breakpoint(fake: FakeAnthropic) -> None:
    call(ask(cache_prefix=False))
    assert fake.bodies()[0]["system"] == [{"type": "text", "text": "You review code."}]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (None, {"type": "auto"}),
        ("any", {"type": "any"}),
        ("report_findings", {"type": "tool", "name": "report_findings"}),
    ],
)
def test_tools_and_tool_choice(
    fake: FakeAnthropic, choice: str | None, wire: dict[str, str]
) -> None:
    fake.reply(tool_use_reply("report_findings", {"findings": []}, text="Done."))
    response = call(ask(tools=(FIND_TOOL,), tool_choice=choice))
    body = fake.bodies()[0]
    assert body["tools"] == [
        {
            "name": "report_findings",
            "description": "Report the findings of the review.",
            "input_schema": FIND_TOOL.input_schema,
        }
    ]
    assert body["tool_choice"] == wire
    assert response.stop_reason == "tool_use"
    [use] = response.tool_uses()
    assert use["name"] == "report_findings" and use["input"] == {"findings": []}
    assert use["id"].startswith("toolu_")
    assert response.text() == "Done."


def test_a_model_that_refuses_forced_tool_choice_is_asked_with_auto(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    """Models with extended thinking (and some newer ones) reject a forced tool_choice."""

    def refuse_forcing(body: dict[str, Any]) -> Any:
        if body.get("tool_choice", {}).get("type") in {"any", "tool"}:
            return anthropic_error(
                400,
                "invalid_request_error",
                "tool_choice forces tool use, which is not supported with this model",
            )
        return tool_use_reply("report_findings", {"findings": []})

    fake.responder = refuse_forcing
    model = "anthropic/claude-refuses-forcing-1"  # the fallback is remembered per model
    first = call(ask(model=model, tools=(FIND_TOOL,), tool_choice="report_findings"))
    assert first.tool_uses()[0]["name"] == "report_findings"
    assert [b.get("tool_choice") for b in fake.bodies()] == [
        {"type": "tool", "name": "report_findings"},
        {"type": "auto"},
    ]
    call(ask("Again.", model=model, tools=(FIND_TOOL,), tool_choice="any"))
    assert fake.bodies()[-1].get("tool_choice") == {"type": "auto"}  # no wasted 400 now
    assert fake.calls == 3 and sleeps == []


def test_malformed_tool_input_is_handed_back_for_a_retry(fake: FakeAnthropic) -> None:
    fake.reply(malformed_tool_reply("report_findings", '{"findings": [{"title"'))
    response = call(ask(tools=(FIND_TOOL,), tool_choice="any"))
    [use] = response.tool_uses()
    assert use["input"] == {"__invalid_json__": '{"findings": [{"title"'}


def test_tool_use_conversation_maps_one_to_one(fake: FakeAnthropic) -> None:
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "print(1)",
        "is_error": False,
    }
    request = ModelRequest(
        model=MODEL,
        system="s",
        messages=(
            Message("user", ({"type": "text", "text": "look"},)),
            Message("assistant", (tool_use,)),
            Message("user", (result,)),
        ),
        tools=(FIND_TOOL,),
    )
    call(request)
    sent = fake.bodies()[0]["messages"]
    assert sent[1] == {"role": "assistant", "content": [tool_use]}
    assert sent[2] == {"role": "user", "content": [result]}


FAULTS = {
    "429 with retry-after": rate_limited(retry_after="0"),
    "529 overloaded": overloaded(),
    "500": server_error(),
    "dropped connection": dropped(),
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_each_fault_recovers_with_the_same_answer(
    fake: FakeAnthropic, sleeps: list[float], fault: Reply
) -> None:
    fake.responder = lambda body: text_reply("final answer", input_tokens=11, output_tokens=3)
    baseline = call(ask())
    fake.inject(fault)
    recovered = call(ask())
    assert recovered == baseline
    assert fake.calls == 3  # baseline, the fault, the retry
    first, faulted, retried = fake.bodies()
    assert first == faulted == retried  # the same request, sent again
    assert len(sleeps) == 1


def test_slow_response_times_out_and_is_retried(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.slow_reply(0.6, text_reply("too late"))
    fake.reply(text_reply("in time"))
    response = call(ask(), retry_policy=RetryPolicy(timeout_s=0.2))
    assert response.text() == "in time"
    assert fake.calls == 2 and len(sleeps) == 1


@pytest.mark.parametrize(
    ("headers", "expected"),
    [({"retry_after": "7"}, 7.0), ({"retry_after_ms": "1500"}, 1.5)],
)
def test_retry_after_is_honoured(
    fake: FakeAnthropic, sleeps: list[float], headers: dict[str, str], expected: float
) -> None:
    fake.inject(rate_limited(**headers))
    assert call(ask()).text() == "ok"
    assert sleeps == [expected]


def test_retry_after_as_http_date(fake: FakeAnthropic, sleeps: list[float]) -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    fake.inject(rate_limited(retry_after=when))
    call(ask())
    [waited] = sleeps
    assert 25 <= waited <= 31


def test_exhausted_retries_raise_model_error(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.inject(overloaded(), times=6)
    with pytest.raises(
        ModelError, match=r"gave up after 6 attempt\(s\).*HTTP 529.*overloaded_error"
    ):
        call(ask())
    assert fake.calls == 6 and len(sleeps) == 5


def test_retry_after_beyond_the_time_budget_gives_up_at_once(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    fake.inject(rate_limited(retry_after="600"))
    with pytest.raises(ModelError, match="gave up after 1 attempt"):
        call(ask(), retry_policy=RetryPolicy(max_total_s=60))
    assert sleeps == [] and fake.calls == 1


def test_rejected_key_is_not_retried_and_not_shown(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    fake.api_key = "sk-ant-the-right-key-000000"
    with pytest.raises(ModelError) as caught:
        call(ask())
    message = str(caught.value)
    assert "API key was rejected" in message and "401" in message
    assert KEY not in message and fake.api_key not in message
    assert fake.calls == 1 and sleeps == []


@pytest.mark.parametrize("status", [400, 403, 404])
def test_client_errors_fail_at_once(fake: FakeAnthropic, sleeps: list[float], status: int) -> None:
    fake.inject(anthropic_error(status, "invalid_request_error", "model: unknown model"))
    with pytest.raises(ModelError, match=f"HTTP {status}"):
        call(ask())
    assert fake.calls == 1 and sleeps == []


def test_missing_key_makes_the_model_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelUnavailable, match="ANTHROPIC_API_KEY"):
        call(ask())


def test_prefixed_key_is_bridged(fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ASSAY_ANTHROPIC_API_KEY", KEY)
    fake.api_key = KEY
    assert call(ask()).text() == "ok"


def test_rate_limit_halves_the_shared_limiter(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.inject(rate_limited(retry_after="0"))

    async def scenario() -> tuple[int, int]:
        options = RunOptions(concurrency=8)
        limiter = await limiter_for("anthropic", 8)
        before = limiter.limit
        await generate(ask(), options=options)
        return before, limiter.limit

    assert asyncio.run(scenario()) == (8, 4)


def test_client_is_reused_on_a_loop_and_closed_with_it(fake: FakeAnthropic) -> None:
    async def scenario() -> Any:
        await generate(ask("one"))
        first = await provider_for("anthropic")
        await generate(ask("two"))
        assert await provider_for("anthropic") is first
        return first

    provider = asyncio.run(scenario())
    assert fake.calls == 2
    assert provider.client.is_closed()
    ports = {r.headers.get("host") for r in fake.requests}
    assert len(ports) == 1


@pytest.mark.parametrize(
    ("body", "what", "content_type"),
    [
        (b"<html>502 from a proxy</html>", "an HTML page, not JSON", "text/html"),
        (b"", "an empty body", "application/json"),
        (b"upstream connect error", "a body that is not JSON", "text/plain"),
    ],
)
def test_a_200_answer_that_is_not_json_is_retried_like_a_5xx(
    fake: FakeAnthropic, sleeps: list[float], body: bytes, what: str, content_type: str
) -> None:
    fake.reply(Reply(raw=body, headers={"content-type": content_type}), text_reply("fine"))
    assert call(ask()).text() == "fine"
    assert fake.calls == 2 and len(sleeps) == 1

    fake.inject(Reply(raw=body, headers={"content-type": content_type}), times=6)
    with pytest.raises(ModelError) as caught:
        call(ask())
    message = str(caught.value)
    assert "gave up after 6 attempt(s)" in message
    assert f"HTTP 200 (unreadable_response: {what} (content-type: {content_type}," in message


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"[1, 2]", "expected a JSON object, got list"),
        (b'{"type": "message"}', "not a Messages response"),
        (
            b'{"type": "message", "role": "assistant", "content": [], "stop_reason": "end_turn",'
            b' "usage": {"input_tokens": 1' + b"0" * 400 + b', "output_tokens": 1}}',
            "input_tokens: Input should be less than or equal to 1000000000000000",
        ),
    ],
)
def test_a_body_that_is_not_a_message_is_a_model_error(
    fake: FakeAnthropic, sleeps: list[float], body: bytes, why: str
) -> None:
    fake.reply(Reply(raw=body))
    with pytest.raises(ModelError, match=f"claude-sonnet-4-6: unusable response: {why}"):
        call(ask())
    assert fake.calls == 1


def test_thinking_blocks_come_back_as_sent_without_nulls(fake: FakeAnthropic) -> None:
    thinking = {"type": "thinking", "thinking": "check the loop", "signature": "c2ln"}
    fake.reply(
        {
            **text_reply("Done."),
            "content": [
                {**thinking, "extra": None},
                {"type": "text", "text": "Done.", "citations": None},
            ],
        }
    )
    response = call(ask())
    assert response.content == [thinking, {"type": "text", "text": "Done."}]


def test_calls_go_through_the_sdks_aiohttp_transport(fake: FakeAnthropic) -> None:
    async def scenario() -> Any:
        await generate(ask())
        return (await provider_for("anthropic")).client

    client = asyncio.run(scenario())
    assert type(client._client).__name__ == "_DefaultAioHttpClient"


def test_without_aiohttp_the_sdks_default_transport_serves(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing_extra(**kwargs: Any) -> Any:
        raise RuntimeError("To use the aiohttp client you must have installed the package")

    monkeypatch.setattr(anthropic, "DefaultAioHttpClient", missing_extra)

    async def scenario() -> Any:
        response = await generate(ask())
        return response, (await provider_for("anthropic")).client

    response, client = asyncio.run(scenario())
    assert response.text() == "ok" and fake.calls == 1
    assert type(client._client).__name__ != "_DefaultAioHttpClient"
