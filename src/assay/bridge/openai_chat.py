"""OpenAI Chat Completions (POST /v1/chat/completions) to and from the canonical request.

`system` and `developer` messages become the system prompt; an assistant's `tool_calls`
become `tool_use` blocks and `tool` messages `tool_result` blocks (consecutive turns of one
role merged, as the Messages shape wants). Dropped before the call and the cache key:
`stream`, `stream_options`, `user`, `metadata`, `store`, `seed`, `n`, `parallel_tool_calls`,
`reasoning_effort`, `response_format`, `prompt_cache_key`, and OpenRouter's own fields
(`usage`, `transforms`, `models`, `route`, `provider`, `plugins`, `reasoning`): assay's
`openrouter/` provider routes its calls itself. With `stream: true` the answer is sent as
`chat.completion.chunk`s and `data: [DONE]`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

from assay.bridge.openai_common import (
    arguments_text,
    finish_reason,
    merged,
    parse_arguments,
    prompt_tokens,
    text_parts,
    tool_choice,
    tool_spec,
)
from assay.models.base import Message, ModelRequest, ModelResponse

__all__ = ["completion_chunks", "error_body", "from_chat_request", "to_completion"]

_ids = itertools.count(1)


def from_chat_request(body: Any, *, sample: int, provider: str = "openai") -> ModelRequest:
    """A chat.completions request body as a canonical request, for the body's model of
    assay's `provider` (`openrouter`: the body names OpenRouter's `anthropic/claude-...`);
    ValueError when it is not one."""
    if not isinstance(body, dict):
        raise ValueError("the body is not a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError("model: a model name is required")
    raw = body.get("messages")
    if not isinstance(raw, list):
        raise ValueError("messages: a list is required")
    system: list[str] = []
    messages: list[Message] = []
    for index, message in enumerate(raw):
        if not isinstance(message, dict):
            raise ValueError(f"messages[{index}]: an object is required")
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(text_parts(message.get("content")))
        elif role == "user":
            text = "\n\n".join(text_parts(message.get("content")))
            messages.append(Message("user", ({"type": "text", "text": text},)))
        elif role == "assistant":
            messages.append(Message("assistant", tuple(_assistant_blocks(message))))
        elif role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": str(message.get("tool_call_id") or ""),
                "content": "\n".join(text_parts(message.get("content"))),
            }
            messages.append(Message("user", (result,)))
        else:
            raise ValueError(f"messages[{index}].role: {role!r} is not a chat role")
    tools = [
        tool_spec(f.get("name"), f.get("description"), f.get("parameters"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict) and isinstance(f := tool.get("function"), dict)
    ]
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    temperature = body.get("temperature")
    return ModelRequest(
        model=f"{provider}/{model}",
        system="\n\n".join(system),
        messages=merged(messages),
        tools=tuple(tools),
        tool_choice=tool_choice(body.get("tool_choice")),
        max_tokens=limit if isinstance(limit, int) and limit > 0 else 4096,
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        purpose="agent",
        sample=sample,
    )


def _assistant_blocks(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    text = "".join(text_parts(message.get("content")))
    if text:
        yield {"type": "text", "text": text}
    for call in message.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        function = call.get("function") or {}
        yield {
            "type": "tool_use",
            "id": str(call.get("id") or ""),
            "name": str(function.get("name") or ""),
            "input": parse_arguments(function.get("arguments")),
        }


def _message(response: ModelResponse) -> dict[str, Any]:
    calls = [
        {
            "id": block["id"],
            "type": "function",
            "function": {"name": block["name"], "arguments": arguments_text(block.get("input"))},
        }
        for block in response.tool_uses()
    ]
    message: dict[str, Any] = {"role": "assistant", "content": response.text() or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _usage(response: ModelResponse) -> dict[str, Any]:
    usage = response.usage
    prompt = prompt_tokens(usage)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }


def to_completion(response: ModelResponse, model: str) -> dict[str, Any]:
    """The whole chat.completion for `response`."""
    return {
        "id": f"chatcmpl-bridge{next(_ids):08d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": _message(response),
                "finish_reason": finish_reason(response.stop_reason),
                "logprobs": None,
            }
        ],
        "usage": _usage(response),
    }


def completion_chunks(
    completion: dict[str, Any], *, include_usage: bool
) -> Iterator[dict[str, Any]]:
    """`completion` as the `chat.completion.chunk`s of a streamed answer."""
    head = {k: completion[k] for k in ("id", "created", "model")} | {
        "object": "chat.completion.chunk"
    }
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    if message.get("content"):
        yield chunk({"content": message["content"]})
    for index, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield chunk({}, choice["finish_reason"])
    if include_usage:
        yield {**head, "choices": [], "usage": completion["usage"]}


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": None}}
