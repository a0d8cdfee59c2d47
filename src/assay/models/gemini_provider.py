"""Gemini through Google's `google-genai` SDK (the Gemini Developer API, `generateContent`).

The key is `GEMINI_API_KEY` or `GOOGLE_API_KEY` (the SDK's own names; it prefers the
latter when both are set, and so does assay). Structured answers use Gemini's function
calling, forced with mode `ANY` the way `tool_choice` forces a tool elsewhere. The
request and response mapping is in `gemini_wire.py`; this module is the transport.
"""

from __future__ import annotations

import os
from typing import Any

from assay.errors import ModelUnavailable
from assay.models._http import UNUSABLE_ANSWER, http_client_options, unusable_answer
from assay.models.base import ModelRequest, ModelResponse
from assay.models.gemini_wire import from_gemini, gemini_config, gemini_contents
from assay.models.provider_spec import missing_provider_credentials
from assay.models.retry import ApiCallFailure, RetryPolicy, parse_retry_after

__all__ = ["GeminiProvider", "gemini_from_env"]

KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
BASE_URL_VARIABLE = "GOOGLE_GEMINI_BASE_URL"
"""The SDK's own override of the endpoint (a proxy, the tests' fake)."""


class GeminiProvider:
    """Calls `client.aio.models.generate_content`; raises ApiCallFailure for API failures."""

    name = "gemini"

    def __init__(self, client: Any) -> None:
        self.client = client

    async def generate(self, request: ModelRequest) -> ModelResponse:
        from google.genai import errors  # lazy: optional SDK

        try:
            answer = await self.client.aio.models.generate_content(
                model=request.model,
                contents=gemini_contents(request),
                config=gemini_config(request),
            )
        except errors.APIError as exc:
            raise _status_failure(exc) from None
        except TimeoutError:
            raise ApiCallFailure(
                status=None, error_type="timeout", message="request timed out"
            ) from None
        except Exception as exc:
            if _is_connection_error(exc):
                raise ApiCallFailure(
                    status=None, error_type="connection_error", message="connection failed"
                ) from None
            raise
        body = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            return from_gemini(body)
        except UNUSABLE_ANSWER as exc:
            raise unusable_answer(f"gemini/{request.model}", exc) from None

    async def aclose(self) -> None:
        await self.client.aio.aclose()
        transport = self.client._api_client._http_options.httpx_async_client
        if transport is not None:
            await transport.aclose()


def _is_connection_error(exc: Exception) -> bool:
    """Whether `exc` is the HTTP library's "no answer arrived" (aiohttp or httpx)."""
    if isinstance(exc, OSError):
        return True
    module = type(exc).__module__.split(".")[0]
    if module == "aiohttp":
        import aiohttp  # lazy: optional SDK

        return isinstance(exc, aiohttp.ClientError)
    if module in {"httpx", "httpx2"}:
        return "Transport" in {c.__name__.removesuffix("Error") for c in type(exc).__mro__}
    return False


def _status_failure(exc: Any) -> ApiCallFailure:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    return ApiCallFailure(
        status=int(exc.code) if exc.code else None,
        error_type=str(exc.status or "api_error"),
        message=str(exc.message or "")[:500],
        retry_after_s=parse_retry_after(headers),
    )


def gemini_from_env(*, policy: RetryPolicy | None = None) -> GeminiProvider:
    """An adapter whose client holds GOOGLE_API_KEY or GEMINI_API_KEY.

    The SDK's own retries stay off (its default): assay's retry layer owns retries.
    """
    reason = missing_provider_credentials("gemini")
    if reason:
        raise ModelUnavailable(reason)
    try:
        from google import genai  # lazy: optional SDK
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise ModelUnavailable(
            "gemini/* needs the gemini extra: pip install 'assay[gemini]'"
        ) from None
    key = next(os.environ[v] for v in KEY_VARIABLES if os.environ.get(v))
    timeout = (policy or RetryPolicy()).timeout_s
    # The SDK's aiohttp transport subclasses aiohttp's ClientSession, which aiohttp warns
    # against on every new session; its httpx transport is the supported alternative.
    # httpx2 is the SDK's other transport, and the one the anthropic SDK already brings.
    # lazy: optional SDK
    import httpx2
    from google.genai import types

    options = types.HttpOptions(
        timeout=int(timeout * 1000),
        httpx_async_client=httpx2.AsyncClient(timeout=timeout, **http_client_options()),
        base_url=os.environ.get(BASE_URL_VARIABLE) or None,
    )
    return GeminiProvider(genai.Client(api_key=key, http_options=options))
