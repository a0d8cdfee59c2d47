"""The Anthropic Messages API adapter (wire format) over an injected `AsyncAnthropic`.

Canonical content blocks are already in the Messages shape, so they map 1:1. Thinking
blocks in a response are kept: a tool-use loop has to send them back unchanged.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anthropic

from assay.errors import ModelUnavailable
from assay.models._http import sdk_failures, shared_ssl_context
from assay.models.base import ModelRequest, ModelResponse, ToolSpec
from assay.models.names import bridge_env, missing_credentials
from assay.models.retry import ApiCallFailure, RetryPolicy, parse_retry_after
from assay.report.model import Usage

__all__ = ["AnthropicProvider", "anthropic_from_env", "anthropic_tool_choice"]

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
            message = await self.client.messages.create(**params)
        return _response(message)

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
    return params


def anthropic_tool_choice(choice: str | None) -> dict[str, str]:
    if choice is None:
        return {"type": "auto"}
    if choice == "any":
        return {"type": "any"}
    return {"type": "tool", "name": choice}


def _tool(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def _response(message: Any) -> ModelResponse:
    content: list[dict[str, Any]] = []
    for block in message.content:
        if block.type not in _KEPT_BLOCKS:
            continue
        if block.type == "text":
            content.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            content.append(
                {
                    "type": "tool_use",
                    "id": block.id,
                    "name": block.name,
                    "input": _tool_input(block.input),
                }
            )
        else:
            content.append(block.model_dump(mode="json", exclude_none=True))
    usage = message.usage
    return ModelResponse(
        content=content,
        stop_reason=message.stop_reason or "end_turn",
        usage=Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
        ),
    )


def _tool_input(raw: Any) -> dict[str, Any]:
    # The API promises an object; anything else is handed back so the caller can retry.
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
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
    """An adapter whose client reads ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL.

    The SDK's own retries are off: assay's retry layer owns retries and their limits.
    """
    bridge_env()
    reason = missing_credentials("anthropic/*")
    if reason:
        raise ModelUnavailable(reason)
    timeout = (policy or RetryPolicy()).timeout_s
    client = anthropic.AsyncAnthropic(
        api_key=os.environ["ANTHROPIC_API_KEY"],
        base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
        max_retries=0,
        timeout=anthropic.Timeout(timeout, connect=min(timeout, 10.0)),
        http_client=anthropic.DefaultAsyncHttpxClient(verify=shared_ssl_context()),
    )
    return AnthropicProvider(client)
