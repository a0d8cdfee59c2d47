"""HTTP plumbing shared by the SDK clients."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from types import ModuleType
from typing import Any

from assay._util import json_text
from assay.errors import ModelError
from assay.models.retry import UNREADABLE_RESPONSE, ApiCallFailure

__all__ = [
    "UNUSABLE_ANSWER",
    "aiohttp_client",
    "response_json",
    "sdk_failures",
    "shared_ssl_context",
    "unreadable_body",
    "unusable_answer",
]


@contextmanager
def sdk_failures(
    sdk: ModuleType,
    *,
    base_error: type[Exception],
    status_failure: Callable[[Any], ApiCallFailure],
) -> Iterator[None]:
    """Turn an SDK's exceptions into ApiCallFailure, which the retry layer understands.

    `anthropic` and `openai` are generated from the same template and share this
    exception tree; only its root (`base_error`) and the shape of an error body
    (`status_failure`) differ.
    """
    try:
        yield
    except sdk.APIStatusError as exc:
        raise status_failure(exc) from None
    except sdk.APITimeoutError:  # before APIConnectionError, its base class
        raise ApiCallFailure(
            status=None, error_type="timeout", message="request timed out"
        ) from None
    except sdk.APIConnectionError:
        raise ApiCallFailure(
            status=None, error_type="connection_error", message="connection failed"
        ) from None
    except base_error as exc:
        raise ApiCallFailure(
            status=None, error_type="sdk_error", message=type(exc).__name__
        ) from None


@cache
def shared_ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every client in the process.

    Each SDK client otherwise loads the CA bundle again (about 0.1 s of CPU), and a
    client is built per event loop. The context is the SDKs' own default, built once.
    """
    import httpx2  # the HTTP library both SDKs are built on

    return httpx2.create_ssl_context()


def aiohttp_client(sdk: ModuleType) -> Any:
    """The SDK's own aiohttp-backed HTTP client, with the shared TLS context.

    Both SDKs ship it for concurrency: per call it costs about a third less CPU than
    their default httpx transport (see "Model call concurrency" in docs/performance.md),
    and at dozens of calls in flight that CPU is what keeps calls waiting. Where aiohttp
    is missing after all (an environment that dropped the `aiohttp` extra), the SDK's
    default client does the same job, only slower.
    """
    try:
        return sdk.DefaultAioHttpClient(verify=shared_ssl_context())
    except RuntimeError:  # what the SDKs raise without their aiohttp extra
        return sdk.DefaultAsyncHttpxClient(verify=shared_ssl_context())


UNUSABLE_ANSWER = (ValueError, TypeError, AttributeError, KeyError, IndexError, OverflowError)
"""What reading an answer of the wrong shape raises (a string where an object belongs, a
token count no float holds): the provider's answer is unusable, not a bug of assay's."""


def unusable_answer(where: str, exc: Exception) -> ModelError:
    """The ModelError for an answer of the wrong shape, in one line."""
    from pydantic import ValidationError

    from assay._util.json_schema import describe_validation_error

    what = describe_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
    return ModelError(f"{where}: unusable response: {what}")


def response_json(raw: Any) -> dict[str, Any]:
    """The JSON object a `with_raw_response` call answered with.

    Reading the body ourselves skips the SDK building its response models, which the
    adapters would only turn back into plain dicts. A body that is empty, HTML or not
    JSON at all (a proxy's error page sent with 200, a connection cut mid-body) is an
    ApiCallFailure the retry layer retries like a 5xx; ValueError when it is JSON but
    not an object.
    """
    response = raw.http_response
    content: bytes = response.content
    try:
        body = json_text.loads(content)
    except ValueError:
        raise unreadable_body(response.status_code, response.headers, content) from None
    if not isinstance(body, dict):
        raise ValueError(f"expected a JSON object, got {type(body).__name__}")
    return body


def unreadable_body(status: int, headers: Any, content: bytes) -> ApiCallFailure:
    """What to say about an answer whose body cannot be read, naming status and type."""
    content_type = headers.get("content-type") or "none given"
    start = content.lstrip()[:15].lower()
    if not start:
        what = "an empty body"
    elif start.startswith((b"<!doctype html", b"<html", b"<")):
        what = "an HTML page, not JSON"
    else:
        what = "a body that is not JSON"
    return ApiCallFailure(
        status=status,
        error_type=UNREADABLE_RESPONSE,
        message=f"{what} (content-type: {content_type}, {len(content)} bytes)",
    )
