"""The OpenAI-compatible adapter: wire translation, and `generate` through the real SDK."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from assay.errors import ModelError, ModelUnavailable
from assay.models import Message, ModelRequest, ModelResponse, ToolSpec, generate
from assay.models import retry as retry_module
from assay.models.openai_provider import openai_from_env
from assay.models.openai_wire import (
    chat_messages,
    chat_tool_choice,
    chat_tools,
    from_chat_completion,
    stop_reason,
)
from tests.fakes.loopback import Reply
from tests.fakes.openai_api import (
    FakeOpenAI,
    chat_text_reply,
    chat_tool_reply,
    dropped,
    rate_limited,
    server_error,
)

KEY = "sk-openai-test-0123456789"
GREP = ToolSpec(
    "grep", "Search the sandbox.", {"type": "object", "properties": {"q": {"type": "string"}}}
)
SUBMIT = ToolSpec("submit", "Submit findings.", {"type": "object"})


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server


@pytest.fixture(autouse=True)
def _no_backoff_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_wait(seconds: float) -> None:
        pass

    monkeypatch.setattr(retry_module, "sleep", no_wait)


def conversation() -> tuple[Message, ...]:
    """A user turn, a tool call, its result plus a follow-up: every block kind."""
    return (
        Message("user", ({"type": "text", "text": "Review a.py"},)),
        Message(
            "assistant",
            (
                {"type": "thinking", "thinking": "let me look", "signature": "sig"},
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "call_1", "name": "grep", "input": {"q": "eval"}},
            ),
        ),
        Message(
            "user",
            (
                {"type": "tool_result", "tool_use_id": "call_1", "content": "a.py:3: eval(x)"},
                {"type": "text", "text": "Now submit."},
            ),
        ),
    )


def call(request: ModelRequest) -> ModelResponse:
    return asyncio.run(generate(request))


# -- translation (pure) ------------------------------------------------------------------
def test_messages_translate_to_chat_format() -> None:
    assert chat_messages("You review code.", conversation()) == [
        {"role": "system", "content": "You review code."},
        {"role": "user", "content": "Review a.py"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "grep", "arguments": '{"q": "eval"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.py:3: eval(x)"},
        {"role": "user", "content": "Now submit."},
    ]


def test_error_results_and_block_lists_become_tool_text() -> None:
    result = {
        "type": "tool_result",
        "tool_use_id": "c",
        "content": [{"type": "text", "text": "no such file"}],
        "is_error": True,
    }
    assert chat_messages("", [Message("user", (result,))]) == [
        {"role": "tool", "tool_call_id": "c", "content": "Error: no such file"}
    ]


def test_invalid_arguments_are_sent_back_verbatim() -> None:
    broken = {"type": "tool_use", "id": "c", "name": "submit", "input": {"__invalid_json__": "{x"}}
    [message] = chat_messages("", [Message("assistant", (broken,))])
    assert message["tool_calls"][0]["function"]["arguments"] == "{x"
    assert message["content"] is None


def test_tools_and_tool_choice_translate() -> None:
    assert chat_tools([GREP]) == [
        {
            "type": "function",
            "function": {
                "name": "grep",
                "description": "Search the sandbox.",
                "parameters": GREP.input_schema,
            },
        }
    ]
    assert chat_tool_choice(None) == "auto"
    assert chat_tool_choice("any") == "required"
    assert chat_tool_choice("submit") == {"type": "function", "function": {"name": "submit"}}


@pytest.mark.parametrize(
    ("finish", "canonical"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        (None, "end_turn"),
    ],
)
def test_finish_reasons_map_to_canonical_stop_reasons(finish: str | None, canonical: str) -> None:
    assert stop_reason(finish) == canonical


def test_completion_translates_back_with_cached_tokens() -> None:
    completion = {
        "choices": [
            {
                "message": {
                    "content": "Found one.",
                    "tool_calls": [
                        {"id": "c1", "function": {"name": "submit", "arguments": '{"n": 1}'}},
                        {"id": "c2", "function": {"name": "submit", "arguments": '{"n": '}},
                        {"id": "c3", "function": {"name": "submit", "arguments": "[1]"}},
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 60},
        },
    }
    content, stop, usage = from_chat_completion(completion)
    assert content == [
        {"type": "text", "text": "Found one."},
        {"type": "tool_use", "id": "c1", "name": "submit", "input": {"n": 1}},
        {"type": "tool_use", "id": "c2", "name": "submit", "input": {"__invalid_json__": '{"n": '}},
        {"type": "tool_use", "id": "c3", "name": "submit", "input": {"__invalid_json__": "[1]"}},
    ]
    assert stop == "tool_use"
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (40, 60, 7)


# -- through the real SDK and the fake ---------------------------------------------------
def test_round_trip_with_tool_calls(fake: FakeOpenAI) -> None:
    fake.reply(
        chat_tool_reply(("submit", {"findings": []}), text="Submitting.", prompt_tokens=1000)
    )
    request = ModelRequest(
        model="openai/gpt-4.1",
        system="You review code.",
        messages=conversation(),
        tools=(GREP, SUBMIT),
        tool_choice="submit",
        max_tokens=500,
    )
    response = call(request)
    [body] = fake.bodies()
    assert body["model"] == "gpt-4.1"
    assert body["messages"] == chat_messages("You review code.", conversation())
    assert body["tools"] == chat_tools([GREP, SUBMIT])
    assert body["tool_choice"] == {"type": "function", "function": {"name": "submit"}}
    # A custom base URL is a compatible server: `max_tokens`, and the temperature is sent.
    assert body["max_tokens"] == 500 and body["temperature"] == 0.0
    assert response.text() == "Submitting."
    [use] = response.tool_uses()
    assert use["name"] == "submit" and use["input"] == {"findings": []}
    assert use["id"].startswith("call_fake_")
    assert response.stop_reason == "tool_use"
    assert response.usage.cost_usd == pytest.approx((1000 * 2.0 + 20 * 8.0) / 1e6)


def test_unknown_local_model_has_no_cost(fake: FakeOpenAI) -> None:
    fake.reply(chat_text_reply("hi", cached_tokens=5))
    response = call(ModelRequest(model="qwen3-coder:30b", system="", messages=conversation()[:1]))
    assert response.text() == "hi"
    assert response.usage.cost_usd is None
    assert response.usage.cache_read_tokens == 5
    assert fake.bodies()[0]["messages"] == [{"role": "user", "content": "Review a.py"}]


def test_reasoning_models_get_no_temperature(fake: FakeOpenAI) -> None:
    call(ModelRequest(model="openai/o4-mini", system="", messages=conversation()[:1]))
    assert "temperature" not in fake.bodies()[0]


def test_local_server_needs_no_key(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    assert (
        call(ModelRequest(model="openai/llama3", system="", messages=conversation()[:1])).text()
        == "ok"
    )
    assert fake.requests[0].headers["authorization"].startswith("Bearer ")


def test_official_endpoint_without_key_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelUnavailable, match="OPENAI_API_KEY"):
        call(ModelRequest(model="openai/gpt-4o", system="", messages=conversation()[:1]))


def test_official_endpoint_uses_max_completion_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    async def params() -> dict[str, Any]:
        provider = openai_from_env()
        try:
            return provider.params(
                ModelRequest(model="gpt-5", system="", messages=conversation()[:1])
            )
        finally:
            await provider.aclose()

    sent = asyncio.run(params())
    assert sent["max_completion_tokens"] == 4096 and "max_tokens" not in sent
    assert "temperature" not in sent  # gpt-5 only takes its default temperature


def test_openrouter_uses_its_own_key_and_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(api_key="sk-or-test-key-123456") as server:
        monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-key-123456")
        monkeypatch.setenv("OPENROUTER_BASE_URL", server.base_url)
        server.reply(chat_text_reply("routed", prompt_tokens=10, completion_tokens=10))
        request = ModelRequest(
            model="openrouter/anthropic/claude-sonnet-4.5", system="", messages=conversation()[:1]
        )
        response = call(request)
        assert server.bodies()[0]["model"] == "anthropic/claude-sonnet-4.5"
    assert response.text() == "routed"
    assert response.usage.cost_usd == pytest.approx((10 * 3.0 + 10 * 15.0) / 1e6)


@pytest.mark.parametrize("fault", [rate_limited(retry_after="1"), server_error(), dropped()])
def test_faults_recover(fake: FakeOpenAI, fault: Any) -> None:
    fake.responder = lambda body: chat_text_reply("steady")
    fake.inject(fault)
    assert (
        call(ModelRequest(model="openai/gpt-4o", system="", messages=conversation()[:1])).text()
        == "steady"
    )
    assert fake.calls == 2


def test_rejected_key(fake: FakeOpenAI) -> None:
    fake.api_key = "sk-the-right-one-000000"
    with pytest.raises(ModelError, match="API key was rejected") as caught:
        call(ModelRequest(model="openai/gpt-4o", system="", messages=conversation()[:1]))
    assert KEY not in str(caught.value)
    assert fake.calls == 1


def test_a_200_body_that_is_not_json_is_retried_and_named(fake: FakeOpenAI) -> None:
    page = Reply(raw=b"<html>502 from a proxy</html>", headers={"content-type": "text/html"})
    fake.inject(page, times=6)
    with pytest.raises(ModelError) as caught:
        call(ModelRequest(model="openai/gpt-4.1", system="", messages=conversation()[:1]))
    assert fake.calls == 6
    assert "HTTP 200 (unreadable_response: an HTML page, not JSON (content-type: text/html" in (
        str(caught.value)
    )


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"[1, 2]", "expected a JSON object"),
        (b'{"choices": ["a string"]}', "'str' object has no attribute 'get'"),
        (
            b'{"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],'
            b' "usage": {"prompt_tokens": "many"}}',
            "invalid literal for int",
        ),
    ],
)
def test_a_json_body_of_the_wrong_shape_is_a_model_error(
    fake: FakeOpenAI, body: bytes, why: str
) -> None:
    """Not an internal error with a traceback: the server's answer is unusable."""
    fake.reply(Reply(raw=body))
    with pytest.raises(ModelError, match=f"unusable response: {why}"):
        call(ModelRequest(model="openai/gpt-4.1", system="", messages=conversation()[:1]))
    assert fake.calls == 1


def test_openais_key_is_never_sent_to_openrouter(monkeypatch: pytest.MonkeyPatch) -> None:
    """OPENAI_API_KEY is OpenAI's: with only it set, openrouter/ models have no key."""
    from assay.models.names import missing_credentials

    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.delenv("WARDEN_OPENROUTER_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-0123456789")
    assert missing_credentials("openrouter/anthropic/claude-sonnet-4.6") is not None
    assert missing_credentials("openai/gpt-5") is None
