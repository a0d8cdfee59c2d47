"""Adaptive concurrency: the bound holds, rate limits halve it, successes grow it back."""

from __future__ import annotations

import asyncio

import pytest

from assay.models import AdaptiveLimiter


async def hold(limiter: AdaptiveLimiter, gate: asyncio.Event, seen: list[int]) -> None:
    async with limiter.slot():
        seen.append(limiter.active)
        await gate.wait()


def test_never_more_than_the_limit_in_flight() -> None:
    async def scenario() -> tuple[list[int], int]:
        limiter = AdaptiveLimiter(3)
        gate, seen = asyncio.Event(), []
        tasks = [asyncio.create_task(hold(limiter, gate, seen)) for _ in range(10)]
        await asyncio.sleep(0)
        waiting = 10 - len(seen)
        gate.set()
        await asyncio.gather(*tasks)
        return seen, waiting

    seen, waiting = asyncio.run(scenario())
    assert max(seen) == 3 and len(seen) == 10
    assert waiting == 7


def test_overload_halves_once_per_wave_down_to_one() -> None:
    async def scenario() -> list[int]:
        limiter = AdaptiveLimiter(8)
        limits = []
        async with limiter.slot() as first, limiter.slot() as second:
            first.overloaded()
            second.overloaded()  # in flight before the cut: the same signal
            limits.append(limiter.limit)
        for _ in range(4):
            async with limiter.slot() as slot:
                slot.overloaded()
            limits.append(limiter.limit)
        return limits

    assert asyncio.run(scenario()) == [4, 2, 1, 1, 1]


def test_successes_recover_one_slot_at_a_time_up_to_the_ceiling() -> None:
    async def scenario() -> list[int]:
        limiter = AdaptiveLimiter(4, recover_after=3)
        async with limiter.slot() as slot:
            slot.overloaded()
        limits = [limiter.limit]
        for _ in range(9):
            async with limiter.slot() as slot:
                slot.succeeded()
            limits.append(limiter.limit)
        return limits

    assert asyncio.run(scenario()) == [2, 2, 2, 3, 3, 3, 4, 4, 4, 4]


def test_growing_the_limit_wakes_waiters() -> None:
    async def scenario() -> int:
        limiter = AdaptiveLimiter(2, recover_after=1)
        async with limiter.slot() as slot:
            slot.overloaded()  # limit 1
        gate, seen = asyncio.Event(), []
        holder = asyncio.create_task(hold(limiter, gate, seen))
        await asyncio.sleep(0)
        waiter = asyncio.create_task(hold(limiter, gate, seen))
        await asyncio.sleep(0)
        assert len(seen) == 1
        limiter._on_success()  # one success recovers a slot
        await asyncio.sleep(0)
        in_flight = len(seen)
        gate.set()
        await asyncio.gather(holder, waiter)
        return in_flight

    assert asyncio.run(scenario()) == 2


def test_a_cancelled_waiter_does_not_leak_a_slot() -> None:
    async def scenario() -> tuple[int, int]:
        limiter = AdaptiveLimiter(1)
        gate, seen = asyncio.Event(), []
        holder = asyncio.create_task(hold(limiter, gate, seen))
        await asyncio.sleep(0)
        doomed = asyncio.create_task(hold(limiter, gate, seen))
        await asyncio.sleep(0)
        doomed.cancel()
        gate.set()
        await holder
        with pytest.raises(asyncio.CancelledError):
            await doomed
        return limiter.active, len(seen)

    assert asyncio.run(scenario()) == (0, 1)


def test_resize_follows_a_new_concurrency_but_keeps_a_cut() -> None:
    limiter = AdaptiveLimiter(8)
    limiter.resize(16)
    assert (limiter.ceiling, limiter.limit) == (16, 16)
    limiter._on_overload(limiter._epoch)  # 16 -> 8
    limiter.resize(32)
    assert (limiter.ceiling, limiter.limit) == (32, 8)
    limiter.resize(4)
    assert (limiter.ceiling, limiter.limit) == (4, 4)


@pytest.mark.parametrize("bad", [0, -1])
def test_concurrency_must_be_positive(bad: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        AdaptiveLimiter(bad)
