"""HTTP plumbing shared by the SDK clients."""

from __future__ import annotations

import ssl
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import aclosing, contextmanager
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from assay._util import json_text
from assay.errors import ModelError
from assay.models.retry import RESPONSE_TOO_LARGE, UNREADABLE_RESPONSE, ApiCallFailure

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "MAX_RESPONSE_BYTES",
    "UNUSABLE_ANSWER",
    "aiohttp_client",
    "cap_response_body",
    "http_client_options",
    "response_json",
    "sdk_failures",
    "shared_ssl_context",
    "unreadable_body",
    "unusable_answer",
]

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""The most of one response body assay reads, counted decoded (after gzip and the like).

The largest answer a model API gives is a few MB of JSON: 128k output tokens of text, or
of CJK escaped as `\\uXXXX`, plus thinking signatures. A body past this bound comes from
something that is not a model API (or a proxy rewriting it: a gzip bomb took one run to
7 GiB), and holding it whole would cost that much memory per call in flight."""


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
    except sdk.APIConnectionError as exc:
        if isinstance(exc.__cause__, ApiCallFailure):  # cap_response_body's, under the SDK
            raise exc.__cause__ from None
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
    # lazy: optional SDK
    import httpx2  # the HTTP library both SDKs are built on

    return httpx2.create_ssl_context()


def http_client_options() -> dict[str, Any]:
    """What every model API's `httpx2.AsyncClient` is built with, whichever SDK holds it:
    the shared TLS context, and the bound on each response body."""
    return {"verify": shared_ssl_context(), "event_hooks": {"response": [cap_response_body]}}


def aiohttp_client(sdk: ModuleType) -> Any:
    """The SDK's own aiohttp-backed HTTP client, with `http_client_options()`.

    Both SDKs ship it for concurrency: per call it costs about a third less CPU than
    their default httpx transport (see "Model call concurrency" in docs/performance.md),
    and at dozens of calls in flight that CPU is what keeps calls waiting. Where aiohttp
    is missing after all (an environment that dropped the `aiohttp` extra), the SDK's
    default client does the same job, only slower.
    """
    try:
        return sdk.DefaultAioHttpClient(**http_client_options())
    except RuntimeError:  # what the SDKs raise without their aiohttp extra
        return sdk.DefaultAsyncHttpxClient(**http_client_options())


async def cap_response_body(response: httpx2.Response) -> None:
    """An httpx2 response hook: reading this response's body stops past MAX_RESPONSE_BYTES.

    Every read of a body goes through `Response.aiter_bytes` (the SDK's `with_raw_response`
    read, an error status's body, a redirect's), and httpx2 decodes there, lazily, in
    pieces of at most 1 MiB (aiohttp hands it the raw bytes: the SDKs' transport turns
    aiohttp's own decompression off). Counting those pieces stops a gzip bomb one piece
    past the bound, before the rest is inflated. A hook rather than a wrapped transport:
    a transport sees only the compressed bytes, and the SDK clients build theirs
    themselves (with the environment's proxies). The ApiCallFailure raised comes out of
    the SDK as it is (openai, google-genai) or as the cause of an APIConnectionError
    (anthropic, unwrapped by `sdk_failures`).

    A body whose size the headers fix (a Content-Length within the bound, not chunked,
    not encoded) cannot grow past it: the HTTP parser reads that many bytes and no more,
    and decoding the identity changes nothing. Such a body, what the model APIs send
    uncompressed, is read as it is (the wrapper cost about 4% of a call's CPU).
    """
    if _size_is_fixed_within_bound(response.headers):
        return
    decoded = response.aiter_bytes

    async def capped(chunk_size: int | None = None) -> AsyncGenerator[bytes, None]:
        read = 0
        async with aclosing(decoded(chunk_size)) as pieces:  # closing it frees the connection
            async for piece in pieces:
                read += len(piece)
                if read > MAX_RESPONSE_BYTES:
                    raise response_too_large(response)
                yield piece

    response.aiter_bytes = capped  # type: ignore[method-assign]


def _size_is_fixed_within_bound(headers: httpx2.Headers) -> bool:
    if "transfer-encoding" in headers:  # chunked (its Content-Length, if any, is ignored)
        return False
    if headers.get("content-encoding", "identity").strip().lower() != "identity":
        return False
    lengths = headers.get_list("content-length")
    # One value, digits only: a repeated or odd one is left to the counted read.
    if len(lengths) != 1 or not (lengths[0].strip().isascii() and lengths[0].strip().isdigit()):
        return False
    return int(lengths[0]) <= MAX_RESPONSE_BYTES


def response_too_large(response: httpx2.Response) -> ApiCallFailure:
    """What to say about a body past MAX_RESPONSE_BYTES, naming the endpoint that sent it."""
    url = response.request.url
    endpoint = f"{url.host}:{url.port}" if url.port else url.host  # never the userinfo
    return ApiCallFailure(
        status=response.status_code,
        error_type=RESPONSE_TOO_LARGE,
        message=(
            f"response body larger than {MAX_RESPONSE_BYTES >> 20} MiB, not read further; "
            f"no model API answers that much: is the endpoint at {endpoint} "
            "(or a proxy in between) really the model API?"
        ),
    )


UNUSABLE_ANSWER = (ValueError, TypeError, AttributeError, KeyError, IndexError, OverflowError)
"""What reading an answer of the wrong shape raises (a string where an object belongs, a
token count no float holds): the provider's answer is unusable, not a bug of assay's."""


def unusable_answer(where: str, exc: Exception) -> ModelError:
    """The ModelError for an answer of the wrong shape, in one line."""
    # lazy: start-up (not loaded with this module)
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
    not an object. The body was read under `cap_response_body`'s bound.
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
