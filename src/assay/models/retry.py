"""Bounded retries with exponential backoff and full jitter.

Provider adapters turn their SDK's errors into `ApiCallFailure`; this module alone decides
what is worth another attempt. Transient failures (429, 529 overloaded, 5xx, 408,
connection errors, timeouts, a body that is empty, HTML or not JSON) are retried until
`max_attempts` or `max_total_s` runs out; anything else (400, 401, 403, 404..., a body
past the size bound) becomes a `ModelError` at once. A `retry-after` / `retry-after-ms`
header from the provider replaces the computed backoff.

Every wait goes through the module-level `sleep`, which tests patch so nothing waits.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from assay._util.secrets import redact
from assay.errors import ModelError
from assay.models.limiter import AdaptiveLimiter

__all__ = [
    "ApiCallFailure",
    "RESPONSE_TOO_LARGE",
    "RetryPolicy",
    "UNREADABLE_RESPONSE",
    "backoff_delay",
    "call_with_retries",
    "parse_retry_after",
    "sleep",
]

logger = logging.getLogger("assay.models")

T = TypeVar("T")

# Statuses that mean "too much traffic": they also lower the provider's concurrency.
RATE_LIMIT_STATUSES = frozenset({429, 529})
_RETRYABLE_STATUSES = frozenset({408, 429, 529})
UNREADABLE_RESPONSE = "unreadable_response"
"""The error type of an answer whose body is empty, HTML or not JSON, whatever its status
(a proxy's error page sent with 200): as transient as the 5xx it usually stands for."""
RESPONSE_TOO_LARGE = "response_too_large"
"""The error type of an answer whose body is past `_http.MAX_RESPONSE_BYTES`, whatever its
status: not transient (an endpoint that sends that once is not a model API, and another
attempt would read as much again), so never retried."""
_jitter = random.Random()


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6
    max_total_s: float = 300.0
    """Give up once this much time has passed since the first attempt."""
    timeout_s: float = 120.0
    """Per attempt: a call that takes longer is abandoned and counts as a timeout."""
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0


class ApiCallFailure(Exception):
    """One failed provider call, described in provider-neutral terms.

    `status` is the HTTP status, or None when no response arrived (connection error,
    timeout). `message` must already be free of secrets; it is redacted again anyway.
    """

    def __init__(
        self,
        *,
        status: int | None,
        error_type: str,
        message: str,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message
        self.retry_after_s = retry_after_s

    @property
    def retryable(self) -> bool:
        if self.error_type == RESPONSE_TOO_LARGE:
            return False
        if self.error_type == UNREADABLE_RESPONSE:
            return True
        if self.status is None:
            return self.error_type in {"connection_error", "timeout"}
        return self.status in _RETRYABLE_STATUSES or 500 <= self.status <= 599

    def describe(self) -> str:
        where = f"HTTP {self.status}" if self.status is not None else self.error_type
        detail = f"{self.error_type}: {self.message}" if self.status is not None else self.message
        return redact(f"{where} ({detail})" if detail else where)


async def sleep(seconds: float) -> None:
    """The one place assay waits between attempts (patched out in tests)."""
    await asyncio.sleep(seconds)


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = _seconds(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _seconds(text: str | None) -> float | None:
    """A header's number, never negative; None when it is none (`nan` and `inf` are not:
    `max(0.0, nan)` is 0.0, which retried a 429 six times in a tenth of a second)."""
    try:
        number = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return max(0.0, number) if math.isfinite(number) else None


def backoff_delay(failures: int, policy: RetryPolicy) -> float:
    """Full jitter: uniform in [0, min(max_delay, base * 2^(failures-1))]."""
    cap = min(policy.max_delay_s, policy.base_delay_s * 2 ** (failures - 1))
    return _jitter.uniform(0.0, cap)


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    limiter: AdaptiveLimiter,
    label: str,
) -> T:
    """Run `call` under the limiter until it succeeds or the policy says stop.

    Raises ModelError for a non-retryable failure or when retries are exhausted.
    """
    started = time.monotonic()
    for attempt in range(1, policy.max_attempts + 1):
        try:
            async with limiter.slot() as slot:
                try:
                    async with asyncio.timeout(policy.timeout_s):
                        result = await call()
                except TimeoutError:
                    raise ApiCallFailure(
                        status=None,
                        error_type="timeout",
                        message=f"no answer within {policy.timeout_s:g}s",
                    ) from None
                except ApiCallFailure as failure:
                    if failure.status in RATE_LIMIT_STATUSES:
                        slot.overloaded()
                    raise
                slot.succeeded()
                return result
        except ApiCallFailure as failure:
            if not failure.retryable:
                raise ModelError(_rejection_message(label, failure)) from None
            delay = failure.retry_after_s
            if delay is None:
                delay = backoff_delay(attempt, policy)
            elapsed = time.monotonic() - started
            if attempt == policy.max_attempts or elapsed + delay > policy.max_total_s:
                raise ModelError(
                    f"{label}: gave up after {attempt} attempt(s) in {elapsed:.1f}s; "
                    f"last error: {failure.describe()}"
                ) from None
            logger.info(
                "%s: %s; retrying in %.2fs (attempt %d of %d)",
                label,
                failure.describe(),
                delay,
                attempt + 1,
                policy.max_attempts,
            )
            await sleep(delay)
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


def _rejection_message(label: str, failure: ApiCallFailure) -> str:
    if failure.error_type == RESPONSE_TOO_LARGE:  # an answer, not a rejection
        return f"{label}: {failure.describe()}"
    if failure.status == 401:
        return f"{label}: the API key was rejected (HTTP 401); check the key you set"
    reason = {403: "permission denied", 404: "not found (is the model name right?)"}
    return f"{label}: {reason.get(failure.status or 0, 'request rejected')}: {failure.describe()}"
