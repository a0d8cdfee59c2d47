"""One way to stand up each cloud provider against its loopback fake (tests share it).

A `CloudSetup` starts the provider's fake with a responder and sets the environment the
provider reads (dummy AWS keys, a dummy OAuth token, a dummy Gemini key), so that the
real SDK talks to 127.0.0.1 and nothing looks up credentials on the network.
`OPENAI_COMPATIBLE` does the same for `openai/` and `openrouter/` against the OpenAI fake.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from tests.fakes.cloud_anthropic import FakeBedrock, FakeVertex
from tests.fakes.gemini_api import FakeGemini, messages_responder
from tests.fakes.openai_messages import FakeOpenAIMessages
from tests.fakes.openai_messages import messages_responder as chat_responder
from tests.fakes.scripted import Responder, ScriptedModelServer

AWS_KEY_ID = "AKIAFAKEKEYID0123456"
AWS_SECRET = "fake-aws-secret-access-key-0123456789"
VERTEX_TOKEN = "ya29.fake-vertex-access-token-0123456789"
GEMINI_KEY = "AIzaFAKE-gemini-key-0123456789"
OPENAI_KEY = "sk-fake-openai-key-0123456789"
OPENROUTER_KEY = "sk-or-fake-openrouter-key-0123456789"


@dataclass(frozen=True)
class CloudSetup:
    provider: str
    model: str
    """A full model string the provider serves and pricing.json prices."""
    secret: str
    start: Callable[[pytest.MonkeyPatch, Responder | None], ScriptedModelServer]

    def __str__(self) -> str:
        return self.provider

    @contextmanager
    def serving(
        self, monkeypatch: pytest.MonkeyPatch, responder: Responder | None = None
    ) -> Iterator[ScriptedModelServer]:
        fake = self.start(monkeypatch, responder)
        try:
            yield fake
        finally:
            fake.stop()


def _bedrock(monkeypatch: pytest.MonkeyPatch, responder: Responder | None) -> ScriptedModelServer:
    fake = FakeBedrock(api_key=AWS_KEY_ID, region="eu-west-1", responder=responder).start()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", fake.url)
    # boto3 must find nothing else: no shared config files, no instance metadata.
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return fake


def _vertex(monkeypatch: pytest.MonkeyPatch, responder: Responder | None) -> ScriptedModelServer:
    fake = FakeVertex(api_key=VERTEX_TOKEN, responder=responder).start()
    monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", VERTEX_TOKEN)
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "assay-tests")
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", fake.base_url)
    return fake


def _gemini(monkeypatch: pytest.MonkeyPatch, responder: Responder | None) -> ScriptedModelServer:
    answer = messages_responder(responder) if responder is not None else None
    fake = FakeGemini(api_key=GEMINI_KEY, responder=answer).start()
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
    return fake


SETUPS = (
    CloudSetup("bedrock", "bedrock/eu.anthropic.claude-sonnet-4-6-v1:0", AWS_SECRET, _bedrock),
    CloudSetup("vertex", "vertex/claude-sonnet-4-6@20260115", VERTEX_TOKEN, _vertex),
    CloudSetup("gemini", "gemini/gemini-2.5-flash", GEMINI_KEY, _gemini),
)


def _openai(monkeypatch: pytest.MonkeyPatch, responder: Responder | None) -> ScriptedModelServer:
    answer = chat_responder(responder) if responder is not None else None
    fake = FakeOpenAIMessages(api_key=OPENAI_KEY, responder=answer).start()
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    return fake


def _openrouter(
    monkeypatch: pytest.MonkeyPatch, responder: Responder | None
) -> ScriptedModelServer:
    answer = chat_responder(responder) if responder is not None else None
    fake = FakeOpenAIMessages(api_key=OPENROUTER_KEY, responder=answer).start()
    monkeypatch.setenv("OPENROUTER_API_KEY", OPENROUTER_KEY)
    monkeypatch.setenv("OPENROUTER_BASE_URL", fake.base_url)
    return fake


OPENAI_COMPATIBLE = (
    CloudSetup("openai", "openai/gpt-5", OPENAI_KEY, _openai),
    CloudSetup("openrouter", "openrouter/anthropic/claude-sonnet-4.6", OPENROUTER_KEY, _openrouter),
)
