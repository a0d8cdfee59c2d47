"""OpenAI Responses (POST /v1/responses) to and from the canonical request.

`instructions` and `system` / `developer` input messages become the system prompt; input
`message` items become turns, `function_call` items `tool_use` blocks and
`function_call_output` items `tool_result` blocks. A `custom` tool (free-form input, as
Codex's `apply_patch`) is offered to the model as a function of one string `input`, and
its calls go back as `custom_tool_call` items. `reasoning` items are dropped (the
canonical request holds no OpenAI reasoning), as are `stream`, `store`, `include`,
`metadata`, `user`, `prompt_cache_key`, `reasoning`, `text` and `parallel_tool_calls`.
Tools of other types (web search, file search, a local shell) are not offered.

A request may continue a response the bridge served in this attempt
(`previous_response_id`): its input is then that response's conversation and output, then
the request's own input (the earlier `instructions` are not carried over, as in the API),
read from the attempt's `StoredResponses`; an id it does not hold is the API's 400
`previous_response_not_found`. A response is stored unless the request says `store:
false` (Codex does, and sends the whole conversation every turn). A response's id, and its
items', are made from the attempt's count of responses and the answer, so a replayed
attempt (`--cache`, `--offline`) gives the same ids in the same order.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import Iterator
from typing import Any

from assay.bridge.openai_common import (
    arguments_text,
    merged,
    parse_arguments,
    text_parts,
    tool_choice,
    tool_spec,
)
from assay.bridge.stored_responses import StoredResponses
from assay.models.base import Message, ModelRequest, ModelResponse, ToolSpec

__all__ = [
    "ResponseNotFound",
    "answer",
    "custom_tools",
    "error_body",
    "from_responses_request",
    "response_events",
    "to_response",
]

_CUSTOM_INPUT = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "the tool's free-form input"}},
    "required": ["input"],
}


def custom_tools(body: Any) -> frozenset[str]:
    """The names of the request's free-form (`custom`) tools."""
    tools = body.get("tools") if isinstance(body, dict) else None
    return frozenset(
        str(tool.get("name"))
        for tool in tools or []
        if isinstance(tool, dict) and tool.get("type") == "custom"
    )


class ResponseNotFound(ValueError):
    """`previous_response_id` names no response this attempt's bridge holds: `body` is
    the API's own error for it."""

    def __init__(self, response_id: str, stored: StoredResponses) -> None:
        message = (
            f"Previous response with id {response_id!r} not found. (assay's bridge keeps the "
            f"responses of this attempt asked to be stored, the newest {stored.max_responses}"
            f" and {stored.max_bytes // 2**20} MiB of conversation at most; or send the "
            f"whole conversation as input)"
        )
        super().__init__(message)
        self.body = {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": "previous_response_id",
                "code": "previous_response_not_found",
            }
        }


def from_responses_request(
    body: Any, *, sample: int, stored: StoredResponses | None = None
) -> ModelRequest:
    """A responses.create body as a canonical request, continuing the response of
    `stored` it names (`previous_response_id`); ValueError when it is not one,
    ResponseNotFound when it names none held."""
    if not isinstance(body, dict):
        raise ValueError("the body is not a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError("model: a model name is required")
    system = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
    items = [*_earlier_items(body, stored), *input_items(body)]
    messages: list[Message] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValueError(f"input[{index}]: an object is required")
        kind = item.get("type") or "message"
        if kind == "message":
            role = item.get("role")
            text = "\n\n".join(text_parts(item.get("content")))
            if role in ("system", "developer"):
                system.append(text)
            elif role in ("user", "assistant"):
                messages.append(Message(role, ({"type": "text", "text": text},) if text else ()))
            else:
                raise ValueError(f"input[{index}].role: {role!r} is not a message role")
        elif kind in ("function_call", "custom_tool_call"):
            tool_input = (
                parse_arguments(item.get("arguments"))
                if kind == "function_call"
                else {"input": str(item.get("input") or "")}
            )
            block = {
                "type": "tool_use",
                "id": str(item.get("call_id") or ""),
                "name": str(item.get("name") or ""),
                "input": tool_input,
            }
            messages.append(Message("assistant", (block,)))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            result = {
                "type": "tool_result",
                "tool_use_id": str(item.get("call_id") or ""),
                "content": "\n".join(text_parts(item.get("output"))),
            }
            messages.append(Message("user", (result,)))
        # reasoning and other items: not in the canonical request
    limit = body.get("max_output_tokens")
    temperature = body.get("temperature")
    return ModelRequest(
        model=f"openai/{model}",
        system="\n\n".join(system),
        messages=merged(messages),
        tools=tuple(_tools(body.get("tools"))),
        tool_choice=tool_choice(body.get("tool_choice")),
        max_tokens=limit if isinstance(limit, int) and limit > 0 else 4096,
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        purpose="agent",
        sample=sample,
    )


def input_items(body: dict[str, Any]) -> list[Any]:
    """The request's own input as a list of items (a string is one user message)."""
    raw = body.get("input")
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise ValueError("input: a string or a list of items is required")
    return items


def _earlier_items(body: dict[str, Any], stored: StoredResponses | None) -> tuple[Any, ...]:
    previous = body.get("previous_response_id")
    if previous is None:
        return ()
    if not isinstance(previous, str):
        raise ValueError("previous_response_id: a response id (a string) is required")
    conversation = stored.conversation(previous) if stored is not None else None
    if conversation is None:
        raise ResponseNotFound(previous, stored if stored is not None else StoredResponses())
    return conversation.items


def answer(
    body: dict[str, Any], response: ModelResponse, stored: StoredResponses
) -> dict[str, Any]:
    """The `response` object answering request `body`, its id the next of the attempt's;
    its conversation kept in `stored` unless the request says `store: false`."""
    model = str(body["model"])
    stored.served += 1
    content = json.dumps([stored.served, model, response.content], sort_keys=True)
    response_id = "resp_" + hashlib.sha256(content.encode("utf-8")).hexdigest()[:40]
    whole = to_response(response, model, custom=custom_tools(body), response_id=response_id)
    if body.get("store") is not False:
        previous = body.get("previous_response_id")
        # Read again: the one it continued may have been dropped while the model answered.
        before = stored.conversation(previous) if isinstance(previous, str) else None
        if before is not None or previous is None:
            stored.keep(response_id, before=before, added=[*input_items(body), *whole["output"]])
    return whole


def _tools(tools: Any) -> Iterator[ToolSpec]:
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "function":
            yield tool_spec(tool.get("name"), tool.get("description"), tool.get("parameters"))
        elif tool.get("type") == "custom":
            yield tool_spec(tool.get("name"), tool.get("description"), _CUSTOM_INPUT)


def _output(
    response: ModelResponse, custom: frozenset[str], response_id: str
) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    suffix = response_id.removeprefix("resp_")

    def item_id(prefix: str) -> str:
        return f"{prefix}_{suffix}_{len(output)}"

    text = response.text()
    if text:
        output.append(
            {
                "type": "message",
                "id": item_id("msg"),
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    for block in response.tool_uses():
        tool_input = block.get("input")
        if block["name"] in custom:
            item = {
                "type": "custom_tool_call",
                "id": item_id("ctc"),
                "call_id": block["id"],
                "name": block["name"],
                "input": str((tool_input or {}).get("input", "")),
                "status": "completed",
            }
        else:
            item = {
                "type": "function_call",
                "id": item_id("fc"),
                "call_id": block["id"],
                "name": block["name"],
                "arguments": arguments_text(tool_input),
                "status": "completed",
            }
        output.append(item)
    return output


def to_response(
    response: ModelResponse,
    model: str,
    *,
    custom: frozenset[str] = frozenset(),
    response_id: str = "resp_bridge",
) -> dict[str, Any]:
    """The whole `response` object for `response`, with id `response_id`."""
    usage = response.usage
    cached = usage.cache_read_tokens
    prompt = usage.input_tokens + cached + usage.cache_write_tokens
    incomplete = response.stop_reason == "max_tokens"
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "error": None,
        "model": model,
        "output": _output(response, custom, response_id),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + usage.output_tokens,
        },
    }


def response_events(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`response` as the events of a streamed answer (each with its `sequence_number`)."""
    numbers = itertools.count()

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "sequence_number": next(numbers), **fields}

    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    yield event("response.created", response=pending)
    yield event("response.in_progress", response=pending)
    for index, item in enumerate(response["output"]):
        kind = item["type"]
        if kind == "message":
            yield event(
                "response.output_item.added", output_index=index, item={**item, "content": []}
            )
            part = item["content"][0]
            at = {"item_id": item["id"], "output_index": index, "content_index": 0}
            yield event("response.content_part.added", **at, part={**part, "text": ""})
            yield event("response.output_text.delta", **at, delta=part["text"], logprobs=[])
            yield event("response.output_text.done", **at, text=part["text"], logprobs=[])
            yield event("response.content_part.done", **at, part=part)
        elif kind == "function_call":
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            at = {"item_id": item["id"], "output_index": index}
            yield event("response.function_call_arguments.delta", **at, delta=item["arguments"])
            yield event(
                "response.function_call_arguments.done",
                **at,
                name=item["name"],
                arguments=item["arguments"],
            )
        else:  # custom_tool_call
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "input": "", "status": "in_progress"},
            )
            at = {"item_id": item["id"], "output_index": index}
            yield event("response.custom_tool_call_input.delta", **at, delta=item["input"])
            yield event("response.custom_tool_call_input.done", **at, input=item["input"])
        yield event("response.output_item.done", output_index=index, item=item)
    final = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    yield event(final, response=response)


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": None}}
