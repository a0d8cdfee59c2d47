"""Retrying calls to flaky services."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff: `base * factor**n` seconds before retry n (0-based), capped.

    `jitter` spreads retries of many clients: each delay is scaled by a random factor in
    [1 - jitter, 1].
    """

    base: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    jitter: float = 0.0

    def delay(self, retry_number: int, *, rng: random.Random | None = None) -> float:
        raw = min(self.cap, self.base * self.factor**retry_number)
        if not self.jitter:
            return raw
        spread = (rng or random).uniform(1.0 - self.jitter, 1.0)
        return raw * spread


class RetryError(Exception):
    """Raised when every attempt failed; `last` is the exception of the final attempt."""

    def __init__(self, attempts: int, last: BaseException) -> None:
        super().__init__(f"gave up after {attempts} attempts: {last!r}")
        self.attempts = attempts
        self.last = last


def retry(
    *,
    attempts: int = 3,
    on: tuple[type[BaseException], ...] = (Exception,),
    backoff: Backoff | None = None,
    sleep: Callable[[float], object] = time.sleep,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Call the decorated function up to `attempts` times while it raises one of `on`.

    Between attempts it sleeps `backoff.delay(n)` for retry n (0-based). Exceptions not
    listed in `on` propagate at once; when the last attempt fails, RetryError is raised
    from that attempt's exception.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    schedule = backoff or Backoff()

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            for retry_number in range(attempts - 1):
                try:
                    return func(*args, **kwargs)
                except on:
                    sleep(schedule.delay(retry_number))
            try:
                return func(*args, **kwargs)
            except on as exc:
                raise RetryError(attempts, exc) from exc

        return wrapper

    return decorate
