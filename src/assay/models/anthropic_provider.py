"""The Anthropic Messages API adapter (wire format) over an injected `AsyncAnthropic`.

Canonical content blocks are already in the Messages shape, so they map 1:1. Thinking
blocks in a response are kept: a tool-use loop has to send them back unchanged.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anthropic

from assay._util import json_text
from assay.core.usage import Usage
from assay.errors import ModelUnavailable
from assay.models._http import (
    UNUSABLE_ANSWER,
    aiohttp_client,
    response_json,
    sdk_failures,
    unusable_answer,
)
from assay.models.base import ModelRequest, ModelResponse, ToolSpec
from assay.models.provider_spec import bridge_env, missing_provider_credentials
from assay.models.retry import ApiCallFailure, RetryPolicy, parse_retry_after

__all__ = [
    "AnthropicProvider",
    "anthropic_from_env",
    "anthropic_tool_choice",
    "client_options",
    "from_message",
    "spans_have_a_receiver",
]

# Blocks of a response that a caller may need to send back in the next turn.
_KEPT_BLOCKS = {"text", "tool_use", "thinking", "redacted_thinking"}


class AnthropicProvider:
    """Calls `client.messages.create`; raises ApiCallFailure for every API failure."""

    name = "anthropic"

    def __init__(self, client: anthropic.AsyncAnthropic) -> None:
        self.client = client

    async def generate(self, request: ModelRequest) -> ModelResponse:
        params = anthropic_params(request)
        with sdk_failures(
            anthropic, base_error=anthropic.AnthropicError, status_failure=_status_failure
        ):
            raw = await self.client.messages.with_raw_response.create(**params)
        try:
            return from_message(response_json(raw))
        except UNUSABLE_ANSWER as exc:
            raise unusable_answer(f"{self.name}/{request.model}", exc) from None

    async def aclose(self) -> None:
        await self.client.close()


def anthropic_params(request: ModelRequest) -> dict[str, Any]:
    """The `messages.create` keyword arguments for `request`.

    No `temperature`: API version 2026-10-21 (what this SDK speaks) rejects sampling
    parameters, so `request.temperature` only takes part in the cache key.
    """
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [
            {"role": m.role, "content": [dict(block) for block in m.content]}
            for m in request.messages
        ],
    }
    if request.system:
        system: dict[str, Any] = {"type": "text", "text": request.system}
        if request.cache_prefix:
            # Tools and system prompt form the stable prefix; one breakpoint caches both.
            system["cache_control"] = {"type": "ephemeral"}
        params["system"] = [system]
    if request.tools:
        params["tools"] = [_tool(t) for t in request.tools]
        params["tool_choice"] = anthropic_tool_choice(request.tool_choice)
    if request.thinking is not None:
        params["thinking"] = dict(request.thinking)
    return params


def anthropic_tool_choice(choice: str | None) -> dict[str, str]:
    if choice is None:
        return {"type": "auto"}
    if choice == "any":
        return {"type": "any"}
    return {"type": "tool", "name": choice}


def _tool(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def from_message(message: dict[str, Any]) -> ModelResponse:
    """A Messages API response body as a ModelResponse; ValueError for another shape."""
    blocks = message.get("content")
    usage = message.get("usage")
    if not isinstance(blocks, list) or not isinstance(usage, dict):
        raise ValueError("not a Messages response (no `content` list or `usage` object)")
    content: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in _KEPT_BLOCKS:
            continue
        if kind == "text":
            content.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "tool_use":
            content.append(
                {
                    "type": "tool_use",
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": _tool_input(block.get("input")),
                }
            )
        else:  # thinking blocks go back to the API as they came, less null fields
            content.append({key: value for key, value in block.items() if value is not None})
    return ModelResponse(
        content=content,
        stop_reason=message.get("stop_reason") or "end_turn",
        usage=Usage(
            input_tokens=usage.get("input_tokens") or 0,
            output_tokens=usage.get("output_tokens") or 0,
            cache_read_tokens=usage.get("cache_read_input_tokens") or 0,
            cache_write_tokens=usage.get("cache_creation_input_tokens") or 0,
        ),
    )


def _tool_input(raw: Any) -> dict[str, Any]:
    # The API promises an object; anything else is handed back so the caller can retry.
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json_text.loads(raw)
        except ValueError:
            return {"__invalid_json__": raw}
        if isinstance(parsed, dict):
            return parsed
    return {"__invalid_json__": raw if isinstance(raw, str) else json.dumps(raw)}


def _status_failure(exc: anthropic.APIStatusError) -> ApiCallFailure:
    error_type, message = "api_error", ""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error_type = str(body["error"].get("type") or error_type)
        message = str(body["error"].get("message") or "")
    return ApiCallFailure(
        status=exc.status_code,
        error_type=error_type,
        message=message[:500],
        retry_after_s=parse_retry_after(exc.response.headers),
    )


def anthropic_from_env(*, policy: RetryPolicy | None = None) -> AnthropicProvider:
    """An adapter whose client reads ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL."""
    bridge_env()
    reason = missing_provider_credentials("anthropic")
    if reason:
        raise ModelUnavailable(reason)
    client = anthropic.AsyncAnthropic(
        api_key=os.environ["ANTHROPIC_API_KEY"],
        base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
        **client_options(policy),
    )
    return AnthropicProvider(client)


def client_options(policy: RetryPolicy | None) -> dict[str, Any]:
    """What every client of the anthropic SDK (the API's, Bedrock's, Vertex's) is built with.

    The SDK's own retries are off: assay's retry layer owns retries and their limits. Its
    OpenTelemetry spans are off unless something would receive them: with no tracer
    provider registered they go nowhere, yet building each span's attributes cost about
    6% of the SDK's CPU per call (docs/performance.md, "Per-case cost").
    """
    timeout = (policy or RetryPolicy()).timeout_s
    options: dict[str, Any] = {
        "max_retries": 0,
        "timeout": anthropic.Timeout(timeout, connect=min(timeout, 10.0)),
        "http_client": aiohttp_client(anthropic),
    }
    if not spans_have_a_receiver():
        options["open_telemetry"] = False
    return options


def spans_have_a_receiver() -> bool:
    """Whether the SDK's OpenTelemetry spans would reach anything.

    The SDK's own variables (`ANTHROPIC_OPEN_TELEMETRY*`) and a tracer provider named by
    OpenTelemetry's (`OTEL_PYTHON_TRACER_PROVIDER`, as `opentelemetry-instrument` sets up)
    are left for the SDK to read; otherwise only a provider a host program registered
    before the client was built receives spans.
    """
    if "OTEL_PYTHON_TRACER_PROVIDER" in os.environ or any(
        name.startswith("ANTHROPIC_OPEN_TELEMETRY") for name in os.environ
    ):
        return True
    try:
        from opentelemetry import trace  # lazy: optional, may be missing here
    except ImportError:  # the SDK's dependency; without it there are no spans either
        return False
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
