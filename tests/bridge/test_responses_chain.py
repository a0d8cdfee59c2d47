"""OpenAI Responses' `previous_response_id` through the bridge, spoken by the real SDK.

A request that names a response the attempt's bridge served continues its conversation
(the provider is sent the whole of it); an unknown id is the API's own 400; `store: false`
keeps nothing; the store is bounded; and a chain recorded with `--cache` replays
`--offline` with the same ids and no call upstream.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import openai

from assay.bridge.server import serve
from assay.bridge.session import BridgeSession
from assay.bridge.stored_responses import StoredResponses
from tests.bridge.providers import session
from tests.fakes.openai_api import FakeOpenAI, chat_text_reply, chat_tool_reply

TOOL = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


async def chain(bridge: BridgeSession) -> list[Any]:
    """Two turns, the second sending only the tool's output and the first's id, then a
    third (streamed) continuing the second with a question and new instructions."""
    async with serve(bridge) as url:
        client = openai.AsyncOpenAI(api_key=bridge.token, base_url=f"{url}/v1", max_retries=0)
        first = await client.responses.create(
            model="gpt-5",
            instructions="Be brief.",
            input="Check a.py",
            tools=[TOOL],  # type: ignore[list-item]
        )
        (call,) = [item for item in first.output if item.type == "function_call"]
        second = await client.responses.create(
            model="gpt-5",
            instructions="Be brief.",
            previous_response_id=first.id,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "x = 1"}],
            tools=[TOOL],  # type: ignore[list-item]
        )
        async with client.responses.stream(
            model="gpt-5",
            instructions="Answer in French.",
            previous_response_id=second.id,
            input="And b.py?",
        ) as stream:
            third = await stream.get_final_response()
        await client.close()
        return [first, second, third]


def test_a_response_is_continued_by_its_id_and_a_chain_replays_offline(
    tmp_path: Path, openai_fake: FakeOpenAI
) -> None:
    openai_fake.reply(
        chat_tool_reply(("read_file", {"path": "a.py"})),
        chat_text_reply("It is fine."),
        chat_text_reply("Pareil."),
    )
    cache = tmp_path / "cache"
    recorded = asyncio.run(chain(session(tmp_path / "one", cache_dir=cache)))
    first, second, third = recorded
    assert second.output_text == "It is fine." and third.output_text == "Pareil."
    assert len({first.id, second.id, third.id}) == 3

    sent = openai_fake.bodies()
    assert len(sent) == 3
    call_id = sent[1]["messages"][2]["tool_calls"][0]["id"]
    # The provider is sent the whole conversation, as if the CLI had sent it all.
    assert sent[1]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Check a.py"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": "x = 1"},
    ]
    # The earlier instructions are not carried over (the API's rule); the answers are.
    assert sent[2]["messages"][0] == {"role": "system", "content": "Answer in French."}
    assert sent[2]["messages"][-2:] == [
        {"role": "assistant", "content": "It is fine."},
        {"role": "user", "content": "And b.py?"},
    ]

    replaying = session(tmp_path / "two", cache_dir=cache, offline=True)
    replayed = asyncio.run(chain(replaying))
    assert len(openai_fake.bodies()) == 3  # no call upstream
    assert replaying.stopped is None and replaying.calls == 3
    assert [r.id for r in replayed] == [r.id for r in recorded]
    assert [r.model_dump(exclude={"created_at"}) for r in replayed] == [
        r.model_dump(exclude={"created_at"}) for r in recorded
    ]


def test_an_unknown_or_unstored_response_id_is_the_apis_own_400(
    tmp_path: Path, openai_fake: FakeOpenAI
) -> None:
    """`store: false` (Codex's, with encrypted reasoning asked for) is answered as before
    and keeps nothing, so continuing it is refused like an id never served."""
    openai_fake.reply(chat_text_reply("Done."))
    bridge = session(tmp_path)

    async def go() -> tuple[Any, list[Exception]]:
        async with serve(bridge) as url:
            client = openai.AsyncOpenAI(api_key=bridge.token, base_url=f"{url}/v1", max_retries=0)
            unstored = await client.responses.create(
                model="gpt-5",
                input=[{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
                store=False,
                include=["reasoning.encrypted_content"],
                reasoning={"effort": "low"},
            )
            errors = []
            for previous in ("resp_never_served", unstored.id):
                try:
                    await client.responses.create(
                        model="gpt-5", previous_response_id=previous, input="more"
                    )
                except openai.BadRequestError as exc:
                    errors.append(exc)
            await client.close()
            return unstored, errors

    unstored, (unknown, dropped) = asyncio.run(go())
    assert unstored.output_text == "Done." and len(bridge.responses) == 0
    for error, previous in ((unknown, "resp_never_served"), (dropped, unstored.id)):
        assert error.status_code == 400 and error.code == "previous_response_not_found"
        body = error.body
        assert isinstance(body, dict)
        assert body["param"] == "previous_response_id"
        assert body["type"] == "invalid_request_error"
        assert f"Previous response with id {previous!r} not found." in body["message"]
    assert openai_fake.calls == 1 and bridge.calls == 1


def test_the_store_keeps_the_newest_within_its_count_and_bytes() -> None:
    item = {"role": "user", "content": "x" * 100}
    size = len('[{"role": "user", "content": "' + "x" * 100 + '"}]')
    by_count = StoredResponses(max_responses=2)
    for name in ("a", "b", "c"):
        assert by_count.keep(name, before=None, added=[item])
    assert "a" not in by_count and "b" in by_count and "c" in by_count

    by_bytes = StoredResponses(max_bytes=size * 3)
    assert by_bytes.keep("a", before=None, added=[item])
    assert by_bytes.keep("b", before=by_bytes.conversation("a"), added=[item])
    conversation = by_bytes.conversation("b")
    assert conversation is not None and conversation.items == (item, item)
    assert by_bytes.bytes == size * 3  # a: one item; b: two
    assert by_bytes.keep("c", before=None, added=[item])  # the oldest goes to make room
    assert "a" not in by_bytes and by_bytes.bytes == size * 3
    assert not by_bytes.keep("d", before=None, added=[item] * 4)  # over the bound alone
    assert "d" not in by_bytes and len(by_bytes) == 2
