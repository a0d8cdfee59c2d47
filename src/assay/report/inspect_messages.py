"""An attempt's conversation as inspect's chat messages (its published log schema:
`ChatMessageSystem`, `ChatMessageUser`, `ChatMessageAssistant` with `tool_calls`,
`ChatMessageTool`), for the inspect eval log (`report/inspect_log.py`).

The builtin agent's `transcript.json` holds the whole conversation in the Messages API's
shape (content blocks: `text`, `thinking`, `tool_use`, `tool_result`); each block becomes
what inspect would have logged for it. Any other agent's transcript is its own output
(a CLI's stdout): it becomes one assistant message, after the one user message the
attempt can be described by.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Conversation", "conversation_of", "text_conversation"]

_SEEN_BLOCK_TYPES = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "tool_result"})


@dataclass
class Conversation:
    """What one sample shows: its input messages, all its messages, its final answer."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    completion: str = ""
    """The final answer: the submitted result as JSON, else the last assistant text."""
    stop_reason: str = "unknown"

    @property
    def input(self) -> list[dict[str, Any]]:
        """The messages before the model's first answer (system and the task)."""
        first = next(
            (i for i, m in enumerate(self.messages) if m["role"] not in ("system", "user")),
            len(self.messages),
        )
        return self.messages[:first]

    @property
    def last_assistant(self) -> dict[str, Any]:
        for message in reversed(self.messages):
            if message["role"] == "assistant":
                return message
        return _assistant(self.completion, [], None)


def conversation_of(transcript: dict[str, Any], *, model: str | None) -> Conversation:
    """The builtin agent's transcript (`{"system", "messages", "result", "turns"}`)."""
    messages: list[dict[str, Any]] = []
    system = transcript.get("system")
    if isinstance(system, str) and system:
        messages.append({"role": "system", "content": system})
    names: dict[str, str] = {}  # a tool call's id -> its function, for the tool's answer
    last_text = ""
    for message in transcript.get("messages") or []:
        role, content = message.get("role"), message.get("content")
        if role == "assistant":
            converted = _assistant_message(content, names, model)
            messages.append(converted)
            last_text = _text_of(converted["content"]) or last_text
        elif role == "user":
            messages.extend(_user_messages(content, names))
    result = transcript.get("result")
    completion = _json_text(result) if result not in (None, {}) else last_text
    turns = transcript.get("turns") or []
    stop = turns[-1].get("stop_reason") if turns and isinstance(turns[-1], dict) else None
    return Conversation(messages, completion, _stop_reason(stop))


def text_conversation(prompt: str, answer: str, *, model: str | None) -> Conversation:
    """Another agent's attempt: what it was asked, and what it answered (its output)."""
    return Conversation(
        [{"role": "user", "content": prompt}, _assistant(answer, [], model)],
        answer,
        "stop" if answer else "unknown",
    )


def _assistant_message(content: Any, names: dict[str, str], model: str | None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in _blocks(content):
        kind = block.get("type")
        if kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind in ("thinking", "redacted_thinking"):
            redacted = kind == "redacted_thinking"
            reasoning = block.get("data" if redacted else "thinking", "")
            parts.append({"type": "reasoning", "reasoning": str(reasoning), "redacted": redacted})
        elif kind == "tool_use":
            call_id, name = str(block.get("id", "")), str(block.get("name", ""))
            names[call_id] = name
            arguments = block.get("input")
            calls.append(
                {
                    "id": call_id,
                    "function": name,
                    "arguments": arguments if isinstance(arguments, dict) else {},
                    "type": "function",
                }
            )
        elif kind not in _SEEN_BLOCK_TYPES:
            parts.append({"type": "text", "text": _json_text(block)})
    return _assistant(parts, calls, model)


def _assistant(
    content: str | list[dict[str, Any]], calls: list[dict[str, Any]], model: str | None
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content or "",
        "tool_calls": calls or None,
        "model": model,
        "source": "generate",
    }


def _user_messages(content: Any, names: dict[str, str]) -> list[dict[str, Any]]:
    """A user turn: each tool result is a tool message (inspect keeps them apart), then any
    text the turn also holds (assay's nudges to submit) as a user message."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    for block in _blocks(content):
        if block.get("type") == "tool_result":
            call_id = str(block.get("tool_use_id", ""))
            text = _result_text(block.get("content"))
            tool: dict[str, Any] = {
                "role": "tool",
                "content": text,
                "tool_call_id": call_id,
                "function": names.get(call_id),
            }
            if block.get("is_error"):
                tool["error"] = {"type": "unknown", "message": text}
            out.append(tool)
        elif block.get("type") == "text":
            texts.append({"type": "text", "text": str(block.get("text", ""))})
        else:
            texts.append({"type": "text", "text": _json_text(block)})
    if texts:
        out.append({"role": "user", "content": texts})
    return out


def _blocks(content: Any) -> Iterable[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict)]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        str(block.get("text", "")) if block.get("type") == "text" else _json_text(block)
        for block in _blocks(content)
    )


def _text_of(content: str | list[dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")


def _stop_reason(reason: Any) -> str:
    """The Messages API's stop reason in inspect's words."""
    return {
        "end_turn": "stop",
        "stop_sequence": "stop",
        "tool_use": "tool_calls",
        "max_tokens": "max_tokens",
        "refusal": "content_filter",
    }.get(str(reason), "unknown")


def _json_text(value: Any) -> str:

    return json.dumps(value, ensure_ascii=False, indent=2)
