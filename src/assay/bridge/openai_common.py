"""What the two OpenAI APIs share in the bridge: tools, tool choice, merging turns, usage."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from assay._util import json_text
from assay.core.usage import Usage
from assay.models.base import INVALID_JSON_KEY, Message, ToolSpec

__all__ = [
    "arguments_text",
    "finish_reason",
    "merged",
    "parse_arguments",
    "prompt_tokens",
    "text_parts",
    "tool_choice",
    "tool_spec",
]

_FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}


def tool_spec(name: Any, description: Any, parameters: Any) -> ToolSpec:
    return ToolSpec(
        name=str(name or ""),
        description=str(description or ""),
        input_schema=parameters if isinstance(parameters, dict) else {"type": "object"},
    )


def tool_choice(choice: Any) -> str | None:
    """`required` / a named function -> the canonical choice; `auto`, `none`: None."""
    if choice == "required":
        return "any"
    if isinstance(choice, dict):
        name = choice.get("name") or (choice.get("function") or {}).get("name")
        if isinstance(name, str) and name:
            return name
    return None


def merged(messages: Iterable[Message]) -> tuple[Message, ...]:
    """Consecutive messages of one role as one (tool results then a user's text: one turn)."""
    out: list[Message] = []
    for message in messages:
        if not message.content:
            continue
        if out and out[-1].role == message.role:
            out[-1] = Message(message.role, out[-1].content + message.content)
        else:
            out.append(message)
    return tuple(out)


def parse_arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments string as a tool_use input: a JSON object, or the text as
    `{INVALID_JSON_KEY: raw}` when it is not one (sent back byte for byte by
    `arguments_text`). The same reading as the OpenAI adapter's, which is the model
    layer's own (the bridge does not reach into a provider's modules)."""
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


def arguments_text(tool_input: Any) -> str:
    """A tool_use block's input as the arguments string OpenAI's APIs carry."""

    if isinstance(tool_input, dict) and set(tool_input) == {INVALID_JSON_KEY}:
        return str(tool_input[INVALID_JSON_KEY])
    return json.dumps(tool_input if tool_input is not None else {})


def prompt_tokens(usage: Usage) -> int:
    """OpenAI's prompt count includes the cached tokens; assay's input_tokens does not."""
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


def finish_reason(stop_reason: str) -> str:
    return _FINISH.get(stop_reason, "stop")


def text_parts(content: Any) -> Iterator[str]:
    """The texts of a message's content: a string, or parts with `text` (input_text, ...)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part["text"]
            elif isinstance(part, str):
                yield part
