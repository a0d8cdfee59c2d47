"""The OpenAI fake playing a responder written for the Messages API (the corpus responder).

`FakeOpenAIMessages` is `FakeOpenAI` whose responder sees each chat.completions request as
the Messages request it stands for (`messages_view`) and may answer with a Messages body,
which goes back as the chat completion that says the same (`chat_body`): so one scripted
corpus plays the OpenAI-compatible providers (`openai/`, `openrouter/`) as it plays the
Anthropic API, Bedrock, Vertex and Gemini.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.scripted import Responder, Scripted

__all__ = ["FakeOpenAIMessages", "chat_body", "messages_responder", "messages_view"]


def messages_view(body: dict[str, Any]) -> dict[str, Any]:
    """A chat.completions request as the Messages request it stands for."""
    system = " ".join(
        m["content"] for m in body["messages"] if m["role"] in ("system", "developer")
    )
    messages: list[dict[str, Any]] = []
    for message in body["messages"]:
        role = message["role"]
        if role in ("system", "developer"):
            continue
        if role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id"),
                "content": message.get("content") or "",
            }
            if messages and messages[-1]["role"] == "user":
                messages[-1]["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
            continue
        blocks: list[dict[str, Any]] = []
        if message.get("content"):
            blocks.append({"type": "text", "text": _text(message["content"])})
        for call in message.get("tool_calls") or []:
            function = call["function"]
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": function["name"],
                    "input": json.loads(function.get("arguments") or "{}"),
                }
            )
        messages.append({"role": "assistant" if role == "assistant" else "user", "content": blocks})
    view: dict[str, Any] = {
        "model": body.get("model", "gpt"),
        "max_tokens": 4096,
        "system": system,
        "messages": messages,
    }
    tools = [
        {
            "name": tool["function"]["name"],
            "description": tool["function"].get("description", ""),
            "input_schema": tool["function"].get("parameters", {}),
        }
        for tool in body.get("tools") or []
    ]
    if tools:
        view["tools"] = tools
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        view["tool_choice"] = {"type": "tool", "name": choice["function"]["name"]}
    elif choice == "required":
        view["tool_choice"] = {"type": "any"}
    return view


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def chat_body(message: dict[str, Any]) -> dict[str, Any]:
    """A Messages response body as the helper-shaped chat completion that says the same."""
    texts = [block["text"] for block in message["content"] if block["type"] == "text"]
    calls = [
        {
            "id": block["id"],
            "type": "function",
            "function": {"name": block["name"], "arguments": json.dumps(block["input"])},
        }
        for block in message["content"]
        if block["type"] == "tool_use"
    ]
    usage = message["usage"]
    cached = usage.get("cache_read_input_tokens", 0)
    prompt = usage["input_tokens"] + cached
    reply: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        reply["tool_calls"] = calls
    return {
        "message": reply,
        "finish_reason": "tool_calls" if calls else "stop",
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": usage["output_tokens"],
            "total_tokens": prompt + usage["output_tokens"],
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


class FakeOpenAIMessages(FakeOpenAI):
    def wrap(self, answer: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        if "content" in answer and "usage" in answer:  # an Anthropic Messages body
            answer = chat_body(answer)
        return self.completion(answer, request)


def messages_responder(responder: Callable[[dict[str, Any]], Scripted]) -> Responder:
    """`responder` (written for the Messages API) answering chat.completions requests."""

    def answer(body: dict[str, Any]) -> Scripted:
        return responder(messages_view(body))

    return answer
