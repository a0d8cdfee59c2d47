"""The bridge's translators and its server, each API spoken by its real SDK.

A session's server is started on the test's loop, with the fake provider behind assay's
model layer; the SDK clients (anthropic, openai; chat completions and responses, whole and
streamed) call it with the session's token. Tool calls and tool results round-trip, the
wrong key and a malformed body are refused in the API's own error shape, and the cache key
ignores what varies per session.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from assay.bridge import anthropic_api, openai_chat, openai_responses
from assay.bridge.normalise import PathNames, keyed_request
from assay.bridge.server import OPENROUTER_BASE_PATH, serve
from assay.core.usage import Usage
from assay.models.base import ModelResponse
from assay.models.cache import request_key
from tests.bridge.providers import KEY, OPENAI_KEY, session
from tests.fakes.anthropic_api import FakeAnthropic, text_reply, tool_use_reply
from tests.fakes.openai_api import FakeOpenAI, chat_text_reply, chat_tool_reply

TOOL = {"name": "read_file", "description": "Read a file.", "input_schema": {"type": "object"}}


def test_anthropic_messages_whole_and_streamed_with_a_tool_round_trip(
    tmp_path: Path, anthropic_fake: FakeAnthropic
) -> None:
    anthropic_fake.reply(
        tool_use_reply("read_file", {"path": "a.py"}, text="Let me look.", tool_use_id="toolu_1"),
        text_reply("It is fine.", input_tokens=30, output_tokens=5),
    )
    bridge = session(tmp_path)

    async def go() -> tuple[Any, Any]:
        async with serve(bridge) as url:
            client = anthropic.AsyncAnthropic(api_key=bridge.token, base_url=url, max_retries=0)
            first = await client.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=100,
                system=[
                    {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
                ],
                messages=[{"role": "user", "content": "Check a.py"}],
                tools=[TOOL],  # type: ignore[list-item]
            )
            turn = [b.model_dump(exclude_none=True) for b in first.content]
            async with client.messages.stream(
                model="claude-sonnet-4-6",
                max_tokens=100,
                messages=[
                    {"role": "user", "content": "Check a.py"},
                    {"role": "assistant", "content": turn},  # type: ignore[typeddict-item]
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = 1"}
                        ],
                    },
                ],
                tools=[TOOL],  # type: ignore[list-item]
            ) as stream:
                second = await stream.get_final_message()
            await client.close()
            return first, second

    first, second = asyncio.run(go())
    assert [b.type for b in first.content] == ["text", "tool_use"]
    assert first.content[1].input == {"path": "a.py"} and first.stop_reason == "tool_use"
    assert second.content[0].text == "It is fine." and second.usage.input_tokens == 30
    sent = anthropic_fake.bodies()
    assert sent[0]["system"][0]["text"] == "Be brief."
    assert sent[1]["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "x = 1",
    }
    assert bridge.calls == 2 and bridge.usage.input_tokens == 40 + 30
    assert bridge.usage.cost_usd is not None and bridge.usage.cost_usd > 0
    lines = (tmp_path / "model-calls.jsonl").read_text().splitlines()
    assert [json.loads(line)["stream"] for line in lines] == [False, True]
    assert bridge.token not in "".join(lines) and KEY not in "".join(lines)


def test_openai_chat_completions_whole_and_streamed_with_a_tool_round_trip(
    tmp_path: Path, openai_fake: FakeOpenAI
) -> None:
    openai_fake.reply(
        chat_tool_reply(("read_file", {"path": "a.py"})),
        chat_text_reply("It is fine.", prompt_tokens=50, cached_tokens=20),
    )
    bridge = session(tmp_path)
    tools = [
        {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}
    ]

    async def go() -> tuple[Any, list[Any]]:
        async with serve(bridge) as url:
            client = openai.AsyncOpenAI(api_key=bridge.token, base_url=f"{url}/v1", max_retries=0)
            messages: list[Any] = [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Check a.py"},
            ]
            first = await client.chat.completions.create(
                model="gpt-5",
                messages=messages,
                tools=tools,  # type: ignore[arg-type]
            )
            call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
            messages += [
                first.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": call.id, "content": "x = 1"},
            ]
            chunks = [
                chunk
                async for chunk in await client.chat.completions.create(
                    model="gpt-5",
                    messages=messages,
                    tools=tools,  # type: ignore[arg-type]
                    stream=True,
                    stream_options={"include_usage": True},
                )
            ]
            await client.close()
            return first, chunks

    first, chunks = asyncio.run(go())
    call = first.choices[0].message.tool_calls[0]
    assert call.function.name == "read_file" and json.loads(call.function.arguments) == {
        "path": "a.py"
    }
    assert first.choices[0].finish_reason == "tool_calls"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "It is fine."
    assert chunks[-1].usage.prompt_tokens == 50 and chunks[-1].usage.completion_tokens == 10
    upstream = openai_fake.bodies()[1]["messages"]
    assert upstream[0] == {"role": "system", "content": "Be brief."}
    assert upstream[-1] == {"role": "tool", "tool_call_id": call.id, "content": "x = 1"}
    assert bridge.usage.cache_read_tokens == 20 and bridge.usage.input_tokens == 40 + 30


def test_openai_responses_with_a_custom_tool_round_trip(
    tmp_path: Path, openai_fake: FakeOpenAI
) -> None:
    """Codex's free-form `apply_patch` is a custom tool: offered as a function of one
    string, called back as a custom_tool_call whose input is that string."""
    openai_fake.reply(chat_tool_reply(("apply_patch", {"input": "*** Begin Patch"})))
    bridge = session(tmp_path)
    body = {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
        ],
        "tools": [{"type": "custom", "name": "apply_patch", "description": "Patch files."}],
        "store": False,
    }

    async def go() -> Any:
        async with serve(bridge) as url:
            client = openai.AsyncOpenAI(api_key=bridge.token, base_url=f"{url}/v1", max_retries=0)
            response = await client.responses.create(**body)  # type: ignore[call-overload]
            await client.close()
            return response

    response = asyncio.run(go())
    (item,) = response.output
    assert item.type == "custom_tool_call" and item.input == "*** Begin Patch"
    (sent,) = openai_fake.bodies()
    (tool,) = sent["tools"]
    assert tool["function"]["parameters"]["required"] == ["input"]
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "fix it"},
    ]


def test_the_wrong_key_and_a_malformed_body_are_refused_in_the_apis_shape(
    tmp_path: Path, anthropic_fake: FakeAnthropic
) -> None:
    bridge = session(tmp_path)

    async def go() -> tuple[Exception, Exception, Exception]:
        async with serve(bridge) as url:
            errors = []
            for key, body in (
                (KEY, {"model": "claude-sonnet-4-6", "max_tokens": 5, "messages": []}),
                (bridge.token, {"model": "claude-sonnet-4-6", "max_tokens": 5, "messages": "no"}),
            ):
                client = anthropic.AsyncAnthropic(api_key=key, base_url=url, max_retries=0)
                try:
                    await client.messages.create(**body)  # type: ignore[call-overload]
                except Exception as exc:  # noqa: BLE001 - the SDK's error is the result
                    errors.append(exc)
                await client.close()
            chat = openai.AsyncOpenAI(api_key="sk-other", base_url=f"{url}/v1", max_retries=0)
            try:
                await chat.chat.completions.create(model="gpt-5", messages=[])
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)
            await chat.close()
            return errors[0], errors[1], errors[2]

    wrong_key, malformed, openai_wrong_key = asyncio.run(go())
    assert isinstance(wrong_key, anthropic.AuthenticationError)  # the real key is not its key
    assert isinstance(malformed, anthropic.BadRequestError)
    assert "messages: a list is required" in str(malformed)
    assert isinstance(openai_wrong_key, openai.AuthenticationError)
    assert anthropic_fake.calls == 0 and bridge.calls == 0


def test_an_offline_miss_is_refused_and_kept_as_the_reason(
    tmp_path: Path, anthropic_fake: FakeAnthropic
) -> None:
    bridge = session(tmp_path, cache_dir=tmp_path / "cache", offline=True)

    async def go() -> Exception:
        async with serve(bridge) as url:
            client = anthropic.AsyncAnthropic(api_key=bridge.token, base_url=url, max_retries=0)
            with pytest.raises(anthropic.BadRequestError) as caught:
                await client.messages.create(
                    model="claude-sonnet-4-6",
                    max_tokens=5,
                    messages=[{"role": "user", "content": "hi"}],
                )
            await client.close()
            return caught.value

    error = asyncio.run(go())
    assert "not in cache (--offline)" in str(error)
    assert bridge.stopped == "not in cache (--offline)" and anthropic_fake.calls == 0


def test_openrouter_chat_requests_are_for_assays_openrouter_models() -> None:
    """Under the bridge's OpenRouter path the body's model is OpenRouter's id, so assay's
    `openrouter/` one (not its own `anthropic/` model of a like name); OpenRouter's own
    fields are dropped before the call and the cache key."""
    plain = {
        "model": "anthropic/claude-sonnet-4.5",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Check a.py"},
        ],  # fmt: skip
    }
    openrouters = {
        "usage": {"include": True},  # LiteLLM's and OpenRouter's SDK's usage accounting
        "transforms": ["middle-out"],
        "models": ["openai/gpt-5"],
        "route": "fallback",
        "provider": {"order": ["Anthropic"], "allow_fallbacks": False},
        "plugins": [{"id": "web"}],
        "reasoning": {"effort": "high"},
    }
    request = openai_chat.from_chat_request({**plain, **openrouters}, sample=0,
                                            provider="openrouter")  # fmt: skip
    assert request.model == "openrouter/anthropic/claude-sonnet-4.5"
    assert request.system == "Be brief."
    without = openai_chat.from_chat_request(plain, sample=0, provider="openrouter")
    assert request == without
    assert request_key("openrouter", request) == request_key("openrouter", without)
    # On the plain OpenAI path the same body is OpenAI's model of that name.
    assert (
        openai_chat.from_chat_request(plain, sample=0).model == "openai/anthropic/claude-sonnet-4.5"
    )


def test_the_openrouter_path_answers_through_assays_openrouter_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CLI pointed at `<bridge>/openrouter/api/v1` (OpenRouter's base URL shape) is
    answered by assay's `openrouter/` provider: OpenRouter is called with its own model id
    and the real key, never the CLI's OpenRouter-only fields."""
    with FakeOpenAI(api_key=OPENAI_KEY) as upstream:
        monkeypatch.setenv("OPENROUTER_API_KEY", OPENAI_KEY)
        monkeypatch.setenv("OPENROUTER_BASE_URL", upstream.base_url)
        upstream.reply(chat_text_reply("It is fine."))
        bridge = session(tmp_path)

        async def go() -> Any:
            async with serve(bridge) as url:
                base = f"{url}{OPENROUTER_BASE_PATH}"
                client = openai.AsyncOpenAI(api_key=bridge.token, base_url=base, max_retries=0)
                answer = await client.chat.completions.create(
                    model="anthropic/claude-sonnet-4.5",
                    messages=[{"role": "user", "content": "Check a.py"}],
                    extra_body={"usage": {"include": True}, "transforms": ["middle-out"]},
                    extra_headers={"HTTP-Referer": "https://opencode.ai/", "X-Title": "opencode"},
                )
                await client.close()
                return answer

        answer = asyncio.run(go())
        (sent,) = upstream.bodies()
    assert answer.choices[0].message.content == "It is fine."
    assert answer.model == "anthropic/claude-sonnet-4.5"
    assert sent["model"] == "anthropic/claude-sonnet-4.5"
    assert "transforms" not in sent
    lines = (tmp_path / "model-calls.jsonl").read_text().splitlines()
    assert [json.loads(line)["api"] for line in lines] == ["openrouter-chat"]
    assert bridge.usage.cost_usd is not None and bridge.usage.cost_usd > 0


def test_the_cache_key_ignores_what_varies_per_session() -> None:
    """metadata, cache_control, stream, the attempt's directories and today's date."""

    def body(user: str, where: str, day: str, *, stream: bool) -> dict[str, Any]:
        return {
            "model": "claude-sonnet-4-6",
            "max_tokens": 100,
            "stream": stream,
            "metadata": {"user_id": user},
            "system": [
                {
                    "type": "text",
                    "text": f"Working directory: {where}/repo. Today's date is {day}.",
                    "cache_control": {"type": "ephemeral"},
                }
            ],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": f"the diff is in {where}/scratch/diff.patch",
                            "cache_control": {"type": "ephemeral"},
                        }
                    ],
                }
            ],  # fmt: skip
        }

    def key(raw: dict[str, Any], where: str) -> str:
        request = anthropic_api.from_messages_request(raw, sample=0)
        names = PathNames.of([(Path(where), "<sandbox>")])
        return request_key("anthropic", keyed_request(request, names))

    one = key(body("u1", "/tmp/assay-run-a/s1", "2026-12-06", stream=True), "/tmp/assay-run-a/s1")
    two = key(body("u2", "/tmp/assay-run-b/s9", "2026-12-07", stream=False), "/tmp/assay-run-b/s9")
    other = key(body("u1", "/tmp/x", "2026-12-06", stream=True), "/tmp/y")
    assert one == two
    assert other != one  # a path that is not the attempt's stays in the key
    # opencode dates its environment block as JavaScript's Date.toDateString does.
    sunday = key(body("u1", "/tmp/a", "Sun Dec 06 2026", stream=True), "/tmp/a")
    monday = key(body("u1", "/tmp/b", "Mon Dec 07 2026", stream=True), "/tmp/b")
    assert sunday == monday


def test_streamed_events_rebuild_the_whole_answer() -> None:
    """Each API's stream, folded back, is the whole answer it was made from."""
    response = ModelResponse(
        content=[
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
        ],
        stop_reason="tool_use",
        usage=Usage(input_tokens=10, output_tokens=3, cache_read_tokens=4),
    )
    message = anthropic_api.to_message(response, "claude-sonnet-4-6")
    blocks: dict[int, dict[str, Any]] = {}
    for name, data in anthropic_api.message_events(message):
        if name == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
        elif name == "content_block_delta":
            block, delta = blocks[data["index"]], data["delta"]
            if delta["type"] == "input_json_delta":
                block["input"] = json.loads(delta["partial_json"])
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            else:
                field = delta["type"].removesuffix("_delta")
                block[field] = block.get(field, "") + delta[field]
    assert [blocks[i] for i in sorted(blocks)] == response.content

    completion = openai_chat.to_completion(response, "gpt-5")
    chunks = list(openai_chat.completion_chunks(completion, include_usage=True))
    calls = [
        c for chunk in chunks for ch in chunk["choices"] for c in ch["delta"].get("tool_calls", [])
    ]
    assert calls[0]["function"] == {"name": "read_file", "arguments": '{"path": "a"}'}
    assert chunks[-1]["usage"]["prompt_tokens"] == 14

    full = openai_responses.to_response(response, "gpt-5")
    events = list(openai_responses.response_events(full))
    assert events[-1]["type"] == "response.completed" and events[-1]["response"] == full
    assert [e["sequence_number"] for e in events] == list(range(len(events)))


def test_the_model_calls_file_is_bounded_and_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past its bound a call is left out (and counted in the summary); secrets and the
    token are masked; a conversation's earlier turns are written once."""
    from assay.bridge import transcript
    from assay.models.base import Message, ModelRequest

    monkeypatch.setattr(transcript, "MAX_BYTES", 1200)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-very-secret-0123456789")
    log = transcript.ModelCalls(
        tmp_path / "calls.jsonl", {"BRIDGE_TOKEN": "assay-bridge-xyz0123456789"}
    )
    first = Message(
        "user",
        ({"type": "text", "text": "tok-very-secret-0123456789 and assay-bridge-xyz0123456789"},),
    )
    answer = ModelResponse(content=[{"type": "text", "text": "ok"}], stop_reason="end_turn")
    request = ModelRequest(model="anthropic/claude-sonnet-4-6", system="s", messages=(first,))
    log.record(api="anthropic-messages", request=request, response=answer, seconds=0.1)
    follow = Message("user", ({"type": "text", "text": "more " * 300},))
    longer = ModelRequest(
        model=request.model,
        system="s",
        messages=(first, Message("assistant", tuple(answer.content)), follow),
    )
    log.record(api="anthropic-messages", request=longer, response=answer, seconds=0.1)
    log.close(calls=2)
    lines = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and lines[-1]["left_out"] == 1  # the long second call
    text = json.dumps(lines)
    assert "tok-very-secret" not in text and "assay-bridge-xyz" not in text
    log2 = transcript.ModelCalls(tmp_path / "calls2.jsonl", {})
    monkeypatch.setattr(transcript, "MAX_BYTES", 1 << 20)
    log2.record(api="a", request=request, response=answer, seconds=0.1)
    log2.record(api="a", request=longer, response=answer, seconds=0.1)
    second = json.loads((tmp_path / "calls2.jsonl").read_text().splitlines()[1])
    assert second["messages"] == [{"role": "user", "content": list(follow.content)}]
    assert "system" not in second  # unchanged since the first call
