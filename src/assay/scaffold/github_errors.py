"""What went wrong talking to GitHub, in one line the user can act on (a ConfigError)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from assay.errors import ConfigError
from assay.report.terminal import clean

__all__ = ["github_failure", "not_the_api", "redirected"]


def not_the_api(*, what: str, host: str) -> ConfigError:
    """An answer without the fields the GitHub API always sends (an HTML page, a proxy)."""
    return ConfigError(
        f"GitHub at {host} answered with something that is not the GitHub API ({what}); "
        "check GITHUB_API_URL, or the host of the pull request URL"
    )


def redirected(exc: RuntimeError, *, what: str, host: str) -> ConfigError:
    """PyGithub's refusal of a redirect (to https, another host, the same path) as one line."""
    text = str(exc)
    if "protocol to https" in text:
        return ConfigError(
            f"GitHub at {host} redirected the request for {what} to https: use the https:// "
            "pull request URL (or GITHUB_API_URL)"
        )
    return ConfigError(
        f"GitHub at {host} redirected the request for {what} elsewhere: set GITHUB_API_URL "
        "to the https:// address of the API (https://HOST/api/v3 on GitHub Enterprise)"
    )


def github_failure(
    exc: BaseException,
    *,
    what: str,
    host: str,
    token_hint: str | None,
    timeout_s: float,
) -> ConfigError:
    """Translate a PyGithub or requests exception raised while fetching `what`.

    `token_hint` says what to set for a token to be sent; None when one was sent. Returns
    the ConfigError to raise; anything unexpected still gets a one-line message.
    """
    # lazy: start-up (requests and github only when used)
    import requests
    from github import BadCredentialsException, GithubException

    if isinstance(exc, BadCredentialsException) or getattr(exc, "status", None) == 401:
        if token_hint is not None:
            return ConfigError(f"GitHub at {host} answered 401 without a token: {token_hint}")
        return ConfigError(
            f"GitHub at {host} rejected the token (401 Bad credentials): check GITHUB_TOKEN / "
            "GH_TOKEN (GH_ENTERPRISE_TOKEN on GitHub Enterprise), or unset it for a public "
            "repository"
        )
    if isinstance(exc, GithubException):
        return _status_failure(exc, what=what, host=host, token_hint=token_hint)
    if isinstance(exc, requests.Timeout):
        return ConfigError(f"GitHub at {host} did not answer within {timeout_s:g} s ({what})")
    if isinstance(exc, requests.ConnectionError):
        return ConfigError(f"could not reach {host} ({_first_line(exc)})")
    return ConfigError(f"request to {host} for {what} failed: {_first_line(exc)}")


def _status_failure(exc: Any, *, what: str, host: str, token_hint: str | None) -> ConfigError:
    status = exc.status
    headers = {str(k).lower(): str(v) for k, v in (exc.headers or {}).items()}
    message = exc.data.get("message") if isinstance(exc.data, dict) else None
    if status in (403, 429) and headers.get("x-ratelimit-remaining") == "0":
        return ConfigError(_rate_limited(headers, token_hint=token_hint))
    if status in (403, 429) and "retry-after" in headers:
        return ConfigError(
            f"GitHub's secondary rate limit stopped the requests for {what}; "
            f"retry in {clean(headers['retry-after'], limit=20)} seconds"
        )
    if status == 404:
        if token_hint is not None:
            access = f"or the repository is private: a token may be needed, {token_hint}"
        else:
            access = "or the token cannot see it (check its repository access)"
        return ConfigError(f"{what} not found (404): check the URL, {access}")
    detail = f": {clean(str(message))}" if message else ""  # the server's text, one safe line
    return ConfigError(f"GitHub answered {status} for {what}{detail}")


def _rate_limited(headers: Mapping[str, str], *, token_hint: str | None) -> str:
    text = "GitHub API rate limit exceeded"
    reset = headers.get("x-ratelimit-reset", "")
    try:
        at = datetime.fromtimestamp(int(reset)).astimezone() if reset.isdigit() else None
    except (ValueError, OverflowError, OSError):  # a reset time no clock can show
        at = None
    if at is not None:
        minutes = max(0, math.ceil((int(reset) - time.time()) / 60))
        same_day = at.date() == datetime.now().astimezone().date()
        when = at.strftime("%H:%M %Z" if same_day else "%Y-%m-%d %H:%M %Z")
        text += f"; it resets at {when} (local time), in {minutes} minute{'s' * (minutes != 1)}"
    if token_hint is not None:
        text += f"; {token_hint} for a higher limit"
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
