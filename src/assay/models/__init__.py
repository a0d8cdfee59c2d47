"""Model providers behind one registry; SDKs are imported only when a call is made.

Every model call goes through `generate(request, options=...)`. The adapters
(`AnthropicProvider`, `OpenAIProvider`) take an injected SDK client. Only `names` (which
model, which credentials) is imported eagerly: loading suites and planning a run ask it
questions, and everything else here (pydantic models, the cache, the SDK adapters) is
resolved on first use so that `assay validate` does not pay for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from assay.models.names import DEFAULT_MODEL, ModelName, missing_credentials, parse_model

if TYPE_CHECKING:
    from assay.models.anthropic_provider import AnthropicProvider
    from assay.models.api import DEFAULT_RETRY_POLICY, OFFLINE_MISS, cache_stats, generate
    from assay.models.base import Message, ModelRequest, ModelResponse, Provider, ToolSpec
    from assay.models.cache import CacheStats, ResponseCache, request_key
    from assay.models.limiter import AdaptiveLimiter
    from assay.models.openai_provider import OpenAIProvider
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

_LAZY = {
    "AnthropicProvider": "anthropic_provider",
    "OpenAIProvider": "openai_provider",
    "DEFAULT_RETRY_POLICY": "api",
    "OFFLINE_MISS": "api",
    "cache_stats": "api",
    "generate": "api",
    "Message": "base",
    "ModelRequest": "base",
    "ModelResponse": "base",
    "Provider": "base",
    "ToolSpec": "base",
    "CacheStats": "cache",
    "ResponseCache": "cache",
    "request_key": "cache",
    "AdaptiveLimiter": "limiter",
    "ModelPrice": "pricing",
    "cost_usd": "pricing",
    "price_for": "pricing",
    "ProviderFactory": "registry",
    "limiter_for": "registry",
    "provider_for": "registry",
    "register_provider": "registry",
    "registered_providers": "registry",
    "resolve_model": "registry",
    "ApiCallFailure": "retry",
    "RetryPolicy": "retry",
    "aclose_scope": "scope",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"assay.models.{module}"), name)
    globals()[name] = value  # resolve once
    return value
