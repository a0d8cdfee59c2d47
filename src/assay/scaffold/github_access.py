"""Which GitHub API a pull request URL leads to, and which token (if any) may go there.

A URL is not a choice of where credentials go: anyone can hand out a link to a server of
their own. So a token goes only to an API the user chose:

- api.github.com, for a github.com URL, with GITHUB_TOKEN (else GH_TOKEN);
- the API GITHUB_API_URL names (GitHub Actions sets it, on GitHub Enterprise too; tests
  point it at a loopback fake), with the same token, for every host;
- a GitHub Enterprise host's `/api/v3` when GH_HOST names that host, with
  GH_ENTERPRISE_TOKEN (else GITHUB_ENTERPRISE_TOKEN), the GitHub CLI's variables; never
  over plain http.

Anywhere else the API is called without a token (public repositories still work), and
a token that was set but not sent is named, never shown, in a one-line warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from assay.scaffold.url import PullRequestUrl

__all__ = ["PUBLIC_API_URL", "ApiAccess", "api_access", "github_token"]

PUBLIC_API_URL = "https://api.github.com"
GITHUB_TOKENS = ("GITHUB_TOKEN", "GH_TOKEN")
ENTERPRISE_TOKENS = ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
GITHUB_TOKEN_HINT = "set GITHUB_TOKEN (or GH_TOKEN)"


@dataclass(frozen=True)
class ApiAccess:
    api_url: str
    token: str | None = field(repr=False)
    token_hint: str
    """What to set for a token to be used with this API (said when access is missing)."""
    withheld: str | None = None
    """Why a token set in the environment was not sent (a warning), or None."""

    @property
    def host(self) -> str:
        return urlsplit(self.api_url).netloc or self.api_url


def github_token(environ: Mapping[str, str]) -> str | None:
    """GITHUB_TOKEN, else GH_TOKEN (the GitHub CLI's), else None (public repositories only)."""
    name = _first_set(environ, GITHUB_TOKENS)
    return environ[name].strip() if name else None


def api_access(url: PullRequestUrl, environ: Mapping[str, str]) -> ApiAccess:
    """The API to call for `url`, and the token it may be given (see the module docstring)."""
    configured = environ.get("GITHUB_API_URL", "").strip().rstrip("/")
    if configured:
        return ApiAccess(configured, github_token(environ), GITHUB_TOKEN_HINT)
    if url.is_public_github:
        return ApiAccess(PUBLIC_API_URL, github_token(environ), GITHUB_TOKEN_HINT)
    return _enterprise_access(url, environ)


def _enterprise_access(url: PullRequestUrl, environ: Mapping[str, str]) -> ApiAccess:
    api_url = f"{url.scheme}://{url.host}/api/v3"
    remedy = f"set GH_ENTERPRISE_TOKEN and GH_HOST={url.host}, or GITHUB_API_URL"
    enterprise = _first_set(environ, ENTERPRISE_TOKENS)
    named = environ.get("GH_HOST", "").strip().lower().rstrip(".") == url.host
    if enterprise and named and url.scheme == "https":
        return ApiAccess(api_url, environ[enterprise].strip(), remedy)
    if enterprise and not named:
        why, remedy = f"{enterprise} goes only to the host GH_HOST names", f"set GH_HOST={url.host}"
    elif enterprise:
        why, remedy = f"{enterprise} never goes over plain http", "use the https URL"
    elif github := _first_set(environ, GITHUB_TOKENS):
        why = f"{github} goes only to api.github.com"
    else:
        return ApiAccess(api_url, None, remedy)
    return ApiAccess(
        api_url,
        None,
        token_hint=f"{remedy} (no token was sent: {why})",
        withheld=f"no token sent to {url.host}: {why}; {remedy}",
    )


def _first_set(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((name for name in names if environ.get(name, "").strip()), None)
