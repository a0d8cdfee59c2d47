"""The Anthropic Messages API (POST /v1/messages) to and from assay's canonical request.

Canonical blocks are already in the Messages shape, so messages map nearly 1:1 (the
`thinking` / `redacted_thinking` blocks of earlier turns included, sent back as they came).
The request's `thinking` config goes on to the provider (`ModelRequest.thinking`, in the
cache key), and the thinking blocks of the answer come back, whole or streamed
(`thinking_delta`, `signature_delta`). What a request carries that the canonical one does
not is dropped before the call, and so before the cache key: `stream` (answered here),
`metadata` (Claude Code puts a per-session `user_id` there), `cache_control` marks
(assay's adapter places its own), `top_p` / `top_k`, `stop_sequences`, and server tools
(web search, code execution: they have no `input_schema` and run on Anthropic's side). A
system prompt given as blocks is their texts joined. The answer is a whole message, or
with `stream: true` that message as the API's server-sent events, synthesised from it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from assay.models.base import Message, ModelRequest, ModelResponse, ToolSpec

__all__ = ["error_body", "from_messages_request", "message_events", "to_message"]

_ids = itertools.count(1)
_VOLATILE_BLOCK_KEYS = ("cache_control", "citations")


def from_messages_request(body: Any, *, sample: int) -> ModelRequest:
    """A Messages API request body as a canonical request; ValueError when it is not one."""
    if not isinstance(body, dict):
        raise ValueError("the body is not a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError("model: a model name is required")
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list):
        raise ValueError("messages: a list is required")
    messages = tuple(_message(m, index) for index, m in enumerate(raw_messages))
    max_tokens = body.get("max_tokens")
    temperature = body.get("temperature")
    return ModelRequest(
        model=f"anthropic/{model}",
        system=_system(body.get("system")),
        messages=messages,
        tools=tuple(_tools(body.get("tools"))),
        tool_choice=_tool_choice(body.get("tool_choice")),
        max_tokens=max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else 4096,
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        purpose="agent",
        sample=sample,
        thinking=_thinking(body.get("thinking")),
    )


def _thinking(config: Any) -> dict[str, Any] | None:
    """The request's `thinking` config as the provider takes it; which types and budgets a
    model accepts is the provider's to say (its 400 comes back to the CLI)."""
    if config is None:
        return None
    if not isinstance(config, dict) or not isinstance(config.get("type"), str):
        raise ValueError("thinking: an object with a `type` is required")
    return dict(config)


def _system(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n\n".join(
            str(block.get("text", ""))
            for block in system
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def _message(raw: Any, index: int) -> Message:
    if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
        raise ValueError(f"messages.{index}: a user or assistant message is required")
    content = raw.get("content")
    if isinstance(content, str):
        blocks: tuple[dict[str, Any], ...] = ({"type": "text", "text": content},)
    elif isinstance(content, list):
        blocks = tuple(_block(block) for block in content if isinstance(block, dict))
    else:
        raise ValueError(f"messages.{index}.content: a string or a list of blocks is required")
    return Message(role=raw["role"], content=blocks)


def _block(block: dict[str, Any]) -> dict[str, Any]:
    clean = {k: v for k, v in block.items() if k not in _VOLATILE_BLOCK_KEYS}
    if clean.get("type") == "tool_result" and isinstance(clean.get("content"), list):
        clean["content"] = [
            _block(part) if isinstance(part, dict) else part for part in clean["content"]
        ]
    return clean


def _tools(tools: Any) -> Iterator[ToolSpec]:
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and isinstance(tool.get("input_schema"), dict):
            yield ToolSpec(
                name=str(tool.get("name", "")),
                description=str(tool.get("description") or ""),
                input_schema=tool["input_schema"],
            )


def _tool_choice(choice: Any) -> str | None:
    if not isinstance(choice, dict):
        return None
    if choice.get("type") == "any":
        return "any"
    if choice.get("type") == "tool" and isinstance(choice.get("name"), str):
        return str(choice["name"])
    return None  # auto; `none` is not in the canonical request: the model decides


def to_message(response: ModelResponse, model: str) -> dict[str, Any]:
    """The whole Messages API response for `response`."""
    usage = response.usage
    return {
        "id": f"msg_bridge_{next(_ids):08d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": response.content,
        "stop_reason": response.stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_input_tokens": usage.cache_read_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
        },
    }


def message_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """`message` as the stream of (event, data) the API sends with `stream: true`."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        kind = block.get("type")
        first: dict[str, Any]
        deltas: list[dict[str, Any]]
        if kind == "text":
            first = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block.get("text", "")}]
        elif kind == "tool_use":
            first = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        elif kind == "thinking":
            first = {"type": "thinking", "thinking": ""}
            deltas = [{"type": "thinking_delta", "thinking": block.get("thinking", "")}]
            if block.get("signature"):
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:  # redacted_thinking and what else comes whole
            first, deltas = block, []
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": first,
            },
        )
        for delta in deltas:
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": delta,
                },
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}
