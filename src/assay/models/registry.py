"""Provider adapters by name (the list is `providers.PROVIDERS`); each SDK is imported only
inside its factory.

A factory builds an adapter with an authenticated client from the environment, or raises
ModelUnavailable naming what is missing. Adapters are built once per event loop (see
`scope.py`) so their connection pools are reused by every call.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from assay.models.base import Provider
from assay.models.limiter import AdaptiveLimiter
from assay.models.names import parse_model
from assay.models.preload import sdk_imports_done
from assay.models.providers import PROVIDERS, ProviderFactory, ProviderSpec
from assay.models.scope import BuiltProvider, close_provider, current_scope

if TYPE_CHECKING:
    from assay.core.usage import Usage

__all__ = [
    "ProviderFactory",
    "ProviderSpec",
    "limiter_for",
    "provider_cost",
    "provider_for",
    "register_provider",
    "registered_providers",
    "resolve_model",
    "unknown_provider",
]


def register_provider(
    name: str,
    factory: ProviderFactory | None = None,
    *,
    spec: ProviderSpec | None = None,
    key_variables: tuple[str, ...] | None = None,
) -> None:
    """Make `name/<model>` strings resolve to adapters built by `factory` (replaces any).

    Without `key_variables` the provider's key is Warden's `<NAME>_API_KEY`; `()` says it
    needs none. A full `ProviderSpec` (bare names, bridged keys, pricing) may be given instead.
    """
    if spec is None:
        if factory is None:
            raise TypeError("register_provider needs a factory or a spec")
        spec = ProviderSpec(name=name, factory=factory, key_variables=key_variables)
    elif spec.name != name:
        raise ValueError(f"spec {spec.name!r} registered as {name!r}")
    PROVIDERS.register(name, spec, replace=True)


def registered_providers() -> list[str]:
    return PROVIDERS.names()


def unknown_provider(model: str) -> str | None:
    """Why `model` names no registered provider, or None when it does.

    `provider/name` must name a registered provider: a typo (`antropic/...`) would
    otherwise quietly become an OpenAI-compatible model and fail for want of the wrong key.
    A bare name stays what it always was (`claude-*` Anthropic, else OpenAI-compatible).
    """
    text = model.strip()
    prefix, sep, rest = text.partition("/")
    if not sep or prefix in PROVIDERS:
        return None
    known = registered_providers()
    close = difflib.get_close_matches(prefix, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}/{rest}? " if close else ""
    return (
        f"unknown model provider {prefix!r} in {text!r}: {hint}known providers: "
        f"{', '.join(known)} (an OpenAI-compatible model whose own name holds a slash is "
        f"written openai/{text})"
    )


def resolve_model(model: str) -> tuple[str, str]:
    """`provider/name` -> (provider, the provider's own model id)."""
    parsed = parse_model(model)
    return parsed.provider, parsed.name


def provider_cost(provider: str, model_id: str, usage: Usage) -> float | None:
    """What one call cost by `provider`'s own pricing (None when it does not know)."""
    spec = PROVIDERS.get(provider)
    return None if spec is None else spec.price(model_id, usage)


async def provider_for(name: str) -> Provider:
    """The running loop's adapter for provider `name`, built on first use."""
    spec = PROVIDERS.get(name)
    if spec is None:
        raise KeyError(f"no model provider registered as {name!r}")
    factory = spec.factory
    # Before looking in the scope: nothing may await between that look and storing the
    # new adapter, or two first calls would each build one (and leak a client).
    await sdk_imports_done()
    scope = await current_scope()
    built = scope.providers.get(name)
    if built is not None and built.factory is factory:
        return built.provider
    if built is not None:
        await close_provider(built.provider)
    provider = factory()
    scope.providers[name] = BuiltProvider(factory, provider)
    return provider


async def limiter_for(name: str, concurrency: int) -> AdaptiveLimiter:
    """The running loop's shared limiter for provider `name`."""
    scope = await current_scope()
    limiter = scope.limiters.get(name)
    if limiter is None:
        limiter = AdaptiveLimiter(concurrency, name=name)
        scope.limiters[name] = limiter
    elif limiter.ceiling != concurrency:
        limiter.resize(concurrency)
    return limiter
