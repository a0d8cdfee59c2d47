"""A loopback fake of the Gemini API's `generateContent`, for the real `google-genai` SDK.

`POST /v1/models/{model}:generateContent` (the SDK's default; `v1beta` too) with
`x-goog-api-key`, the body in the REST shape the SDK sends (camelCase: `contents`,
`systemInstruction`, `tools`, `toolConfig`, `generationConfig`). Point the SDK at it with
`GOOGLE_GEMINI_BASE_URL=fake.url` and any key.

Answers are scripted like the other fakes' (`fake.reply(...)`, a `responder`, faults
with `fake.inject(...)`), as Gemini bodies built with `text_reply` / `call_reply`, or
as Anthropic Messages bodies: `messages_responder(responder)` lets a responder written
for FakeAnthropic (the corpus responder) play Gemini, by showing it the request in the
Messages shape and translating its answer back.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from tests.fakes.loopback import Reply, Request
from tests.fakes.scripted import Responder, Scripted, ScriptedModelServer

__all__ = [
    "FakeGemini",
    "call_reply",
    "gemini_error",
    "messages_responder",
    "text_reply",
]

_ids = itertools.count(1)


def _usage(prompt: int, output: int, cached: int = 0, thoughts: int = 0) -> dict[str, int]:
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output + thoughts,
    }
    if cached:
        usage["cachedContentTokenCount"] = cached
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def text_reply(
    text: str, *, prompt_tokens: int = 25, output_tokens: int = 10, **extra: int
) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": _usage(prompt_tokens, output_tokens, **extra),
    }


def call_reply(
    name: str,
    args: Any,
    *,
    text: str | None = None,
    signature: str | None = None,
    prompt_tokens: int = 40,
    output_tokens: int = 20,
    **extra: int,
) -> dict[str, Any]:
    """A function call (optionally after text, optionally with a thought signature)."""
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    call: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
    if signature is not None:
        call["thoughtSignature"] = signature
    parts.append(call)
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": _usage(prompt_tokens, output_tokens, **extra),
    }


def gemini_error(
    status: int, code: str, message: str, *, headers: dict[str, str] | None = None
) -> Reply:
    """An error in Google's shape: {"error": {"code", "message", "status"}}."""
    return Reply(
        status,
        {"error": {"code": status, "message": message, "status": code}},
        headers=dict(headers or {}),
    )


class FakeGemini(ScriptedModelServer):
    PATH = r"/(?P<version>v1|v1beta)/models/(?P<model>[^/:]+):generateContent"

    def wrap(self, answer: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        if "content" in answer and "usage" in answer:  # an Anthropic Messages body
            answer = gemini_body(answer)
        return {"modelVersion": "gemini-fake", "responseId": f"resp-{next(_ids):06d}", **answer}

    def default_answer(self) -> dict[str, Any]:
        return text_reply("ok")

    def authorised(self, request: Request) -> bool:
        return request.headers.get("x-goog-api-key") == self.api_key

    def unauthorised(self) -> Reply:
        return gemini_error(
            400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."
        )

    def invalid(self, body: Any) -> Reply | None:
        problem = _invalid(body)
        return gemini_error(400, "INVALID_ARGUMENT", problem) if problem else None


def _invalid(body: Any) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
        return "contents: required"
    for index, content in enumerate(body["contents"]):
        if content.get("role") not in {"user", "model"}:
            return f"contents[{index}].role: must be user or model"
        for part in content.get("parts") or []:
            response = part.get("functionResponse")
            if response is not None and not response.get("name"):
                return f"contents[{index}]: functionResponse.name is required"
    mode = (body.get("toolConfig") or {}).get("functionCallingConfig", {}).get("mode")
    if mode == "ANY" and not body.get("tools"):
        return "function calling mode ANY requires tools"
    return None


# -- playing a Messages responder ----------------------------------------------------------


def messages_view(body: dict[str, Any]) -> dict[str, Any]:
    """A generateContent request as the Messages request it stands for."""
    system = " ".join(
        part.get("text", "") for part in (body.get("systemInstruction") or {}).get("parts", [])
    )
    messages = []
    for content in body.get("contents", []):
        blocks: list[dict[str, Any]] = []
        for part in content.get("parts", []):
            if "text" in part:
                blocks.append({"type": "text", "text": part["text"]})
            elif "functionCall" in part:
                call = part["functionCall"]
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id"),
                        "name": call["name"],
                        "input": call.get("args", {}),
                    }
                )
            elif "functionResponse" in part:
                response = part["functionResponse"]
                outcome = response.get("response", {})
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": response.get("id"),
                        "content": outcome.get("output", outcome.get("error", "")),
                        "is_error": "error" in outcome,
                    }
                )
        messages.append(
            {"role": "assistant" if content["role"] == "model" else "user", "content": blocks}
        )
    tools = [
        {
            "name": f["name"],
            "description": f.get("description", ""),
            "input_schema": f.get("parametersJsonSchema", f.get("parameters_json_schema", {})),
        }
        for tool in body.get("tools", [])
        for f in tool.get("functionDeclarations", [])
    ]
    view: dict[str, Any] = {
        "model": "gemini",
        "max_tokens": 4096,
        "system": system,
        "messages": messages,
    }
    if tools:
        view["tools"] = tools
    calling = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    if calling.get("mode") == "ANY":
        names = calling.get("allowedFunctionNames") or []
        view["tool_choice"] = (
            {"type": "tool", "name": names[0]} if len(names) == 1 else {"type": "any"}
        )
    return view


def gemini_body(message: dict[str, Any]) -> dict[str, Any]:
    """A Messages response body as the generateContent response that says the same."""
    parts: list[dict[str, Any]] = []
    for block in message["content"]:
        if block["type"] == "text":
            parts.append({"text": block["text"]})
        elif block["type"] == "tool_use":
            args = block["input"]
            parts.append({"functionCall": {"id": block["id"], "name": block["name"], "args": args}})
    usage = message["usage"]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": _usage(
            usage["input_tokens"] + usage.get("cache_read_input_tokens", 0),
            usage["output_tokens"],
            cached=usage.get("cache_read_input_tokens", 0),
        ),
    }


def messages_responder(responder: Callable[[dict[str, Any]], Scripted]) -> Responder:
    """`responder` (written for the Messages API) answering generateContent requests."""

    def answer(body: dict[str, Any]) -> Scripted:
        return responder(messages_view(body))  # FakeGemini.wrap translates a Messages body

    return answer
