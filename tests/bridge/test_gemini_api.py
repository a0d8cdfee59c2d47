"""The bridge's Gemini API: `generateContent` and `streamGenerateContent`, both ways.

The real `google-genai` SDK calls a session's server (whole, and streamed with `alt=sse`),
with the fake Gemini API behind assay's model layer: a function call round-trips with its
id and thought signature, and what reached the provider is the request the CLI made. The
chunks of a stream without `alt=sse` are one JSON array; the wrong key is a 401 and a
malformed body a 400, both in Google's error shape; the translation is checked on its own
(snake_case keys, OpenAPI-style schemas, calls and responses without ids), and the cache
key ignores gemini-cli's session context's date and project directory.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from google import genai
from google.genai import errors, types

from assay.bridge import gemini_api
from assay.bridge.normalise import PathNames, keyed_request
from assay.bridge.server import serve
from assay.bridge.session import BridgeSession
from assay.core.usage import Usage
from assay.models.base import ModelResponse
from assay.models.cache import request_key
from assay.models.gemini_common import SIGNATURE_KEY
from assay.options import RunOptions
from tests.bridge.providers import GEMINI_KEY as KEY
from tests.bridge.providers import session
from tests.fakes.gemini_api import FakeGemini, call_reply, text_reply

READ_FILE = types.FunctionDeclaration(
    name="read_file",
    description="Read a file.",
    parameters_json_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)


def test_the_sdk_round_trips_a_function_call_whole_and_streamed(
    tmp_path: Path, gemini_fake: FakeGemini
) -> None:
    gemini_fake.reply(
        call_reply("read_file", {"path": "a.py"}, text="Let me look.", signature="c2lnbmVk"),
        text_reply("It is fine.", prompt_tokens=30, output_tokens=5),
    )
    bridge = session(tmp_path)

    def calls(url: str) -> tuple[list[Any], Any]:
        # The SDK's synchronous client (httpx): its asynchronous one subclasses aiohttp's
        # session, which aiohttp warns against.
        options = types.HttpOptions(base_url=url)
        with genai.Client(api_key=bridge.token, http_options=options) as client:
            return _round_trip(client)

    def _round_trip(client: genai.Client) -> tuple[list[Any], Any]:
        config = types.GenerateContentConfig(
            system_instruction="Be brief.",
            tools=[types.Tool(function_declarations=[READ_FILE])],
            temperature=0,
            top_p=0.5,
            max_output_tokens=300,
        )
        contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="Check a.py")])]
        chunks = list(
            client.models.generate_content_stream(
                model="gemini-2.5-pro", contents=contents, config=config
            )
        )
        parts = [p for chunk in chunks for p in chunk.candidates[0].content.parts]
        call = next(p for p in parts if p.function_call)
        contents.append(types.Content(role="model", parts=parts))
        answer = types.FunctionResponse(
            id=call.function_call.id, name="read_file", response={"output": "x = 1"}
        )
        contents.append(types.Content(role="user", parts=[types.Part(function_response=answer)]))
        whole = client.models.generate_content(
            model="gemini-2.5-pro", contents=contents, config=config
        )
        return chunks, whole

    async def go() -> tuple[list[Any], Any]:
        async with serve(bridge) as url:
            return await asyncio.to_thread(calls, url)

    chunks, whole = asyncio.run(go())
    # Streamed: a chunk a part, the last with the finish reason and the usage.
    assert [c.candidates[0].content.parts[0].text for c in chunks][:1] == ["Let me look."]
    last = chunks[-1]
    assert last.candidates[0].finish_reason == types.FinishReason.STOP
    assert (last.usage_metadata.prompt_token_count, last.usage_metadata.candidates_token_count) == (
        40,
        20,
    )
    assert last.model_version == "gemini-2.5-pro"
    call_part = last.candidates[0].content.parts[0]
    assert call_part.function_call.name == "read_file"
    assert call_part.function_call.args == {"path": "a.py"}
    assert call_part.function_call.id  # gemini-cli sends it back with the result
    assert call_part.thought_signature == b"signed"
    # Whole: the answer to the function's result.
    assert whole.text == "It is fine."
    assert whole.usage_metadata.total_token_count == 35
    # What the provider got: the request as the SDK made it, through the canonical one.
    first, second = gemini_fake.bodies()
    assert first["systemInstruction"]["parts"][0]["text"] == "Be brief."
    declared = first["tools"][0]["functionDeclarations"][0]
    assert declared["name"] == "read_file"
    # The SDK writes this key in snake_case, which the REST API reads as well.
    schema = declared.get("parametersJsonSchema") or declared["parameters_json_schema"]
    assert schema["properties"] == {"path": {"type": "string"}}
    assert first["generationConfig"]["maxOutputTokens"] == 300
    assert "topP" not in first["generationConfig"]  # not in the canonical request
    model_turn, result_turn = second["contents"][1:]
    sent_call = next(p for p in model_turn["parts"] if "functionCall" in p)
    assert sent_call["thoughtSignature"] == "c2lnbmVk"  # Gemini 3 wants it back
    response = result_turn["parts"][0]["functionResponse"]
    assert response["name"] == "read_file"
    assert response["response"] == {"output": "x = 1"}
    assert bridge.calls == 2 and bridge.usage.input_tokens == 40 + 30
    logged = [
        json.loads(line) for line in (tmp_path / "model-calls.jsonl").read_text().splitlines()
    ]
    assert [(line["api"], line["stream"]) for line in logged[:2]] == [
        ("gemini-generate-content", True),
        ("gemini-generate-content", False),
    ]


async def _post(url: str, body: Any, **headers: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as client:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        async with client.post(url, data=data, headers=headers) as answer:
            return answer.status, json.loads(await answer.read())


def test_a_stream_without_sse_is_one_json_array_and_the_key_may_be_a_parameter(
    tmp_path: Path, gemini_fake: FakeGemini
) -> None:
    gemini_fake.reply(text_reply("Hello."))
    bridge = session(tmp_path)
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}

    async def go() -> tuple[int, Any]:
        async with serve(bridge) as url:
            path = f"{url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key={bridge.token}"
            return await _post(path, body)

    status, chunks = asyncio.run(go())
    assert status == 200 and isinstance(chunks, list)
    assert chunks[-1]["candidates"][0]["content"]["parts"] == [{"text": "Hello."}]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[-1]["usageMetadata"]["promptTokenCount"] == 25


def test_the_wrong_key_a_malformed_body_and_another_method_are_refused_in_googles_shape(
    tmp_path: Path, gemini_fake: FakeGemini
) -> None:
    bridge = session(tmp_path)
    good = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}

    async def go() -> list[tuple[int, Any]]:
        async with serve(bridge) as url:
            generate = f"{url}/v1beta/models/gemini-2.5-pro:generateContent"
            return [
                await _post(generate, good, **{"x-goog-api-key": KEY}),  # the real key: no
                await _post(f"{generate}?key=wrong", good),
                await _post(generate, b"{not json", **{"x-goog-api-key": bridge.token}),
                await _post(generate, {"contents": "Hi"}, **{"x-goog-api-key": bridge.token}),
                await _post(
                    generate,
                    {**good, "cachedContent": "cachedContents/abc"},
                    **{"x-goog-api-key": bridge.token},
                ),
                await _post(
                    f"{url}/v1beta/models/gemini-2.5-pro:countTokens",
                    good,
                    **{"x-goog-api-key": bridge.token},
                ),
            ]

    (wrong, wrong_parameter, not_json, no_contents, cached, count) = asyncio.run(go())
    for status, body in (wrong, wrong_parameter):
        assert status == 401
        assert body["error"]["code"] == 401 and body["error"]["status"] == "UNAUTHENTICATED"
    for status, body in (not_json, no_contents, cached):
        assert status == 400
        assert body["error"]["code"] == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
    assert "contents" in no_contents[1]["error"]["message"]
    assert "cachedContent" in cached[1]["error"]["message"]
    assert count[0] == 404 and count[1]["error"]["status"] == "NOT_FOUND"
    assert gemini_fake.calls == 0 and bridge.calls == 0


def test_the_sdk_sees_a_refused_call_as_its_api_error(tmp_path: Path) -> None:
    """`--offline` with nothing recorded: the call is refused (400), which the SDK raises
    as its ClientError with the bridge's reason."""
    bridge = BridgeSession(
        options=RunOptions(offline=True, cache_dir=tmp_path / "cache"),
        sample=0,
        transcript=None,
    )

    def call(url: str) -> None:
        options = types.HttpOptions(base_url=url)
        with genai.Client(api_key=bridge.token, http_options=options) as client:
            client.models.generate_content(model="gemini-2.5-pro", contents="Hi")

    async def go() -> None:
        async with serve(bridge) as url:
            await asyncio.to_thread(call, url)

    with pytest.raises(errors.ClientError) as raised:
        asyncio.run(go())
    assert raised.value.code == 400
    assert "offline" in str(raised.value.message)
    assert bridge.stopped is not None


def test_the_translation_reads_snake_case_schemas_in_capitals_and_calls_without_ids() -> None:
    """What the AI SDK (opencode) and LiteLLM send: no ids on calls and responses (paired
    by name, in order, with ids from their place), OpenAPI schemas with capital types,
    snake_case keys; thought parts dropped, consecutive turns of one role merged."""
    body = {
        "system_instruction": {"parts": [{"text": "Be brief."}, {"text": "Be kind."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "context"}]},
            {"parts": [{"text": "Check a.py and b.py"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "thinking...", "thought": True},
                    {"function_call": {"name": "read_file", "args": {"path": "a.py"}}},
                    {"functionCall": {"name": "read_file", "args": {"path": "b.py"}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "read_file", "response": {"content": "A"}}},
                    {"function_response": {"name": "read_file", "response": {"error": "gone"}}},
                ],
            },
        ],
        "tools": [
            {"googleSearch": {}},
            {
                "function_declarations": [
                    {
                        "name": "read_file",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {"path": {"type": "STRING"}},
                        },
                    }
                ]
            },
        ],
        "toolConfig": {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read_file"]}
        },
        "generationConfig": {"temperature": 0.2, "thinkingConfig": {"thinkingBudget": 100}},
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
    }
    request = gemini_api.from_generate_request(body, model="models/gemini-2.5-pro", sample=3)
    assert request.model == "gemini/gemini-2.5-pro" and request.sample == 3
    assert request.system == "Be brief.\n\nBe kind."
    assert request.max_tokens == gemini_api.DEFAULT_MAX_TOKENS and request.temperature == 0.2
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert [b["text"] for b in request.messages[0].content] == ["context", "Check a.py and b.py"]
    first, second = request.messages[1].content  # the thought summary is not the answer
    assert (first["id"], second["id"]) == ("call_2_1", "call_2_2")
    results = request.messages[2].content
    assert [r["tool_use_id"] for r in results] == ["call_2_1", "call_2_2"]
    assert results[0]["content"] == "A" and "is_error" not in results[0]
    assert results[1]["content"] == "gone" and results[1]["is_error"] is True
    (tool,) = request.tools  # Google Search is Google's own tool: not the canonical request's
    assert tool.input_schema == {"type": "object", "properties": {"path": {"type": "string"}}}
    assert request.tool_choice == "read_file"
    # The same conversation sent again gets the same ids: the cache keys it alike.
    assert gemini_api.from_generate_request(body, model="gemini-2.5-pro", sample=3) == request


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ([], "JSON object"),
        ({"contents": [{"role": "system", "parts": []}]}, "role"),
        ({"contents": [{"role": "user", "parts": "Hi"}]}, "parts"),
        ({"contents": [{"role": "user", "parts": ["Hi"]}]}, "parts[0]"),
    ],
)
def test_a_body_that_is_not_a_request_is_a_value_error(body: Any, says: str) -> None:
    with pytest.raises(ValueError, match=says.replace("[", r"\[")):
        gemini_api.from_generate_request(body, model="gemini-2.5-pro", sample=0)


def test_the_answer_in_geminis_shape_and_its_chunks() -> None:
    response = ModelResponse(
        content=[
            {"type": "text", "text": "Looking."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "read_file",
                "input": {"path": "a.py"},
                SIGNATURE_KEY: "c2ln",
            },
            {
                "type": "tool_use",
                "id": "toolu_2",
                "name": "run",
                "input": {"__invalid_json__": "{"},
            },
        ],
        stop_reason="tool_use",
        usage=Usage(input_tokens=10, output_tokens=7, cache_read_tokens=5),
    )
    whole = gemini_api.to_generate_response(response, "gemini-2.5-pro")
    candidate = whole["candidates"][0]
    assert candidate["finishReason"] == "STOP"
    assert candidate["content"]["parts"] == [
        {"text": "Looking."},
        {
            "functionCall": {"id": "toolu_1", "name": "read_file", "args": {"path": "a.py"}},
            "thoughtSignature": "c2ln",
        },
        {"functionCall": {"id": "toolu_2", "name": "run", "args": {}}},
    ]
    assert whole["usageMetadata"] == {
        "promptTokenCount": 15,
        "candidatesTokenCount": 7,
        "totalTokenCount": 22,
        "cachedContentTokenCount": 5,
    }
    chunks = gemini_api.response_chunks(whole)
    rebuilt = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert rebuilt == candidate["content"]["parts"]
    assert [("usageMetadata" in c, "finishReason" in c["candidates"][0]) for c in chunks] == [
        (False, False),
        (False, False),
        (True, True),
    ]
    cut = ModelResponse(content=[], stop_reason="max_tokens")
    (only,) = gemini_api.response_chunks(gemini_api.to_generate_response(cut, "m"))
    assert only["candidates"][0]["finishReason"] == "MAX_TOKENS"
    assert only["candidates"][0]["content"]["parts"] == []


def test_the_cache_key_ignores_gemini_clis_session_context() -> None:
    """gemini-cli's first turn says the date in the user's locale and names the project's
    directory under ~/.gemini/tmp (a new name for each new workspace path)."""

    def request(today: str, project: str, workspace: str) -> Any:
        context = (
            f"This is the Gemini CLI. Today's date is {today} (formatted according to the "
            f"user's locale).\nMy operating system is: linux\n"
            f"The project's temporary directory is: /home/u/.gemini/tmp/{project}\n"
            f"I'm currently working in the directory: {workspace}/repo"
        )
        body = {"contents": [{"role": "user", "parts": [{"text": context}, {"text": "Go"}]}]}
        canonical = gemini_api.from_generate_request(body, model="gemini-2.5-pro", sample=0)
        names = PathNames.of([(Path(workspace), "<sandbox>")])
        return request_key("gemini", keyed_request(canonical, names))

    monday = request("Monday, December 7, 2026", "repo", "/tmp/assay-a1")
    assert monday == request("Sonntag, 6. Dezember 2026", "repo-3", "/tmp/assay-b2")
    other = gemini_api.from_generate_request(
        {"contents": [{"role": "user", "parts": [{"text": "Today's date is near."}]}]},
        model="gemini-2.5-pro",
        sample=0,
    )
    # A date said otherwise stays as it is: only gemini-cli's own sentence is normalised.
    assert keyed_request(other, PathNames(())).messages == other.messages
