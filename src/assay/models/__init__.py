"""Model providers behind one registry; SDKs are imported only when a call is made.

Every model call goes through `generate(request, options=...)`. The adapters
(`AnthropicProvider`, `OpenAIProvider`) take an injected SDK client; they are resolved
lazily here so importing `assay.models` never imports an SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.models.api import DEFAULT_RETRY_POLICY, OFFLINE_MISS, cache_stats, generate
from assay.models.base import Message, ModelRequest, ModelResponse, Provider, ToolSpec
from assay.models.cache import CacheStats, ResponseCache, request_key
from assay.models.limiter import AdaptiveLimiter
from assay.models.names import DEFAULT_MODEL, ModelName, missing_credentials, parse_model
from assay.models.pricing import ModelPrice, cost_usd, price_for
from assay.models.registry import (
    ProviderFactory,
    limiter_for,
    provider_for,
    register_provider,
    registered_providers,
    resolve_model,
)
from assay.models.retry import ApiCallFailure, RetryPolicy
from assay.models.scope import aclose_scope

if TYPE_CHECKING:
    from assay.models.anthropic_provider import AnthropicProvider
    from assay.models.openai_provider import OpenAIProvider

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_RETRY_POLICY",
    "OFFLINE_MISS",
    "AdaptiveLimiter",
    "AnthropicProvider",
    "ApiCallFailure",
    "CacheStats",
    "Message",
    "ModelName",
    "ModelPrice",
    "ModelRequest",
    "ModelResponse",
    "OpenAIProvider",
    "Provider",
    "ProviderFactory",
    "ResponseCache",
    "RetryPolicy",
    "ToolSpec",
    "aclose_scope",
    "cache_stats",
    "cost_usd",
    "generate",
    "limiter_for",
    "missing_credentials",
    "parse_model",
    "price_for",
    "provider_for",
    "register_provider",
    "registered_providers",
    "request_key",
    "resolve_model",
]

_LAZY = {
    "AnthropicProvider": "assay.models.anthropic_provider",
    "OpenAIProvider": "assay.models.openai_provider",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.models' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
