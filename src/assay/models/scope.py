"""State that lives exactly as long as one event loop: provider clients and limiters.

SDK clients hold pooled connections bound to the loop that opened them, so each
(provider, loop) gets one client, reused by every call on that loop. When the loop shuts
down (`asyncio.run` finalises async generators before closing it) the scope closes its
clients, so no connection outlives its loop. `aclose_scope()` does the same on demand.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from assay.models.base import Provider
from assay.models.limiter import AdaptiveLimiter

__all__ = ["BuiltProvider", "LoopScope", "aclose_scope", "close_provider", "current_scope"]

logger = logging.getLogger("assay.models")


@runtime_checkable
class _Closable(Protocol):
    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class BuiltProvider:
    factory: Callable[[], Provider]
    """The factory that built it: a re-registered provider is rebuilt."""
    provider: Provider


@dataclass
class LoopScope:
    providers: dict[str, BuiltProvider] = field(default_factory=dict)
    limiters: dict[str, AdaptiveLimiter] = field(default_factory=dict)
    keeper: AsyncGenerator[None, None] | None = None
    """Runs `aclose` when the loop finalises its async generators."""

    async def aclose(self) -> None:
        built = list(self.providers.values())
        self.providers.clear()
        self.limiters.clear()
        for entry in built:
            await close_provider(entry.provider)


async def close_provider(provider: Provider) -> None:
    if isinstance(provider, _Closable):
        try:
            await provider.aclose()
        except Exception as exc:  # closing must not hide the run's own outcome
            logger.warning("closing a model client failed: %s", type(exc).__name__)


_scopes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopScope] = (
    weakref.WeakKeyDictionary()
)


async def _close_at_loop_shutdown(scope: LoopScope) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await scope.aclose()


async def current_scope() -> LoopScope:
    """The running loop's scope, created on first use."""
    loop = asyncio.get_running_loop()
    scope = _scopes.get(loop)
    if scope is None:
        scope = LoopScope()
        _scopes[loop] = scope
        scope.keeper = _close_at_loop_shutdown(scope)
        # Started here so the loop tracks it; asyncio.run's shutdown_asyncgens closes it.
        await scope.keeper.__anext__()
    return scope


async def aclose_scope() -> None:
    """Close the running loop's clients now (for loops not run by `asyncio.run`)."""
    loop = asyncio.get_running_loop()
    scope = _scopes.pop(loop, None)
    if scope is None:
        return
    if scope.keeper is not None:
        keeper, scope.keeper = scope.keeper, None
        await keeper.aclose()
    else:
        await scope.aclose()
