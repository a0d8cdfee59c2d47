"""What went wrong talking to GitHub, in one line the user can act on (a ConfigError)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from assay.errors import ConfigError

__all__ = ["github_failure"]

TOKEN_HINT = "set GITHUB_TOKEN (or GH_TOKEN)"


def github_failure(
    exc: BaseException, *, what: str, host: str, authenticated: bool, timeout_s: float
) -> ConfigError:
    """Translate a PyGithub or requests exception raised while fetching `what`.

    Returns the ConfigError to raise; anything unexpected still gets a one-line message.
    """
    import requests
    from github import BadCredentialsException, GithubException

    if isinstance(exc, BadCredentialsException) or getattr(exc, "status", None) == 401:
        return ConfigError(
            f"GitHub at {host} rejected the token (401 Bad credentials): check GITHUB_TOKEN / "
            "GH_TOKEN, or unset it for a public repository"
        )
    if isinstance(exc, GithubException):
        return _status_failure(exc, what=what, host=host, authenticated=authenticated)
    if isinstance(exc, requests.Timeout):
        return ConfigError(f"GitHub at {host} did not answer within {timeout_s:g} s ({what})")
    if isinstance(exc, requests.ConnectionError):
        return ConfigError(f"could not reach {host} ({_first_line(exc)})")
    return ConfigError(f"request to {host} for {what} failed: {_first_line(exc)}")


def _status_failure(exc: Any, *, what: str, host: str, authenticated: bool) -> ConfigError:
    status = exc.status
    headers = {str(k).lower(): str(v) for k, v in (exc.headers or {}).items()}
    message = exc.data.get("message") if isinstance(exc.data, dict) else None
    if status in (403, 429) and headers.get("x-ratelimit-remaining") == "0":
        return ConfigError(_rate_limited(headers, authenticated=authenticated))
    if status in (403, 429) and "retry-after" in headers:
        return ConfigError(
            f"GitHub's secondary rate limit stopped the requests for {what}; "
            f"retry in {headers['retry-after']} seconds"
        )
    if status == 404:
        if authenticated:
            access = "or the token cannot see it (check its repository access)"
        else:
            access = f"or the repository is private: a token may be needed, {TOKEN_HINT}"
        return ConfigError(f"{what} not found (404): check the URL, {access}")
    detail = f": {message}" if message else ""
    return ConfigError(f"GitHub answered {status} for {what}{detail}")


def _rate_limited(headers: Mapping[str, str], *, authenticated: bool) -> str:
    text = "GitHub API rate limit exceeded"
    reset = headers.get("x-ratelimit-reset", "")
    if reset.isdigit():
        at = datetime.fromtimestamp(int(reset)).astimezone()
        minutes = max(0, math.ceil((int(reset) - time.time()) / 60))
        same_day = at.date() == datetime.now().astimezone().date()
        when = at.strftime("%H:%M %Z" if same_day else "%Y-%m-%d %H:%M %Z")
        text += f"; it resets at {when} (local time), in {minutes} minute{'s' * (minutes != 1)}"
    if not authenticated:
        text += f"; {TOKEN_HINT} for a higher limit"
    return text


_NETWORK_CAUSES = (
    ("Connection refused", "connection refused"),
    ("Name or service not known", "host name not found"),
    ("nodename nor servname", "host name not found"),
    ("Temporary failure in name resolution", "host name not found"),
    ("Connection reset", "connection reset"),
    ("RemoteDisconnected", "connection closed without an answer"),
    ("CERTIFICATE_VERIFY_FAILED", "TLS certificate not trusted"),
)


def _first_line(exc: BaseException) -> str:
    """requests nests the cause deep in a long message; name it in a few words."""
    text = str(exc).strip()
    for needle, cause in _NETWORK_CAUSES:
        if needle in text:
            return cause
    lines = text.splitlines()
    return lines[0][:200] if lines else type(exc).__name__
