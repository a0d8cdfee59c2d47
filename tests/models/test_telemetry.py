"""The anthropic SDK's OpenTelemetry spans: off when nothing would receive them, kept when
a tracer provider is registered or the SDK's own variables ask for them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace

from assay.models import Message, ModelRequest, generate, provider_for
from assay.models.anthropic_provider import AnthropicProvider
from tests.fakes.anthropic_api import FakeAnthropic

KEY = "sk-ant-test-0123456789abcdef"
MODEL = "anthropic/claude-sonnet-4-6"


class RecordingTracer(trace.NoOpTracer):
    def __init__(self, names: list[str]) -> None:
        self.names = names

    def start_span(self, name: str, *args: Any, **kwargs: Any) -> trace.Span:
        self.names.append(name)
        return super().start_span(name, *args, **kwargs)


class RecordingProvider(trace.NoOpTracerProvider):
    """A host program's tracer provider: it only notes the spans started."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return RecordingTracer(self.names)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    for name in ("OTEL_PYTHON_TRACER_PROVIDER", "ANTHROPIC_OPEN_TELEMETRY"):
        monkeypatch.delenv(name, raising=False)
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def traces_enabled_after_a_call() -> bool:
    """Whether the client the call was made with emits spans (the SDK's own read-back)."""

    async def scenario() -> bool:
        request = ModelRequest(
            model=MODEL, system="s", messages=(Message("user", ({"type": "text", "text": "x"},)),)
        )
        assert (await generate(request)).text()
        provider = await provider_for("anthropic")
        assert isinstance(provider, AnthropicProvider)
        return bool(provider.client.open_telemetry["traces"]["enabled"])

    return asyncio.run(scenario())


def test_spans_are_off_when_no_tracer_provider_is_registered(fake: FakeAnthropic) -> None:
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert traces_enabled_after_a_call() is False


def test_a_registered_tracer_provider_receives_the_sdks_spans(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered = RecordingProvider()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: registered)
    assert traces_enabled_after_a_call() is True
    assert registered.names, "the SDK started no span"


def test_the_sdks_own_variable_is_left_for_the_sdk_to_read(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_OPEN_TELEMETRY", "true")
    assert traces_enabled_after_a_call() is True
    monkeypatch.setenv("ANTHROPIC_OPEN_TELEMETRY", "false")
    assert traces_enabled_after_a_call() is False
