"""The OpenAI-compatible chat.completions adapter over an injected `AsyncOpenAI`.

Serves OpenAI itself, OpenRouter and local OpenAI-compatible servers (vLLM, Ollama,
llama.cpp). The wire translation lives in `openai_wire.py`.
"""

from __future__ import annotations

import os
import re
from typing import Any, Literal

import openai

from assay.errors import ModelUnavailable
from assay.models._http import (
    UNUSABLE_ANSWER,
    aiohttp_client,
    response_json,
    sdk_failures,
    unusable_answer,
)
from assay.models.base import ModelRequest, ModelResponse
from assay.models.openai_wire import (
    chat_messages,
    chat_tool_choice,
    chat_tools,
    from_chat_completion,
)
from assay.models.provider_spec import missing_provider_credentials
from assay.models.retry import ApiCallFailure, RetryPolicy, parse_retry_after

__all__ = ["OpenAIProvider", "openai_from_env", "openrouter_from_env"]

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
# Local servers often need no key, but the SDK insists on one.
_PLACEHOLDER_KEY = "no-key-needed"
# Reasoning models (o-series, gpt-5 and later) reject any temperature but the default.
_FIXED_TEMPERATURE = re.compile(r"^(o\d|gpt-([5-9]|\d{2,}))")

TokenLimitField = Literal["max_tokens", "max_completion_tokens"]


class OpenAIProvider:
    """Calls `client.chat.completions.create`; raises ApiCallFailure for every API failure.

    `token_limit_field`: OpenAI's own API wants `max_completion_tokens` (its reasoning
    models reject `max_tokens`); most compatible servers only know `max_tokens`.
    """

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        name: str = "openai",
        token_limit_field: TokenLimitField = "max_tokens",
    ) -> None:
        self.client = client
        self.name = name
        self.token_limit_field = token_limit_field

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The `chat.completions.create` keyword arguments for `request`."""
        params: dict[str, Any] = {
            "model": request.model,
            "messages": chat_messages(request.system, request.messages),
            self.token_limit_field: request.max_tokens,
        }
        bare_model = request.model.rsplit("/", 1)[-1]
        if request.temperature is not None and not _FIXED_TEMPERATURE.match(bare_model):
            params["temperature"] = request.temperature
        if request.tools:
            params["tools"] = chat_tools(request.tools)
            params["tool_choice"] = chat_tool_choice(request.tool_choice)
        return params

    async def generate(self, request: ModelRequest) -> ModelResponse:
        with sdk_failures(openai, base_error=openai.OpenAIError, status_failure=_status_failure):
            raw = await self.client.chat.completions.with_raw_response.create(
                **self.params(request)
            )
        try:
            content, stop, usage = from_chat_completion(response_json(raw))
        except UNUSABLE_ANSWER as exc:
            raise unusable_answer(f"{self.name}/{request.model}", exc) from None
        return ModelResponse(content=content, stop_reason=stop, usage=usage)

    async def aclose(self) -> None:
        await self.client.close()


def _status_failure(exc: openai.APIStatusError) -> ApiCallFailure:
    error_type, message = "api_error", ""
    body = exc.body
    # The SDK hands over the `error` object itself when the body has one.
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict):
        error_type = str(error.get("type") or error.get("code") or error_type)
        message = str(error.get("message") or "")
    return ApiCallFailure(
        status=exc.status_code,
        error_type=error_type,
        message=message[:500],
        retry_after_s=parse_retry_after(exc.response.headers),
    )


def _client(api_key: str, base_url: str | None, policy: RetryPolicy | None) -> openai.AsyncOpenAI:
    timeout = (policy or RetryPolicy()).timeout_s
    return openai.AsyncOpenAI(
        api_key=api_key,
        base_url=base_url,
        max_retries=0,  # assay's retry layer owns retries and their limits
        timeout=openai.Timeout(timeout, connect=min(timeout, 10.0)),
        http_client=aiohttp_client(openai),
    )


def openai_from_env(*, policy: RetryPolicy | None = None) -> OpenAIProvider:
    """OPENAI_API_KEY / OPENAI_BASE_URL: OpenAI, or any OpenAI-compatible server."""
    reason = missing_provider_credentials("openai")
    if reason:
        raise ModelUnavailable(reason)
    base_url = os.environ.get("OPENAI_BASE_URL") or None
    client = _client(os.environ.get("OPENAI_API_KEY") or _PLACEHOLDER_KEY, base_url, policy)
    field: TokenLimitField = "max_tokens" if base_url else "max_completion_tokens"
    return OpenAIProvider(client, name="openai", token_limit_field=field)


def openrouter_from_env(*, policy: RetryPolicy | None = None) -> OpenAIProvider:
    """OPENROUTER_API_KEY against https://openrouter.ai/api/v1.

    OPENROUTER_BASE_URL overrides the endpoint (a proxy, or a test server).
    """
    reason = missing_provider_credentials("openrouter")
    if reason:
        raise ModelUnavailable(reason)
    key = os.environ["OPENROUTER_API_KEY"]
    base_url = os.environ.get("OPENROUTER_BASE_URL") or OPENROUTER_BASE_URL
    return OpenAIProvider(_client(key, base_url, policy), name="openrouter")
