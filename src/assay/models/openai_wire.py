"""Canonical (Messages-shaped) requests to and from OpenAI chat.completions, as plain data.

Pure functions over dicts, so the translation is testable without a client:
- the system prompt becomes a `system` message;
- `tool_use` blocks become the assistant's `tool_calls`, `tool_result` blocks become
  `tool` messages (placed right after the assistant turn, as the API requires);
- thinking blocks are Anthropic-only and are dropped;
- tool-call arguments that are not a JSON object come back as
  `{"__invalid_json__": raw}` so the caller can ask again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from assay._util import json_text
from assay.core.usage import Usage
from assay.models.base import INVALID_JSON_KEY, Message, ToolSpec

__all__ = [
    "chat_messages",
    "chat_tool_choice",
    "chat_tools",
    "from_chat_completion",
    "stop_reason",
]


_STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


def chat_messages(system: str, messages: Iterable[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "assistant":
            out.append(_assistant_message(message.content))
        else:
            out.extend(_user_messages(message.content))
    return out


def chat_tools(tools: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]


def chat_tool_choice(choice: str | None) -> str | dict[str, Any]:
    if choice is None:
        return "auto"
    if choice == "any":
        return "required"
    return {"type": "function", "function": {"name": choice}}


def stop_reason(finish_reason: str | None) -> str:
    """chat.completions finish_reason -> the canonical (Messages API) stop reason."""
    if not finish_reason:
        return "end_turn"
    return _STOP_REASONS.get(finish_reason, finish_reason)


def from_chat_completion(completion: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str, Usage]:
    """Content blocks, stop reason and usage of a chat.completion (as a dict)."""
    choices = completion.get("choices") or []
    if not choices:
        raise ValueError("the response has no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    content: list[dict[str, Any]] = []
    text = message.get("content")
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id") or "",
                "name": function.get("name") or "",
                "input": parse_arguments(function.get("arguments")),
            }
        )
    return content, stop_reason(choice.get("finish_reason")), _usage(completion.get("usage"))


def parse_arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    text = raw if isinstance(raw, str) else ""
    if not text.strip():
        return {}
    try:
        parsed = json_text.loads(text)
    except ValueError:
        return {INVALID_JSON_KEY: text}
    return parsed if isinstance(parsed, dict) else {INVALID_JSON_KEY: text}


def _usage(raw: Mapping[str, Any] | None) -> Usage:
    if not raw:
        return Usage()
    details = raw.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    written = int(details.get("cache_write_tokens") or 0)
    prompt = int(raw.get("prompt_tokens") or 0)
    # prompt_tokens counts cached tokens too; Usage.input_tokens is the uncached rest.
    return Usage(
        input_tokens=max(0, prompt - cached - written),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


def _assistant_message(blocks: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {
                        "name": block["name"],
                        "arguments": _arguments(block.get("input")),
                    },
                }
            )
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _arguments(tool_input: Any) -> str:
    if isinstance(tool_input, dict) and set(tool_input) == {INVALID_JSON_KEY}:
        return str(tool_input[INVALID_JSON_KEY])  # send back exactly what the model wrote
    return json.dumps(tool_input if tool_input is not None else {})


def _user_messages(blocks: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    texts: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            content = _result_text(block.get("content"))
            if block.get("is_error"):
                content = f"Error: {content}"
            results.append(
                {"role": "tool", "tool_call_id": block["tool_use_id"], "content": content}
            )
        elif kind == "text":
            texts.append(str(block.get("text", "")))
    if texts:
        results.append({"role": "user", "content": "\n\n".join(texts)})
    return results


def _result_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return json.dumps(content)
