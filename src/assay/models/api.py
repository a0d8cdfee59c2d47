"""`generate`: the one entry point for every model call assay makes.

request -> provider (registry) -> record/replay cache -> limiter + retries -> usage + cost.
"""

from __future__ import annotations

import dataclasses
import logging

from assay.errors import ModelError, ModelUnavailable
from assay.models.base import ModelRequest, ModelResponse, Provider
from assay.models.cache import CacheStats, ResponseCache
from assay.models.registry import limiter_for, provider_cost, provider_for, resolve_model
from assay.models.retry import ApiCallFailure, RetryPolicy, call_with_retries
from assay.options import DEFAULT_CONCURRENCY, RunOptions

__all__ = ["DEFAULT_RETRY_POLICY", "OFFLINE_MISS", "cache_stats", "generate"]

logger = logging.getLogger("assay.models")

DEFAULT_RETRY_POLICY = RetryPolicy()
OFFLINE_MISS = "not in cache (--offline)"

_UNFORCEABLE: set[str] = set()
"""Models that refused a forced `tool_choice` in this process. Some models reject it
(Anthropic's with extended thinking or of the newest generation, some local servers);
they are asked with `auto` instead, and the callers' own checks steer them (a judge
answer without its tool call is retried once, an agent that answers in prose is nudged)."""


async def generate(
    request: ModelRequest,
    *,
    options: RunOptions | None = None,
    retry_policy: RetryPolicy | None = None,
    cache_as: ModelRequest | None = None,
) -> ModelResponse:
    """Call the model named by `request.model` (`provider/model`) and return its answer.

    With `options.cache_dir` the call is replayed from, or recorded to, the cache; with
    `options.offline` only replays happen. Raises ModelUnavailable (no credentials,
    offline miss: the case is skipped) or ModelError (the API failed after retries).
    `cache_as`: the request to key the cache by instead of `request` (the model bridge's,
    with what varies between runs taken out: `assay.bridge.normalise`).
    """
    options = options or RunOptions()
    provider_name, model_id = resolve_model(request.model)
    wire_request = dataclasses.replace(request, model=model_id)
    keyed = dataclasses.replace(cache_as, model=model_id) if cache_as else wire_request
    cache = ResponseCache.for_dir(options.cache_dir) if options.cache_dir else None

    if cache is not None:
        recorded = cache.load(provider_name, keyed)
        if recorded is not None:
            return recorded
    if options.offline:
        raise ModelUnavailable(
            OFFLINE_MISS if cache else "--offline without --cache: no model calls"
        )

    provider = await provider_for(provider_name)
    limiter = await limiter_for(provider_name, options.concurrency or DEFAULT_CONCURRENCY)
    label = f"{provider_name}/{model_id}"
    response = await call_with_retries(
        lambda: _send(provider, wire_request, label),
        policy=retry_policy or DEFAULT_RETRY_POLICY,
        limiter=limiter,
        label=label,
    )
    if not isinstance(response, ModelResponse):  # a provider plugin's mistake, said as one
        raise ModelError(
            f"provider {provider_name!r} returned {type(response).__name__}: expected a "
            "ModelResponse (assay.models.base)"
        )
    if response.usage.cost_usd is None:  # a provider that reports its own cost is believed
        response.usage = response.usage.model_copy(
            update={"cost_usd": provider_cost(provider_name, model_id, response.usage)}
        )
    if cache is not None:
        cache.store(provider_name, keyed, response)
    return response


async def _send(provider: Provider, request: ModelRequest, label: str) -> ModelResponse:
    """One provider call; a forced tool choice the model refuses is asked again as `auto`."""
    if request.tool_choice is not None and label in _UNFORCEABLE:
        request = dataclasses.replace(request, tool_choice=None)
    try:
        return await provider.generate(request)
    except ApiCallFailure as failure:
        refused = failure.status == 400 and "tool_choice" in failure.message
        if request.tool_choice is None or not refused:
            raise
        _UNFORCEABLE.add(label)
        logger.info("%s refuses a forced tool_choice; asking with auto from now on", label)
        return await provider.generate(dataclasses.replace(request, tool_choice=None))


def cache_stats(options: RunOptions) -> CacheStats | None:
    """Hits, misses and writes of the run's cache so far (None without --cache)."""
    if options.cache_dir is None:
        return None
    return ResponseCache.for_dir(options.cache_dir).stats
