"""A loopback fake of the Anthropic Messages API (POST /v1/messages) for the real SDK.

Point the SDK at it with `ANTHROPIC_BASE_URL=fake.url` and any key. Answers come from,
in order: the queue (`fake.reply(...)`), the `responder(request_json)` callable, or a
plain "ok" text reply. A scripted answer is either a message body built with the helpers
below (`text_reply`, `tool_use_reply`, `malformed_tool_reply`) or a `Reply` (a fault).
Faults can also be queued ahead of everything with `fake.inject(...)` (see loopback.py):
`rate_limited()`, `overloaded()`, `server_error()`, `dropped()`, `fake.slow_reply(...)`.

    with FakeAnthropic(responder=lambda req: text_reply("LGTM")) as fake:
        fake.inject(rate_limited(retry_after="2"))
        ...  # the first call gets a 429, the retry gets "LGTM"
        assert fake.calls == 2
"""

from __future__ import annotations

import itertools
from typing import Any

from tests.fakes.loopback import Reply, Request
from tests.fakes.scripted import ScriptedModelServer, dropped

__all__ = [
    "FakeAnthropic",
    "anthropic_error",
    "dropped",
    "malformed_tool_reply",
    "overloaded",
    "rate_limited",
    "server_error",
    "text_reply",
    "tool_use_reply",
]

_ids = itertools.count(1)


def _usage(
    input_tokens: int, output_tokens: int, cache_read: int, cache_write: int
) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }


def text_reply(
    text: str,
    *,
    input_tokens: int = 25,
    output_tokens: int = 10,
    cache_read: int = 0,
    cache_write: int = 0,
    stop_reason: str = "end_turn",
) -> dict[str, Any]:
    """A message body holding one text block (the fake fills id and model)."""
    return {
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "usage": _usage(input_tokens, output_tokens, cache_read, cache_write),
    }


def tool_use_reply(
    name: str,
    tool_input: Any,
    *,
    text: str | None = None,
    tool_use_id: str | None = None,
    input_tokens: int = 40,
    output_tokens: int = 20,
    cache_read: int = 0,
    cache_write: int = 0,
) -> dict[str, Any]:
    """A message body calling tool `name` (optionally after some text)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.append(
        {
            "type": "tool_use",
            "id": tool_use_id or f"toolu_fake_{next(_ids):04d}",
            "name": name,
            "input": tool_input,
        }
    )
    return {
        "content": content,
        "stop_reason": "tool_use",
        "usage": _usage(input_tokens, output_tokens, cache_read, cache_write),
    }


def malformed_tool_reply(name: str, raw_input: str = '{"findings": [') -> dict[str, Any]:
    """A tool call whose input is not a JSON object (what a confused model can produce)."""
    return tool_use_reply(name, raw_input)


def anthropic_error(
    status: int, error_type: str, message: str, *, headers: dict[str, str] | None = None
) -> Reply:
    """An error in Anthropic's shape: {"type": "error", "error": {"type", "message"}}."""
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return Reply(status, body, headers=dict(headers or {}))


def rate_limited(*, retry_after: str | None = None, retry_after_ms: str | None = None) -> Reply:
    headers = {}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    return anthropic_error(429, "rate_limit_error", "Number of requests exceeded", headers=headers)


def overloaded() -> Reply:
    return anthropic_error(529, "overloaded_error", "Overloaded")


def server_error() -> Reply:
    return anthropic_error(500, "api_error", "Internal server error")


class FakeAnthropic(ScriptedModelServer):
    """POST /v1/messages with scripted answers; `calls` counts the requests it received.

    `api_key`: when set, only that key is accepted (x-api-key or `Authorization: Bearer`);
    anything else gets a 401 authentication_error, like the real API.
    """

    PATH = "/v1/messages"

    def message(self, body: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        """A complete Messages API response around a helper-built body."""
        return {
            "id": f"msg_fake_{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model") or "claude-fake",
            "stop_sequence": None,
            **body,
        }

    wrap = message

    def default_answer(self) -> dict[str, Any]:
        return text_reply("ok")

    def authorised(self, request: Request) -> bool:
        given = request.headers.get("x-api-key")
        bearer = request.headers.get("authorization", "")
        if bearer.lower().startswith("bearer "):
            given = given or bearer[len("bearer ") :]
        return given == self.api_key

    def unauthorised(self) -> Reply:
        return anthropic_error(401, "authentication_error", "invalid x-api-key")

    def invalid(self, body: Any) -> Reply | None:
        problem = _invalid(body)
        return anthropic_error(400, "invalid_request_error", problem) if problem else None


def _invalid(body: Any) -> str | None:
    """The real API's most basic checks, so an adapter bug fails loudly."""
    if not isinstance(body, dict):
        return "body must be a JSON object"
    for required in ("model", "max_tokens", "messages"):
        if required not in body:
            return f"{required}: Field required"
    for index, message in enumerate(body["messages"]):
        if message.get("role") not in {"user", "assistant"}:
            return f"messages.{index}.role: must be user or assistant"
    if "tool_choice" in body and not body.get("tools"):
        return "tool_choice may only be specified while providing tools"
    return None
