"""The canonical request and response in the Gemini API's `generateContent` shape.

Plain data both ways (no SDK types), so that the mapping is testable on its own and the
SDK is only the transport. Canonical `tool_use` blocks become `functionCall` parts and
`tool_result` blocks `functionResponse` parts (Gemini names the function a response
answers, so the name is looked up by the call's id). A function call's thought signature
(Gemini 3 requires it back in the next turn) is kept in its `tool_use` block.
"""

from __future__ import annotations

import base64
import itertools
from typing import Any

from assay.core.usage import Usage
from assay.models.base import INVALID_JSON_KEY, ModelRequest, ModelResponse

__all__ = [
    "RESULT_KEYS",
    "SIGNATURE_KEY",
    "finish_reason",
    "from_gemini",
    "gemini_config",
    "gemini_contents",
    "usage_metadata",
]

SIGNATURE_KEY = "thought_signature"
"""The extra key of a `tool_use` block holding Gemini's signature (base64 text)."""

_call_ids = itertools.count(1)
"""Gemini's v1 API gives function calls no id; the canonical blocks need one each."""
_ROLES = {"user": "user", "assistant": "model"}
_STOP = {"MAX_TOKENS": "max_tokens", "STOP": "end_turn"}
RESULT_KEYS = {False: "output", True: "error"}
"""The key of a `functionResponse.response` holding a tool's result, by `is_error`."""


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
    stop = (
        "tool_use"
        if any(b["type"] == "tool_use" for b in content)
        else _STOP.get(finish, finish.lower())
    )
    return ModelResponse(content=content, stop_reason=stop, usage=_usage(body.get("usageMetadata")))


def _usage(meta: Any) -> Usage:
    if not isinstance(meta, dict):
        return Usage()
    cached = int(meta.get("cachedContentTokenCount") or 0)
    prompt = int(meta.get("promptTokenCount") or 0)
    return Usage(
        input_tokens=max(prompt - cached, 0),
        # Thinking tokens are billed as output.
        output_tokens=int(meta.get("candidatesTokenCount") or 0)
        + int(meta.get("thoughtsTokenCount") or 0),
        cache_read_tokens=cached,
    )


def finish_reason(stop_reason: str) -> str:
    """A canonical stop reason as Gemini's `finishReason`: a function call and a stop
    sequence end with STOP; a reason read from Gemini (`safety`) goes back as it came;
    any other (Anthropic's `refusal`) is OTHER."""
    if stop_reason in ("tool_use", "stop_sequence"):
        return "STOP"
    named = {canonical: gemini for gemini, canonical in _STOP.items()}
    reason = named.get(stop_reason, stop_reason.upper())
    return reason if reason in _FINISHES else "OTHER"


_FINISHES = frozenset(
    "STOP MAX_TOKENS SAFETY RECITATION LANGUAGE OTHER BLOCKLIST PROHIBITED_CONTENT SPII"
    " MALFORMED_FUNCTION_CALL IMAGE_SAFETY UNEXPECTED_TOOL_CALL".split()
)


def usage_metadata(usage: Usage) -> dict[str, int]:
    """`usage` as Gemini's `usageMetadata` (`_usage` read backwards: the prompt count
    includes the cached tokens)."""
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    meta = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": prompt + usage.output_tokens,
    }
    if usage.cache_read_tokens:
        meta["cachedContentTokenCount"] = usage.cache_read_tokens
    return meta
