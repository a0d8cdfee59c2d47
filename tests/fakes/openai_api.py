"""A loopback fake of OpenAI chat.completions (POST /v1/chat/completions) for the real SDK.

Point the SDK at `f"{fake.url}/v1"` (OPENAI_BASE_URL) with any key. Scripting works as in
`anthropic_api.py`: queued answers, then `responder(request_json)`, then a plain "ok";
an answer is a completion body from `chat_text_reply` / `chat_tool_reply` or a `Reply`.
Faults: `openai_error(...)`, `rate_limited()`, `server_error()`, `dropped()`, `slow_reply()`.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from tests.fakes.loopback import Reply, Request
from tests.fakes.scripted import ScriptedModelServer, dropped

__all__ = [
    "FakeOpenAI",
    "chat_text_reply",
    "chat_tool_reply",
    "dropped",
    "openai_error",
    "rate_limited",
    "server_error",
]

_ids = itertools.count(1)


def _usage(prompt: int, completion: int, cached: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def chat_text_reply(
    text: str,
    *,
    prompt_tokens: int = 25,
    completion_tokens: int = 10,
    cached_tokens: int = 0,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    return {
        "message": {"role": "assistant", "content": text},
        "finish_reason": finish_reason,
        "usage": _usage(prompt_tokens, completion_tokens, cached_tokens),
    }


def chat_tool_reply(
    *calls: tuple[str, Any],
    text: str | None = None,
    prompt_tokens: int = 40,
    completion_tokens: int = 20,
    cached_tokens: int = 0,
) -> dict[str, Any]:
    """Tool calls as (name, arguments); arguments that are a str are sent as-is (raw JSON)."""
    tool_calls = [
        {
            "id": f"call_fake_{next(_ids):04d}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        }
        for name, arguments in calls
    ]
    return {
        "message": {"role": "assistant", "content": text, "tool_calls": tool_calls},
        "finish_reason": "tool_calls",
        "usage": _usage(prompt_tokens, completion_tokens, cached_tokens),
    }


def openai_error(
    status: int,
    error_type: str,
    message: str,
    *,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An error in OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return Reply(status, body, headers=dict(headers or {}))


def rate_limited(*, retry_after: str | None = None, retry_after_ms: str | None = None) -> Reply:
    headers = {}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    return openai_error(
        429, "requests", "Rate limit reached", code="rate_limit_exceeded", headers=headers
    )


def server_error() -> Reply:
    return openai_error(500, "server_error", "The server had an error processing your request")


class FakeOpenAI(ScriptedModelServer):
    """POST /v1/chat/completions with scripted answers; `calls` counts requests."""

    PATH = "/v1/chat/completions"

    @property
    def base_url(self) -> str:
        """What OPENAI_BASE_URL should be."""
        return f"{self.url}/v1"

    def completion(self, body: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        """A complete chat.completion around a helper-built body."""
        return {
            "id": f"chatcmpl-fake{next(_ids):06d}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": request.get("model") or "gpt-fake",
            "choices": [
                {
                    "index": 0,
                    "message": body["message"],
                    "finish_reason": body["finish_reason"],
                    "logprobs": None,
                }
            ],
            "usage": body["usage"],
        }

    wrap = completion

    def default_answer(self) -> dict[str, Any]:
        return chat_text_reply("ok")

    def authorised(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {self.api_key}"

    def unauthorised(self) -> Reply:
        return openai_error(
            401, "invalid_request_error", "Incorrect API key provided", code="invalid_api_key"
        )

    def invalid(self, body: Any) -> Reply | None:
        problem = _invalid(body)
        return openai_error(400, "invalid_request_error", problem) if problem else None


def _invalid(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "body must be a JSON object"
    if "model" not in body or "messages" not in body:
        return "model and messages are required"
    known_ids: set[str] = set()
    for index, message in enumerate(body["messages"]):
        role = message.get("role")
        if role not in {"system", "developer", "user", "assistant", "tool"}:
            return f"messages[{index}].role: invalid value {role!r}"
        for call in message.get("tool_calls") or []:
            known_ids.add(call.get("id"))
        if role == "tool" and message.get("tool_call_id") not in known_ids:
            return f"messages[{index}]: a tool message must answer a preceding tool_calls id"
    if "tool_choice" in body and not body.get("tools"):
        return "tool_choice is only allowed when tools are specified"
    return None
