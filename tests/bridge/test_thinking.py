"""Anthropic's extended thinking through the bridge, spoken by the real anthropic SDK.

The request's `thinking` config reaches the provider (and the cache key, only when set),
the answer's thinking blocks come back to the CLI whole and streamed (`thinking_delta`,
`signature_delta`), and a later turn sends them back to the provider unchanged.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import pytest

from assay.bridge import anthropic_api
from assay.bridge.server import serve
from assay.bridge.session import BridgeSession
from assay.models.anthropic_provider import anthropic_params
from assay.models.base import Message, ModelRequest, ToolSpec
from assay.models.cache import request_key
from assay.options import RunOptions
from tests.fakes.anthropic_api import FakeAnthropic, text_reply

THINKING = {"type": "enabled", "budget_tokens": 2048}
THOUGHT = {"type": "thinking", "thinking": "a.py sets x once.", "signature": "c2lnbmF0dXJl"}
REDACTED = {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}


def thinking_reply(text: str) -> dict[str, Any]:
    reply = text_reply(text, input_tokens=50, output_tokens=40)
    return {**reply, "content": [THOUGHT, REDACTED, *reply["content"]]}


def test_thinking_reaches_the_provider_and_its_blocks_come_back_whole_and_streamed(
    tmp_path: Path, anthropic_fake: FakeAnthropic
) -> None:
    anthropic_fake.reply(thinking_reply("It is fine."), thinking_reply("Still fine."))
    bridge = BridgeSession(options=RunOptions(), sample=0, transcript=tmp_path / "calls.jsonl")
    question = {"role": "user", "content": "Check a.py"}

    async def go() -> tuple[Any, Any, list[str]]:
        async with serve(bridge) as url:
            client = anthropic.AsyncAnthropic(api_key=bridge.token, base_url=url, max_retries=0)
            whole = await client.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=4096,
                thinking=THINKING,  # type: ignore[arg-type]
                messages=[question],  # type: ignore[list-item]
            )
            turn = [b.model_dump(exclude_none=True) for b in whole.content]
            deltas: list[str] = []
            async with client.messages.stream(
                model="claude-sonnet-4-6",
                max_tokens=4096,
                thinking=THINKING,  # type: ignore[arg-type]
                messages=[
                    question,  # type: ignore[list-item]
                    {"role": "assistant", "content": turn},  # type: ignore[typeddict-item]
                    {"role": "user", "content": "And b.py?"},
                ],
            ) as stream:
                async for event in stream:
                    if event.type == "content_block_delta":
                        deltas.append(event.delta.type)
                streamed = await stream.get_final_message()
            await client.close()
            return whole, streamed, deltas

    whole, streamed, deltas = asyncio.run(go())
    for message, text in ((whole, "It is fine."), (streamed, "Still fine.")):
        assert [b.model_dump(exclude_none=True) for b in message.content] == [
            THOUGHT,
            REDACTED,
            {"type": "text", "text": text},
        ]
    assert deltas == ["thinking_delta", "signature_delta", "text_delta"]
    first, second = anthropic_fake.bodies()
    assert first["thinking"] == THINKING and second["thinking"] == THINKING
    # The earlier turn's thinking goes back to the provider as it came (its signature too).
    assert second["messages"][1]["content"][:2] == [THOUGHT, REDACTED]
    lines = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert lines[0]["thinking"] == THINKING


def test_a_request_without_thinking_sends_none_and_keeps_its_cache_key() -> None:
    """Recordings made before `thinking` was carried still replay: the key of a request
    without it is the one computed before (this hash was the old code's)."""
    request = ModelRequest(
        model="claude-sonnet-4-6",
        system="Be brief.",
        messages=(Message("user", ({"type": "text", "text": "hi"},)),),
        tools=(ToolSpec("read_file", "Read a file.", {"type": "object"}),),
        sample=1,
    )
    assert request_key("anthropic", request) == (
        "a74b73c59f716fe83a7970d9643f9b0f855e4580f139173edce6ada1bdea6ba9"
    )
    assert "thinking" not in anthropic_params(request)
    messages = [{"role": "user", "content": "hi"}]
    body = {"model": "claude-sonnet-4-6", "max_tokens": 4096, "messages": messages}
    plain = anthropic_api.from_messages_request(body, sample=0)
    thinking = anthropic_api.from_messages_request({**body, "thinking": THINKING}, sample=0)
    off = anthropic_api.from_messages_request({**body, "thinking": {"type": "disabled"}}, sample=0)
    assert plain.thinking is None and thinking.thinking == THINKING
    keys = {request_key("anthropic", r) for r in (plain, thinking, off)}
    assert len(keys) == 3  # a thinking answer never replays for a request without it
    assert anthropic_params(off)["thinking"] == {"type": "disabled"}


def test_a_malformed_thinking_config_is_refused() -> None:
    body = {"model": "claude-sonnet-4-6", "max_tokens": 5, "messages": [], "thinking": "on"}
    with pytest.raises(ValueError, match="thinking: an object with a `type`"):
        anthropic_api.from_messages_request(body, sample=0)
