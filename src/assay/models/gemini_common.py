"""What Gemini's API means, read alike by both directions that speak it: assay's provider
(`gemini_wire.py`) and the model bridge's server side (`bridge/gemini_api.py`).

Finish reasons, usage counts (Gemini's prompt count includes the cached tokens, and its
thinking tokens are billed as output), the key of a `tool_use` block that keeps a function
call's thought signature, and the key of a function response that holds a tool's result.
Plain data, no SDK: the bridge reads it without reaching into a provider's modules.
"""

from __future__ import annotations

from typing import Any

from assay.core.usage import Usage

__all__ = [
    "RESULT_KEYS",
    "SIGNATURE_KEY",
    "finish_reason",
    "stop_reason",
    "usage_metadata",
    "usage_of",
]

SIGNATURE_KEY = "thought_signature"
"""The extra key of a `tool_use` block holding Gemini's signature (base64 text)."""
RESULT_KEYS = {False: "output", True: "error"}
"""The key of a `functionResponse.response` holding a tool's result, by `is_error`."""
_STOP = {"MAX_TOKENS": "max_tokens", "STOP": "end_turn"}
_FINISHES = frozenset(
    "STOP MAX_TOKENS SAFETY RECITATION LANGUAGE OTHER BLOCKLIST PROHIBITED_CONTENT SPII"
    " MALFORMED_FUNCTION_CALL IMAGE_SAFETY UNEXPECTED_TOOL_CALL".split()
)


def stop_reason(finish: str) -> str:
    """Gemini's `finishReason` as a canonical stop reason (`SAFETY`: `safety`)."""
    return _STOP.get(finish, finish.lower())


def finish_reason(stop: str) -> str:
    """A canonical stop reason as Gemini's `finishReason`: a function call and a stop
    sequence end with STOP; a reason read from Gemini (`safety`) goes back as it came;
    any other (Anthropic's `refusal`) is OTHER."""
    if stop in ("tool_use", "stop_sequence"):
        return "STOP"
    named = {canonical: gemini for gemini, canonical in _STOP.items()}
    reason = named.get(stop, stop.upper())
    return reason if reason in _FINISHES else "OTHER"


def usage_of(meta: Any) -> Usage:
    """Gemini's `usageMetadata` as assay's usage."""
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


def usage_metadata(usage: Usage) -> dict[str, int]:
    """`usage` as Gemini's `usageMetadata` (`usage_of` read backwards)."""
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    meta = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": prompt + usage.output_tokens,
    }
    if usage.cache_read_tokens:
        meta["cachedContentTokenCount"] = usage.cache_read_tokens
    return meta
