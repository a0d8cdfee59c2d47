"""Gemini's `generateContent` API to and from assay's canonical request.

`POST /v1beta/models/{model}:generateContent` (and `:streamGenerateContent`), the API
gemini-cli and opencode's `google/` models speak; the model is named by the path, and
goes to assay's `gemini/` provider. The provider direction of the same mapping is
`models/gemini_wire.py` (the SDK's shapes); what the two share (finish reasons, usage
counts, the thought signature's key, a tool result's `output`/`error` key) is in
`models/gemini_common.py`. Keys are read in the REST API's camelCase or its snake_case alike.

`contents` become messages (`user`, `model` -> assistant; consecutive turns of one role
merged): `text` parts text blocks, `functionCall` parts `tool_use` blocks (their thought
signature kept), `functionResponse` parts `tool_result` blocks. A call or a response
without an id (the AI SDK sends none) gets one from its place in the conversation, a
response the id of the earliest unanswered call of its name: ids the same every time the
conversation is sent, so the cache keys them alike. Thought parts (summaries of the
model's thinking) are dropped, as are media parts. `systemInstruction`'s texts are the
system prompt; `tools[].functionDeclarations` the tools (an OpenAPI-style `parameters`
schema, types in capitals, as JSON Schema); `toolConfig`'s mode ANY forces a call.
`generationConfig` gives `maxOutputTokens` and `temperature`; the rest of it (`topP`,
`thinkingConfig`, `responseJsonSchema`, ...), `safetySettings` and `labels` are dropped
before the call and the cache key. A request naming `cachedContent` (content stored at
Google) is refused: the bridge stores none.

The answer is a whole `GenerateContentResponse`, or, streamed, one chunk per part (the
last with the finish reason and the usage): server-sent `data:` events with `alt=sse`,
else the chunks as one JSON array, as Gemini sends them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from assay.bridge.openai_common import merged
from assay.models.base import INVALID_JSON_KEY, Message, ModelRequest, ModelResponse, ToolSpec
from assay.models.gemini_common import RESULT_KEYS, SIGNATURE_KEY, finish_reason, usage_metadata

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "METHODS",
    "error_body",
    "from_generate_request",
    "response_chunks",
    "to_generate_response",
]

METHODS = {"generateContent": False, "streamGenerateContent": True}
"""The methods served, each with whether it streams."""
DEFAULT_MAX_TOKENS = 65536
"""Without `maxOutputTokens` Gemini allows the model's own limit (65,536 for Gemini 2.5 and
3, thinking included: gemini-cli sets none and may let a model think 8,192 tokens)."""
_ROLES = {"user": "user", "model": "assistant", "function": "user"}
_STATUS = {"authentication_error": (401, "UNAUTHENTICATED"), "not_found": (404, "NOT_FOUND")}
_ids = itertools.count(1)


def from_generate_request(body: Any, *, model: str, sample: int) -> ModelRequest:
    """A generateContent request body for `model` as a canonical request; ValueError when
    it is not one."""
    if not isinstance(body, dict):
        raise ValueError("the body is not a JSON object")
    if not model:
        raise ValueError("a model name is required in the path: models/<model>:<method>")
    if _field(body, "cachedContent"):
        raise ValueError(
            "cachedContent: assay's bridge stores no cached content; send the whole conversation"
        )
    contents = _field(body, "contents")
    if not isinstance(contents, list):
        raise ValueError("contents: a list is required")
    calls = _Calls()
    messages = [_message(content, index, calls) for index, content in enumerate(contents)]
    config = _field(body, "generationConfig")
    config = config if isinstance(config, dict) else {}
    limit = _field(config, "maxOutputTokens")
    temperature = _field(config, "temperature")
    tools, choice = _tools(_field(body, "tools"), _field(body, "toolConfig"))
    return ModelRequest(
        model=f"gemini/{model.removeprefix('models/')}",
        system=_system(_field(body, "systemInstruction")),
        messages=merged(messages),
        tools=tools,
        tool_choice=choice,
        max_tokens=limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX_TOKENS,
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        purpose="agent",
        sample=sample,
    )


def _field(obj: dict[str, Any], name: str) -> Any:
    """`obj[name]` (camelCase), or its snake_case spelling, which the REST API takes too."""
    if name in obj:
        return obj[name]
    return obj.get("".join(f"_{c.lower()}" if c.isupper() else c for c in name))


class _Calls:
    """The function calls of the conversation so far, to pair responses sent without ids."""

    def __init__(self) -> None:
        self.unanswered: list[tuple[str, str]] = []  # (name, id), oldest first

    def call(self, name: str, given: Any, place: str) -> str:
        call_id = given if isinstance(given, str) and given else f"call_{place}"
        self.unanswered.append((name, call_id))
        return call_id

    def response(self, name: str, given: Any, place: str) -> str:
        if isinstance(given, str) and given:
            self.unanswered = [pair for pair in self.unanswered if pair[1] != given]
            return given
        for index, (called, call_id) in enumerate(self.unanswered):
            if called == name:
                del self.unanswered[index]
                return call_id
        return f"call_{place}"


def _message(content: Any, index: int, calls: _Calls) -> Message:
    if not isinstance(content, dict):
        raise ValueError(f"contents[{index}]: an object is required")
    role = content.get("role") or "user"
    if role not in _ROLES:
        raise ValueError(f"contents[{index}].role: {role!r} is not user or model")
    parts = content.get("parts")
    if not isinstance(parts, list):
        raise ValueError(f"contents[{index}].parts: a list is required")
    blocks: list[dict[str, Any]] = []
    for number, part in enumerate(parts):
        if not isinstance(part, dict):
            raise ValueError(f"contents[{index}].parts[{number}]: an object is required")
        block = _block(part, calls, f"{index}_{number}")
        if block is not None:
            blocks.append(block)
    return Message(_ROLES[role], tuple(blocks))  # type: ignore[arg-type]


def _block(part: dict[str, Any], calls: _Calls, place: str) -> dict[str, Any] | None:
    call = _field(part, "functionCall")
    if isinstance(call, dict):
        name = str(call.get("name") or "")
        args = call.get("args")
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": calls.call(name, call.get("id"), place),
            "name": name,
            "input": args if isinstance(args, dict) else {},
        }
        signature = _field(part, "thoughtSignature")
        if isinstance(signature, str) and signature:
            block[SIGNATURE_KEY] = signature
        return block
    answer = _field(part, "functionResponse")
    if isinstance(answer, dict):
        name = str(answer.get("name") or "")
        text, is_error = _result(answer.get("response"))
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": calls.response(name, answer.get("id"), place),
            "content": text,
        }
        if is_error:
            result["is_error"] = True
        return result
    said = part.get("text")
    if isinstance(said, str) and said and not part.get("thought"):
        return {"type": "text", "text": said}
    return None  # a thought summary, media, code execution: not in the canonical request


def _result(response: Any) -> tuple[str, bool]:
    """A function response's text, and whether it reports an error: gemini-cli sends
    `{output}` or `{error}` (as assay's adapter does), the AI SDK `{name, content}`."""
    if not isinstance(response, dict):
        return _text(response), False
    error, output = RESULT_KEYS[True], RESULT_KEYS[False]
    if output not in response and error in response:
        return _text(response[error]), True
    for key in (output, "content"):
        if key in response:
            return _text(response[key]), False
    return _text(response), False


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _system(instruction: Any) -> str:
    if isinstance(instruction, str):
        return instruction
    parts = instruction.get("parts") if isinstance(instruction, dict) else None
    if not isinstance(parts, list):
        return ""
    texts = (part.get("text") for part in parts if isinstance(part, dict))
    return "\n\n".join(text for text in texts if isinstance(text, str))


def _tools(tools: Any, config: Any) -> tuple[tuple[ToolSpec, ...], str | None]:
    specs: list[ToolSpec] = []
    for tool in tools if isinstance(tools, list) else []:
        declarations = _field(tool, "functionDeclarations") if isinstance(tool, dict) else None
        for declared in declarations if isinstance(declarations, list) else []:
            if not isinstance(declared, dict) or not declared.get("name"):
                continue
            schema = _field(declared, "parametersJsonSchema")
            if not isinstance(schema, dict):
                schema = _json_schema(declared.get("parameters"))
            specs.append(
                ToolSpec(
                    name=str(declared["name"]),
                    description=str(declared.get("description") or ""),
                    input_schema=schema,
                )
            )
    calling = _field(config, "functionCallingConfig") if isinstance(config, dict) else None
    choice = None
    if specs and isinstance(calling, dict) and calling.get("mode") == "ANY":
        names = _field(calling, "allowedFunctionNames")
        one = isinstance(names, list) and len(names) == 1 and isinstance(names[0], str)
        choice = names[0] if one else "any"
    return tuple(specs), choice


def _json_schema(schema: Any) -> dict[str, Any]:
    """Gemini's OpenAPI-style schema (`"type": "OBJECT"`) as JSON Schema (lower-case types);
    none: an object of no properties."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    return _lower_types(schema)


def _lower_types(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: item.lower() if key == "type" and isinstance(item, str) else _lower_types(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_lower_types(item) for item in value]
    return value


def to_generate_response(response: ModelResponse, model: str) -> dict[str, Any]:
    """The whole GenerateContentResponse for `response`."""
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": list(_parts(response))},
                "finishReason": finish_reason(response.stop_reason),
                "index": 0,
            }
        ],
        "usageMetadata": usage_metadata(response.usage),
        "modelVersion": model,
        "responseId": f"bridge-{next(_ids):08d}",
    }


def _parts(response: ModelResponse) -> Iterator[dict[str, Any]]:
    for block in response.content:
        if block.get("type") == "text" and block.get("text"):
            yield {"text": block["text"]}
        elif block.get("type") == "tool_use":
            args = block.get("input")
            if not isinstance(args, dict) or INVALID_JSON_KEY in args:
                args = {}  # Gemini's arguments are an object; a call that wrote none has none
            part: dict[str, Any] = {
                # The id goes back in the function response: without one, gemini-cli makes
                # one of the time of day, and the next request would never replay.
                "functionCall": {"id": block["id"], "name": block["name"], "args": args}
            }
            if isinstance(block.get(SIGNATURE_KEY), str):
                part["thoughtSignature"] = block[SIGNATURE_KEY]
            yield part


def response_chunks(whole: dict[str, Any]) -> list[dict[str, Any]]:
    """`whole` as the chunks of a streamed answer: one a part, the finish reason and the
    usage on the last (a candidate with no part still ends the stream)."""
    candidate = whole["candidates"][0]
    parts = candidate["content"]["parts"] or [None]
    head = {k: whole[k] for k in ("modelVersion", "responseId")}
    chunks = []
    for index, part in enumerate(parts):
        piece: dict[str, Any] = {
            "content": {"role": "model", "parts": [part] if part is not None else []},
            "index": 0,
        }
        chunk: dict[str, Any] = {"candidates": [piece], **head}
        if index == len(parts) - 1:
            piece["finishReason"] = candidate["finishReason"]
            chunk["usageMetadata"] = whole["usageMetadata"]
        chunks.append(chunk)
    return chunks


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """Google's error shape; the code is the HTTP status the bridge answers with."""
    code, status = _STATUS.get(error_type, (400, "INVALID_ARGUMENT"))
    return {"error": {"code": code, "message": message, "status": status}}
