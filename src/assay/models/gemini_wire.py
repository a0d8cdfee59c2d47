"""The canonical request and response in the Gemini API's `generateContent` shape.

Plain data both ways (no SDK types), so that the mapping is testable on its own and the
SDK is only the transport. Canonical `tool_use` blocks become `functionCall` parts and
`tool_result` blocks `functionResponse` parts (Gemini names the function a response
answers, so the name is looked up by the call's id). A function call's thought signature
(Gemini 3 requires it back in the next turn) is kept in its `tool_use` block. What this
mapping shares with the bridge's (the other direction) is in `gemini_common.py`.
"""

from __future__ import annotations

import base64
import itertools
from typing import Any

from assay.models.base import INVALID_JSON_KEY, ModelRequest, ModelResponse
from assay.models.gemini_common import (
    RESULT_KEYS,
    SIGNATURE_KEY,
    stop_reason,
    usage_of,
)

__all__ = ["SIGNATURE_KEY", "from_gemini", "gemini_config", "gemini_contents"]

_call_ids = itertools.count(1)
"""Gemini's v1 API gives function calls no id; the canonical blocks need one each."""
_ROLES = {"user": "user", "assistant": "model"}


def gemini_contents(request: ModelRequest) -> list[dict[str, Any]]:
    """`contents` for `generateContent`: one entry a message, its blocks as parts."""
    names: dict[str, str] = {}
    contents: list[dict[str, Any]] = []
    for message in request.messages:
        parts: list[dict[str, Any]] = []
        for block in message.content:
            part = _part(block, names)
            if part is not None:
                parts.append(part)
        if parts:
            contents.append({"role": _ROLES[message.role], "parts": parts})
    return contents


def _part(block: dict[str, Any], names: dict[str, str]) -> dict[str, Any] | None:
    kind = block.get("type")
    if kind == "text":
        text = str(block.get("text", ""))
        return {"text": text} if text else None
    if kind == "tool_use":
        call_id = str(block.get("id") or "")
        names[call_id] = str(block.get("name"))
        args = block.get("input")
        if not isinstance(args, dict) or INVALID_JSON_KEY in args:
            args = {}  # Gemini's arguments are always an object; the error follows in the result
        part: dict[str, Any] = {"function_call": {"name": names[call_id], "args": args}}
        if call_id:
            part["function_call"]["id"] = call_id
        signature = block.get(SIGNATURE_KEY)
        if isinstance(signature, str):
            part["thought_signature"] = base64.urlsafe_b64decode(signature)
        return part
    if kind == "tool_result":
        call_id = str(block.get("tool_use_id") or "")
        outcome = RESULT_KEYS[bool(block.get("is_error"))]
        response: dict[str, Any] = {
            "name": names.get(call_id, "tool"),
            "response": {outcome: _result_text(block.get("content"))},
        }
        if call_id:
            response["id"] = call_id
        return {"function_response": response}
    return None


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(item.get("text", "")) for item in content if isinstance(item, dict))
    return "" if content is None else str(content)


def gemini_config(request: ModelRequest) -> dict[str, Any]:
    """`config` for `generateContent`: system instruction, limits, functions."""
    config: dict[str, Any] = {"max_output_tokens": request.max_tokens}
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.system:
        config["system_instruction"] = request.system
    if request.tools:
        config["tools"] = [
            {
                "function_declarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters_json_schema": tool.input_schema,
                    }
                    for tool in request.tools
                ]
            }
        ]
        calling: dict[str, Any] = {"mode": "AUTO"}
        if request.tool_choice == "any":
            calling = {"mode": "ANY"}
        elif request.tool_choice is not None:
            calling = {"mode": "ANY", "allowed_function_names": [request.tool_choice]}
        config["tool_config"] = {"function_calling_config": calling}
    return config


def from_gemini(body: dict[str, Any]) -> ModelResponse:
    """A `generateContent` response (JSON, camelCase) as a ModelResponse; ValueError else."""
    candidates = body.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        feedback = body.get("promptFeedback") or {}
        blocked = feedback.get("blockReason") if isinstance(feedback, dict) else None
        raise ValueError(
            f"no candidates (prompt blocked: {blocked})" if blocked else "no candidates"
        )
    candidate = candidates[0]
    parts = (candidate.get("content") or {}).get("parts") or []
    content: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, dict) or part.get("thought"):
            continue  # thought summaries are not the answer
        call = part.get("functionCall")
        if isinstance(call, dict):
            args = call.get("args")
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": call.get("id") or f"gemini_call_{next(_call_ids)}",
                "name": call.get("name"),
                "input": args if isinstance(args, dict) else {INVALID_JSON_KEY: str(args)},
            }
            if isinstance(part.get("thoughtSignature"), str):
                block[SIGNATURE_KEY] = part["thoughtSignature"]
            content.append(block)
        elif isinstance(part.get("text"), str):
            content.append({"type": "text", "text": part["text"]})
    finish = str(candidate.get("finishReason") or "STOP")
    stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else stop_reason(finish)
    return ModelResponse(
        content=content, stop_reason=stop, usage=usage_of(body.get("usageMetadata"))
    )
