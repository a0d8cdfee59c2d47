"""The retry layer: what is retried, how long it waits, and when it gives up.

An in-process provider raises scripted `ApiCallFailure`s, so these tests need no network;
a fake clock makes the patched sleep advance time, so the total-time bound is testable.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from assay.core.usage import Usage
from assay.errors import ModelError
from assay.models import (
    ApiCallFailure,
    Message,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    generate,
    register_provider,
)
from assay.models import retry as retry_module
from assay.models.retry import RESPONSE_TOO_LARGE, backoff_delay, parse_retry_after


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class FlakyProvider:
    """Fails with the scripted failures in order, then answers."""

    def __init__(self, *failures: ApiCallFailure) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def generate(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return ModelResponse([{"type": "text", "text": "fine"}], "end_turn", Usage(input_tokens=1))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(retry_module, "sleep", fake.sleep)
    monkeypatch.setattr(retry_module.time, "monotonic", fake.monotonic)
    return fake


def failure(
    status: int | None, error_type: str = "api_error", retry_after: float | None = None
) -> ApiCallFailure:
    return ApiCallFailure(
        status=status, error_type=error_type, message="boom", retry_after_s=retry_after
    )


def run_with(provider: FlakyProvider, policy: RetryPolicy | None = None) -> ModelResponse:
    register_provider("flaky", lambda: provider)
    request = ModelRequest(
        model="flaky/m", system="", messages=(Message("user", ({"type": "text", "text": "x"},)),)
    )
    return asyncio.run(generate(request, retry_policy=policy))


@pytest.mark.parametrize(
    "transient",
    [
        failure(429, "rate_limit_error"),
        failure(529, "overloaded_error"),
        failure(500),
        failure(503),
        failure(408),
        failure(None, "connection_error"),
        failure(None, "timeout"),
    ],
    ids=["429", "529", "500", "503", "408", "connection", "timeout"],
)
def test_transient_failures_are_retried(clock: FakeClock, transient: ApiCallFailure) -> None:
    provider = FlakyProvider(transient, transient)
    assert run_with(provider).text() == "fine"
    assert provider.calls == 3 and len(clock.sleeps) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_final(clock: FakeClock, status: int) -> None:
    provider = FlakyProvider(failure(status))
    with pytest.raises(ModelError, match=str(status)):
        run_with(provider)
    assert provider.calls == 1 and clock.sleeps == []


def test_sdk_errors_without_a_status_are_final(clock: FakeClock) -> None:
    provider = FlakyProvider(failure(None, "sdk_error"))
    with pytest.raises(ModelError):
        run_with(provider)
    assert provider.calls == 1


@pytest.mark.parametrize("status", [200, 500, 529])
def test_a_body_past_the_size_bound_is_final_whatever_its_status(
    clock: FakeClock, status: int
) -> None:
    provider = FlakyProvider(failure(status, RESPONSE_TOO_LARGE))
    with pytest.raises(ModelError) as caught:
        run_with(provider)
    assert provider.calls == 1 and clock.sleeps == []
    assert str(caught.value) == f"flaky/m: HTTP {status} ({RESPONSE_TOO_LARGE}: boom)"


def test_attempts_are_bounded(clock: FakeClock) -> None:
    provider = FlakyProvider(*[failure(500)] * 10)
    with pytest.raises(ModelError, match=r"gave up after 3 attempt\(s\)"):
        run_with(provider, RetryPolicy(max_attempts=3))
    assert provider.calls == 3 and len(clock.sleeps) == 2


def test_total_time_is_bounded(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry_module._jitter, "uniform", lambda low, high: high)  # worst case
    provider = FlakyProvider(*[failure(529)] * 10)
    with pytest.raises(ModelError, match=r"gave up after 4 attempt\(s\) in 7\.0s"):
        run_with(provider, RetryPolicy(max_total_s=10, base_delay_s=1))
    assert clock.sleeps == [1, 2, 4]  # the next wait (8 s) would pass the 10 s budget


def test_retry_after_replaces_the_backoff(clock: FakeClock) -> None:
    provider = FlakyProvider(failure(429, retry_after=12.5))
    run_with(provider)
    assert clock.sleeps == [12.5]


def test_backoff_is_full_jitter_under_an_exponential_cap() -> None:
    policy = RetryPolicy(base_delay_s=1, max_delay_s=10)
    for failures, cap in [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (9, 10)]:
        delays = [backoff_delay(failures, policy) for _ in range(200)]
        assert all(0 <= d <= cap for d in delays)
        assert max(delays) > cap / 2  # spread over the whole range, not a fixed wait


def test_parse_retry_after_forms() -> None:
    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    http_date = format_datetime(now + timedelta(seconds=42), usegmt=True)
    assert parse_retry_after({"retry-after": "3"}, now=now) == 3.0
    assert parse_retry_after({"Retry-After": "0.5"}, now=now) == 0.5
    assert parse_retry_after({"retry-after": http_date}, now=now) == 42.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}, now=now) == 0.25
    assert parse_retry_after({"retry-after": "-4"}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}, now=now) is None
    assert parse_retry_after({}, now=now) is None
    # Not numbers either: `nan` was a wait of 0 s, and a 429 was retried at once, six times.
    assert parse_retry_after({"retry-after-ms": "nan", "retry-after": "9"}, now=now) == 9.0
    assert parse_retry_after({"retry-after": "nan"}, now=now) is None
    assert parse_retry_after({"retry-after": "inf"}, now=now) is None


def test_a_hung_call_times_out_and_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    waited: list[float] = []

    async def no_wait(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(retry_module, "sleep", no_wait)

    class HangsOnce(FlakyProvider):
        async def generate(self, request: ModelRequest) -> ModelResponse:
            if self.calls == 0:
                self.calls += 1
                await asyncio.Event().wait()  # never answers
            return await super().generate(request)

    provider = HangsOnce()
    assert run_with(provider, RetryPolicy(timeout_s=0.05)).text() == "fine"
    assert len(waited) == 1
