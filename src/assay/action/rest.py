"""Read-only GitHub REST calls with the standard library, for the run/skip decision.

The decision runs before assay's dependencies are installed (decide.py), so it cannot
use PyGithub; publishing still does (github_api.py). Like that client, a 5xx answer or
a dropped connection is retried a few times with backoff, a rate limit is not waited
for, and the token is sent only to the API's own origin: a `Link: next` or a redirect
elsewhere is refused rather than followed (urllib would otherwise carry the
Authorization header along to any host a redirect names).
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from http.client import HTTPMessage
from typing import Any
from urllib.parse import urlsplit

__all__ = ["RestError", "RestReader"]

TIMEOUT_S = 20
RETRIES = 3
BACKOFF_S = 1.0
"""Seconds before the first retry, doubled for each further one."""
PER_PAGE = 100
_USER_AGENT = "assay-action"


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


class RestError(Exception):
    """GitHub said no (`status` set) or could not be reached (`status` None)."""

    def __init__(self, detail: str, status: int | None = None) -> None:
        super().__init__(detail)
        self.status = status


@dataclass(frozen=True)
class RestReader:
    api_url: str
    """`https://api.github.com`, or a GitHub Enterprise Server's `/api/v3`."""
    token: str | None

    def get(self, path: str) -> Any:
        """The JSON answer of `GET <api_url><path>`."""
        data, _ = self._get(self.api_url.rstrip("/") + path)
        return data

    def pages(self, path: str) -> Iterator[Any]:
        """Each item of a paginated listing, following `Link: rel="next"`."""
        sep = "&" if "?" in path else "?"
        url: str | None = f"{self.api_url.rstrip('/')}{path}{sep}per_page={PER_PAGE}"
        while url is not None:
            data, headers = self._get(url)
            if not isinstance(data, list):
                raise RestError(f"GET {path} answered {type(data).__name__}, not a list")
            yield from data
            url = _next_link(headers.get("Link", ""))

    def _get(self, url: str) -> tuple[Any, Message]:
        if _origin(url) != _origin(self.api_url):
            raise RestError(f"refusing to send the token to {urlsplit(url).netloc}")
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": _USER_AGENT,
        }
        request = urllib.request.Request(url, headers=headers, method="GET")
        if self.token:
            # Unredirected: urllib drops it on a redirect; _SameOrigin puts it back there only.
            request.add_unredirected_header("Authorization", f"Bearer {self.token}")
        opener = urllib.request.build_opener(_SameOrigin(_origin(self.api_url)))
        for attempt in range(RETRIES + 1):
            try:
                with opener.open(request, timeout=TIMEOUT_S) as response:
                    body = response.read()
                    return json.loads(body or b"null"), response.headers
            except urllib.error.HTTPError as exc:
                if exc.code < 500 or attempt == RETRIES:
                    raise RestError(_http_detail(exc), exc.code) from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                # HTTPException: a truncated body, a garbled status line, oversized headers.
                if attempt == RETRIES:
                    reason = getattr(exc, "reason", exc)
                    raise RestError(f"{type(exc).__name__}: {reason}") from None
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise RestError(f"GET {urlsplit(url).path} answered with no JSON") from None
            time.sleep(BACKOFF_S * 2**attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follow a redirect within the API's origin, token included; refuse any other."""

    def __init__(self, origin: tuple[str, str]) -> None:
        self.origin = origin

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if _origin(newurl) != self.origin:
            raise RestError(f"refusing a redirect to {urlsplit(newurl).netloc}")
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        token = req.unredirected_hdrs.get("Authorization")
        if new is not None and token is not None:
            new.add_unredirected_header("Authorization", token)
        return new


def _http_detail(exc: urllib.error.HTTPError) -> str:
    """`403 Resource not accessible by integration`: the status and GitHub's message."""
    try:
        message = json.loads(exc.read() or b"{}").get("message")
    except (ValueError, AttributeError, OSError):
        message = None
    return f"{exc.code} {message if isinstance(message, str) and message else exc.reason}"


def _next_link(header: str) -> str | None:
    """The `rel="next"` URL of a Link header (RFC 8288), None on the last page."""
    for part in header.split(","):
        url, _, params = part.partition(";")
        if 'rel="next"' in params.replace(" ", ""):
            return url.strip().removeprefix("<").removesuffix(">")
    return None
