"""The loopback providers a bridge test's calls reach, each with its real key set."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.bridge.providers import GEMINI_KEY, KEY, OPENAI_KEY
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.gemini_api import FakeGemini
from tests.fakes.openai_api import FakeOpenAI


@pytest.fixture
def anthropic_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=KEY) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        yield fake


@pytest.fixture
def openai_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=OPENAI_KEY) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        yield fake


@pytest.fixture
def gemini_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    with FakeGemini(api_key=GEMINI_KEY) as fake:
        monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        yield fake
