"""Adaptive concurrency: rate-limit pressure lowers concurrency instead of failing cases.

One limiter per provider is shared by every call in the run (see `scope.py`). It starts
at the run's `--concurrency`, halves (never below 1) when the provider answers 429 or
529, and grows back by one slot after every `recover_after` successful calls, up to the
starting value. Several calls that were already in flight when the provider pushed back
count as one signal: a call only halves the limit if it started after the last cut.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["AdaptiveLimiter", "Slot"]

logger = logging.getLogger("assay.models")

DEFAULT_RECOVER_AFTER = 8


class Slot:
    """One held place in the limiter; report how the call went through it."""

    def __init__(self, limiter: AdaptiveLimiter, epoch: int) -> None:
        self._limiter = limiter
        self._epoch = epoch

    def succeeded(self) -> None:
        self._limiter._on_success()

    def overloaded(self) -> None:
        self._limiter._on_overload(self._epoch)


class AdaptiveLimiter:
    """A semaphore whose size follows the provider's rate-limit signals."""

    def __init__(self, ceiling: int, *, name: str = "", recover_after: int = DEFAULT_RECOVER_AFTER):
        if ceiling < 1:
            raise ValueError(f"concurrency must be at least 1, got {ceiling}")
        if recover_after < 1:
            raise ValueError(f"recover_after must be at least 1, got {recover_after}")
        self.name = name
        self.ceiling = ceiling
        self.limit = ceiling
        self.recover_after = recover_after
        self._active = 0
        self._epoch = 0
        self._successes = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def active(self) -> int:
        return self._active

    def resize(self, ceiling: int) -> None:
        """Adopt a new `--concurrency` (a later run in the same process)."""
        if ceiling < 1:
            raise ValueError(f"concurrency must be at least 1, got {ceiling}")
        under_pressure = self.limit < self.ceiling
        self.ceiling = ceiling
        # A limit that was cut stays cut (the provider is still the same provider).
        self.limit = min(self.limit, ceiling) if under_pressure else ceiling
        self._hand_off()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        await self._acquire()
        try:
            yield Slot(self, self._epoch)
        finally:
            self._release()

    # -- semaphore -------------------------------------------------------------------
    async def _acquire(self) -> None:
        if self._active < self.limit and not self._waiters:
            self._active += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                # The slot was handed to us just before the cancellation: pass it on.
                self._release()
            else:
                try:
                    self._waiters.remove(waiter)
                except ValueError:
                    pass
            raise

    def _release(self) -> None:
        self._active -= 1
        self._hand_off()

    def _hand_off(self) -> None:
        # A woken waiter gets its slot counted here, so nobody can overtake it.
        while self._waiters and self._active < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._active += 1
                waiter.set_result(None)

    # -- feedback --------------------------------------------------------------------
    def _on_success(self) -> None:
        if self.limit >= self.ceiling:
            return
        self._successes += 1
        if self._successes >= self.recover_after:
            self._successes = 0
            self.limit += 1
            logger.info("%s: concurrency recovered to %d", self.name or "model", self.limit)
            self._hand_off()

    def _on_overload(self, epoch: int) -> None:
        if epoch != self._epoch:
            return  # started before the last cut; that pressure is already accounted for
        self._epoch += 1
        self._successes = 0
        previous, self.limit = self.limit, max(1, self.limit // 2)
        if self.limit != previous:
            logger.warning(
                "%s: rate limited; concurrency lowered from %d to %d",
                self.name or "model",
                previous,
                self.limit,
            )
