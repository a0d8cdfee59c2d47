"""The authenticated PyGithub client `assay ci` uses, and how its failures are described.

Publishing is best effort: a missing permission (fork, read-only token), a rate limit or
a network failure becomes one `::warning::` naming the cause, never a crash. PyGithub
is imported only when a client is made, so `assay --version` stays light.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from github import Github

__all__ = [
    "acting_login",
    "describe_error",
    "github_client",
    "github_errors",
    "is_permission_error",
]

TIMEOUT_S = 20
RETRIES = 3
BACKOFF_S = 1.0
"""urllib3 backoff factor between retries of 5xx and dropped connections."""
WRITE_INTERVAL_S = 1.0
"""GitHub asks integrations to leave a second between mutating calls (secondary limits)."""
PER_PAGE = 100
_QUERY = re.compile(r"\?[^\s#'\")>]*=[^\s#'\")>]*")
"""A URL's query string (`?a=b&...`; requests quotes some URLs by their path only): a
signed storage URL's is its credential (`sig=...`)."""


def github_client(*, api_url: str, token: str | None) -> Github:
    from github import Auth, Github, GithubRetry  # lazy: start-up (github only when used)

    return Github(
        base_url=api_url,
        auth=Auth.Token(token) if token else None,
        timeout=TIMEOUT_S,
        per_page=PER_PAGE,
        # Never sleep for a long rate-limit reset inside a CI job: fail fast and warn.
        retry=GithubRetry(total=RETRIES, backoff_factor=BACKOFF_S, max_rate_limit_wait=10),
        seconds_between_requests=None,
        seconds_between_writes=WRITE_INTERVAL_S or None,
        lazy=True,
    )


def acting_login(client: Github) -> str:
    """The login the token acts as: `octocat` for a person's token, `github-actions[bot]`
    for an Actions GITHUB_TOKEN, `<app slug>[bot]` for a GitHub App's installation token.

    Asked through GraphQL because `GET /user` refuses installation tokens (403), the
    GITHUB_TOKEN among them; GraphQL's `viewer` answers for every kind of token.
    """
    from github import GithubException  # lazy: start-up (github only when used)

    _, data = client.requester.graphql_query("query { viewer { login } }", {})
    viewer = (data.get("data") or {}).get("viewer") or {}
    login = viewer.get("login") if isinstance(viewer, dict) else None
    if not isinstance(login, str) or not login:
        raise GithubException(502, data, None, "GraphQL did not say whom the token acts as")
    return login


def github_errors() -> tuple[type[BaseException], ...]:
    """Exceptions a GitHub call can end in that mean "GitHub said no or could not be reached"."""
    # lazy: start-up (requests, urllib3 and github only when used)
    import requests
    import urllib3
    from github import GithubException

    return (GithubException, requests.RequestException, urllib3.exceptions.HTTPError, OSError)


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def is_permission_error(exc: BaseException) -> bool:
    """401/403/404: the token may not do this (GitHub hides what it will not show as 404)."""
    return _status(exc) in (401, 403, 404)


def describe_error(exc: BaseException) -> str:
    """`403 Resource not accessible by integration`, or the network failure in one line."""
    status = _status(exc)
    if status is not None:
        data = getattr(exc, "data", None)
        message = data.get("message") if isinstance(data, dict) else None
        return f"{status} {message or type(exc).__name__}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {_without_queries(text[0]) if text else 'no detail'}"


def _without_queries(text: str) -> str:
    """`text` with each URL's query string cut (requests quotes the whole URL it failed on)."""
    return _QUERY.sub("?...", text)
