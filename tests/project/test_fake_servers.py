"""The loopback fakes speak the real wire formats: the real SDKs parse every answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anthropic
import openai
import pytest

from tests.fakes.anthropic_api import (
    FakeAnthropic,
    dropped,
    malformed_tool_reply,
    overloaded,
    rate_limited,
    server_error,
    text_reply,
    tool_use_reply,
)
from tests.fakes.openai_api import FakeOpenAI, chat_text_reply, chat_tool_reply, openai_error
from tests.fakes.openai_api import rate_limited as openai_rate_limited

T = TypeVar("T")
USER = [{"role": "user", "content": "hello"}]


def with_anthropic(
    fake: FakeAnthropic, use: Callable[[anthropic.AsyncAnthropic], Awaitable[T]]
) -> T:
    async def scenario() -> T:
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-fake-000000", base_url=fake.url, max_retries=0
        )
        try:
            return await use(client)
        finally:
            await client.close()

    return asyncio.run(scenario())


def with_openai(fake: FakeOpenAI, use: Callable[[openai.AsyncOpenAI], Awaitable[T]]) -> T:
    async def scenario() -> T:
        client = openai.AsyncOpenAI(api_key="sk-fake-000000", base_url=fake.base_url, max_retries=0)
        try:
            return await use(client)
        finally:
            await client.close()

    return asyncio.run(scenario())


def create(**extra: Any) -> Callable[[anthropic.AsyncAnthropic], Awaitable[Any]]:
    async def use(client: anthropic.AsyncAnthropic) -> Any:
        return await client.messages.create(
            model="claude-test", max_tokens=64, messages=USER, **extra
        )

    return use


def complete(**extra: Any) -> Callable[[openai.AsyncOpenAI], Awaitable[Any]]:
    async def use(client: openai.AsyncOpenAI) -> Any:
        return await client.chat.completions.create(model="gpt-test", messages=USER, **extra)

    return use


# -- Anthropic -----------------------------------------------------------------------------
def test_text_reply_parses_as_a_message() -> None:
    with FakeAnthropic(
        replies=[text_reply("hi", input_tokens=7, output_tokens=2, cache_read=3)]
    ) as fake:
        message = with_anthropic(fake, create())
    assert (
        message.type == "message" and message.role == "assistant" and message.model == "claude-test"
    )
    assert message.id.startswith("msg_fake_")
    assert message.content[0].type == "text" and message.content[0].text == "hi"
    assert message.stop_reason == "end_turn" and message.stop_sequence is None
    assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 2)
    assert (
        message.usage.cache_read_input_tokens == 3
        and message.usage.cache_creation_input_tokens == 0
    )
    assert fake.calls == 1


def test_tool_use_and_malformed_input_parse() -> None:
    replies = [
        tool_use_reply("grep", {"q": "x"}, text="Searching."),
        malformed_tool_reply("grep", "{bad"),
    ]
    with FakeAnthropic(replies=replies) as fake:

        async def two(client: anthropic.AsyncAnthropic) -> list[Any]:
            return [await create()(client), await create()(client)]

        good, bad = with_anthropic(fake, two)
    assert [b.type for b in good.content] == ["text", "tool_use"]
    assert good.content[1].name == "grep" and good.content[1].input == {"q": "x"}
    assert good.stop_reason == "tool_use"
    assert bad.content[0].input == "{bad"


def test_responder_routes_by_prompt_after_the_queue() -> None:
    def route(body: dict[str, Any]) -> dict[str, Any]:
        prompt = str(body["messages"])
        return text_reply("case-A answer" if "[case-A]" in prompt else "other answer")

    with FakeAnthropic(replies=[text_reply("queued")], responder=route) as fake:

        async def three(client: anthropic.AsyncAnthropic) -> list[str]:
            answers = []
            for text in ("[case-A] first", "[case-A] again", "[case-B]"):
                message = await client.messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": text}]
                )
                answers.append(message.content[0].text)
            return answers

        assert with_anthropic(fake, three) == ["queued", "case-A answer", "other answer"]
        assert [b["messages"][0]["content"] for b in fake.bodies()][1] == "[case-A] again"


@pytest.mark.parametrize(
    ("fault", "error", "status", "error_type"),
    [
        (rate_limited(retry_after="3"), anthropic.RateLimitError, 429, "rate_limit_error"),
        (overloaded(), anthropic.InternalServerError, 529, "overloaded_error"),
        (server_error(), anthropic.InternalServerError, 500, "api_error"),
    ],
)
def test_faults_use_the_error_shape(
    fault: Any, error: type[Exception], status: int, error_type: str
) -> None:
    with FakeAnthropic() as fake:
        fake.inject(fault)
        with pytest.raises(error) as caught:
            with_anthropic(fake, create())
    assert caught.value.status_code == status  # type: ignore[attr-defined]
    body = caught.value.body  # type: ignore[attr-defined]
    assert body["type"] == "error" and body["error"]["type"] == error_type
    if status == 429:
        assert caught.value.response.headers["retry-after"] == "3"  # type: ignore[attr-defined]


def test_dropped_connection_is_a_connection_error() -> None:
    with FakeAnthropic() as fake:
        fake.inject(dropped())
        with pytest.raises(anthropic.APIConnectionError):
            with_anthropic(fake, create())


def test_slow_reply_and_latency() -> None:
    with FakeAnthropic(latency_s=0.05) as fake:
        fake.slow_reply(0.1, text_reply("eventually"))
        started = time.monotonic()
        message = with_anthropic(fake, create())
        assert message.content[0].text == "eventually"
        assert time.monotonic() - started >= 0.15


def test_wrong_key_is_a_401() -> None:
    with FakeAnthropic(api_key="sk-ant-only-this-one") as fake:
        with pytest.raises(anthropic.AuthenticationError):
            with_anthropic(fake, create())


def test_basic_request_validation() -> None:
    with FakeAnthropic() as fake:
        with pytest.raises(anthropic.BadRequestError, match="tool_choice may only be specified"):
            with_anthropic(fake, create(tool_choice={"type": "any"}))


# -- OpenAI --------------------------------------------------------------------------------
def test_openai_text_and_tool_calls_parse() -> None:
    replies = [
        chat_text_reply("hello", prompt_tokens=9, cached_tokens=4),
        chat_tool_reply(("grep", {"q": "x"}), ("submit", "{not json")),
    ]
    with FakeOpenAI(replies=replies) as fake:

        async def two(client: openai.AsyncOpenAI) -> list[Any]:
            return [await complete()(client), await complete()(client)]

        text, tools = with_openai(fake, two)
    assert text.choices[0].message.content == "hello" and text.choices[0].finish_reason == "stop"
    assert text.usage.prompt_tokens == 9 and text.usage.prompt_tokens_details.cached_tokens == 4
    calls = tools.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["grep", "submit"]
    assert (
        calls[0].function.arguments == '{"q": "x"}' and calls[1].function.arguments == "{not json"
    )
    assert tools.choices[0].finish_reason == "tool_calls"
    assert fake.calls == 2


def test_openai_errors_and_auth() -> None:
    with FakeOpenAI(api_key="sk-right-key-0000") as fake:
        with pytest.raises(openai.AuthenticationError):
            with_openai(fake, complete())
    with FakeOpenAI() as fake:
        fake.inject(openai_rate_limited(retry_after_ms="200"))
        with pytest.raises(openai.RateLimitError) as caught:
            with_openai(fake, complete())
        assert caught.value.response.headers["retry-after-ms"] == "200"
        fake.inject(openai_error(400, "invalid_request_error", "bad"))
        with pytest.raises(openai.BadRequestError):
            with_openai(fake, complete())


def test_openai_validation_catches_orphan_tool_messages() -> None:
    orphan = [*USER, {"role": "tool", "tool_call_id": "nope", "content": "x"}]
    with FakeOpenAI() as fake:

        async def use(client: openai.AsyncOpenAI) -> Any:
            return await client.chat.completions.create(model="m", messages=orphan)  # type: ignore[arg-type]

        with pytest.raises(openai.BadRequestError, match="tool message"):
            with_openai(fake, use)
