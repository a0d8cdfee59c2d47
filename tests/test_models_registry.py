"""The provider registry: lazy SDK imports, name resolution, one client per event loop."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import anthropic
import pytest

import assay.models
from assay.core.usage import Usage
from assay.errors import ModelError
from assay.models import (
    AnthropicProvider,
    Message,
    ModelRequest,
    ModelResponse,
    aclose_scope,
    generate,
    provider_for,
    register_provider,
    registered_providers,
    resolve_model,
)
from tests.fakes.anthropic_api import FakeAnthropic, text_reply

PUBLIC_MODELS_API = [
    "DEFAULT_MODEL",
    "DEFAULT_RETRY_POLICY",
    "OFFLINE_MISS",
    "AdaptiveLimiter",
    "AnthropicProvider",
    "ApiCallFailure",
    "CacheStats",
    "Message",
    "ModelName",
    "ModelPrice",
    "ModelRequest",
    "ModelResponse",
    "OpenAIProvider",
    "Provider",
    "ProviderFactory",
    "ResponseCache",
    "RetryPolicy",
    "ToolSpec",
    "aclose_scope",
    "cache_stats",
    "cost_usd",
    "generate",
    "limiter_for",
    "missing_credentials",
    "parse_model",
    "price_for",
    "provider_for",
    "register_provider",
    "registered_providers",
    "request_key",
    "resolve_model",
]


class ClosingProvider:
    """Answers with its own label and records whether it was closed."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.closed = 0

    async def generate(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(
            [{"type": "text", "text": f"{self.label}:{request.model}"}], "end_turn", Usage()
        )

    async def aclose(self) -> None:
        self.closed += 1


def ask(model: str) -> ModelRequest:
    return ModelRequest(
        model=model, system="", messages=(Message("user", ({"type": "text", "text": "hi"},)),)
    )


def test_public_names_are_pinned() -> None:
    assert assay.models.__all__ == PUBLIC_MODELS_API
    for name in PUBLIC_MODELS_API:
        assert getattr(assay.models, name) is not None, name


@pytest.mark.slow
def test_no_sdk_is_imported_until_a_call_is_made() -> None:
    probe = (
        "import sys\n"
        "from assay.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "import assay.models, assay.models.api\n"
        "sdks = {'anthropic', 'openai', 'httpx2'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & sdks))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip().endswith("[]"), result.stdout


def test_builtin_providers_are_registered() -> None:
    assert {"anthropic", "openai", "openrouter"} <= set(registered_providers())


@pytest.mark.parametrize(
    ("model", "resolved"),
    [
        ("anthropic/claude-sonnet-4-6", ("anthropic", "claude-sonnet-4-6")),
        ("claude-haiku-4-5", ("anthropic", "claude-haiku-4-5")),
        ("openai/gpt-4o", ("openai", "gpt-4o")),
        ("openrouter/anthropic/claude-sonnet-4.5", ("openrouter", "anthropic/claude-sonnet-4.5")),
        ("llama3.1:8b", ("openai", "llama3.1:8b")),
        ("Qwen/Qwen2.5-Coder", ("openai", "Qwen/Qwen2.5-Coder")),
    ],
)
def test_model_strings_resolve_to_a_provider(model: str, resolved: tuple[str, str]) -> None:
    assert resolve_model(model) == resolved


def test_a_registered_provider_serves_its_prefix() -> None:
    provider = ClosingProvider("custom")
    register_provider("custom-test", lambda: provider)
    assert resolve_model("custom-test/any/model") == ("custom-test", "any/model")
    response = asyncio.run(generate(ask("custom-test/any/model")))
    assert response.text() == "custom:any/model"  # the adapter sees its own model id
    assert provider.closed == 1  # closed with its event loop


def test_a_provider_answering_something_else_is_a_model_error_saying_so() -> None:
    """A provider plugin returning a dict is its mistake, named, not an internal error later."""

    class Careless:
        async def generate(self, request: ModelRequest) -> object:
            return {"content": []}

        async def aclose(self) -> None:
            return None

    register_provider("careless-test", Careless)
    with pytest.raises(ModelError, match=r"provider 'careless-test' returned dict: expected a"):
        asyncio.run(generate(ask("careless-test/m")))


def test_re_registering_rebuilds_and_closes_the_old_adapter() -> None:
    first, second = ClosingProvider("first"), ClosingProvider("second")

    async def scenario() -> list[str]:
        register_provider("swap-test", lambda: first)
        answers = [(await generate(ask("swap-test/m"))).text()]
        register_provider("swap-test", lambda: second)
        answers.append((await generate(ask("swap-test/m"))).text())
        assert first.closed == 1 and second.closed == 0
        return answers

    assert asyncio.run(scenario()) == ["first:m", "second:m"]
    assert second.closed == 1


def test_each_event_loop_builds_its_own_adapter() -> None:
    built: list[ClosingProvider] = []

    def factory() -> ClosingProvider:
        built.append(ClosingProvider(f"loop{len(built)}"))
        return built[-1]

    register_provider("per-loop-test", factory)

    async def twice() -> None:
        await generate(ask("per-loop-test/m"))
        await generate(ask("per-loop-test/m"))

    asyncio.run(twice())
    asyncio.run(twice())
    assert [p.closed for p in built] == [1, 1]


def test_aclose_scope_for_a_hand_run_loop() -> None:
    provider = ClosingProvider("manual")
    register_provider("manual-test", lambda: provider)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(generate(ask("manual-test/m")))
        loop.run_until_complete(aclose_scope())
        assert provider.closed == 1
        loop.run_until_complete(loop.shutdown_asyncgens())
        assert provider.closed == 1  # not closed twice
    finally:
        loop.close()


@pytest.mark.parametrize("name", ["", "a/b"])
def test_provider_names_are_plain_words(name: str) -> None:
    with pytest.raises(ValueError, match="invalid provider name"):
        register_provider(name, lambda: ClosingProvider("x"))


def test_an_adapter_takes_an_injected_client() -> None:
    with FakeAnthropic(replies=[text_reply("injected")]) as fake:

        async def scenario() -> str:
            client = anthropic.AsyncAnthropic(
                api_key="sk-ant-injected-000000", base_url=fake.url, max_retries=0
            )
            register_provider("injected-test", lambda: AnthropicProvider(client))
            response = await generate(ask("injected-test/claude-haiku-4-5"))
            assert (await provider_for("injected-test")).client is client  # type: ignore[attr-defined]
            return response.text()

        assert asyncio.run(scenario()) == "injected"
        assert fake.bodies()[0]["model"] == "claude-haiku-4-5"


@pytest.mark.parametrize(
    ("prefixed", "standard", "model"),
    [
        ("ASSAY_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-6"),
        ("ASSAY_OPENAI_API_KEY", "OPENAI_API_KEY", "openai/gpt-4o"),
        ("ASSAY_OPENROUTER_API_KEY", "OPENROUTER_API_KEY", "openrouter/anthropic/claude-x"),
        ("ASSAY_GEMINI_API_KEY", "GEMINI_API_KEY", "gemini/gemini-2.5-pro"),
    ],
)
def test_each_action_inputs_assay_name_is_a_key_for_assay_run_too(
    prefixed: str, standard: str, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`assay ci` reads an input as ASSAY_<INPUT>; `assay run` takes the same variable as the
    key (a name that is known but ignored would be the quietest mistake of all)."""
    from assay.models.names import bridge_env, missing_credentials

    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv(prefixed, "key-0123456789")
    bridge_env()
    assert os.environ.get(standard) == "key-0123456789"
    assert missing_credentials(model) is None
