"""Provider adapters registered by name; each SDK is imported only inside its factory.

A factory builds an adapter with an authenticated client from the environment, or raises
ModelUnavailable naming what is missing. Adapters are built once per event loop (see
`scope.py`) so their connection pools are reused by every call.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from assay.models.base import Provider
from assay.models.limiter import AdaptiveLimiter
from assay.models.names import parse_model
from assay.models.scope import BuiltProvider, close_provider, current_scope

__all__ = [
    "ProviderFactory",
    "limiter_for",
    "provider_for",
    "register_provider",
    "registered_providers",
    "resolve_model",
    "unknown_provider",
]

ProviderFactory = Callable[[], Provider]

_factories: dict[str, ProviderFactory] = {}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make `name/<model>` strings resolve to adapters built by `factory` (replaces any)."""
    if not name or "/" in name:
        raise ValueError(f"invalid provider name {name!r}")
    _factories[name] = factory


def registered_providers() -> list[str]:
    return sorted(_factories)


def unknown_provider(model: str) -> str | None:
    """Why `model` names no registered provider, or None when it does.

    `provider/name` must name a registered provider: a typo (`antropic/...`) would
    otherwise quietly become an OpenAI-compatible model and fail for want of the wrong key.
    A bare name stays what it always was (`claude-*` Anthropic, else OpenAI-compatible).
    """
    text = model.strip()
    prefix, sep, rest = text.partition("/")
    if not sep or prefix in _factories:
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
    prefix, sep, rest = model.strip().partition("/")
    if sep and prefix in _factories and rest:
        return prefix, rest
    parsed = parse_model(model)
    return parsed.provider, parsed.name


async def provider_for(name: str) -> Provider:
    """The running loop's adapter for provider `name`, built on first use."""
    factory = _factories.get(name)
    if factory is None:
        raise KeyError(f"no model provider registered as {name!r}")
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


def _build_anthropic() -> Provider:
    from assay.models.anthropic_provider import anthropic_from_env

    return anthropic_from_env()


def _build_openai() -> Provider:
    from assay.models.openai_provider import openai_from_env

    return openai_from_env()


def _build_openrouter() -> Provider:
    from assay.models.openai_provider import openrouter_from_env

    return openrouter_from_env()


register_provider("anthropic", _build_anthropic)
register_provider("openai", _build_openai)
register_provider("openrouter", _build_openrouter)
