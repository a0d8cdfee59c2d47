"""Pull request URLs, as people copy them out of the browser, and the API they lead to."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from assay.errors import ConfigError

__all__ = ["PUBLIC_API_URL", "PullRequestUrl", "parse_pull_request_url"]

PUBLIC_API_URL = "https://api.github.com"
_PUBLIC_HOSTS = frozenset({"github.com", "www.github.com"})
_OWNER = r"[A-Za-z0-9_.-]+"
_REPO = r"[A-Za-z0-9_.-]+"
# `/pull/N`, optionally followed by a tab of the PR page (and whatever that tab adds,
# e.g. `/files/<sha>..<sha>` or `/commits/<sha>`).
_PATH = re.compile(
    rf"/(?P<owner>{_OWNER})/(?P<repo>{_REPO})/pull/(?P<number>[1-9][0-9]{{0,9}})"
    r"(?:/(?:files|commits|changes)(?:/[^/]+)*)?/?"
)
_EXPECTED = "expected https://github.com/OWNER/REPO/pull/NUMBER"


@dataclass(frozen=True)
class PullRequestUrl:
    scheme: str
    host: str
    """`github.com`, or a GitHub Enterprise host (with its port, if any)."""
    owner: str
    repo: str
    number: int

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def web_url(self) -> str:
        """The canonical page of the pull request (what notes.source records)."""
        return f"{self.scheme}://{self.host}/{self.owner}/{self.repo}/pull/{self.number}"

    @property
    def is_public_github(self) -> bool:
        return self.host in _PUBLIC_HOSTS

    def api_url(self, environ: Mapping[str, str]) -> str:
        """GITHUB_API_URL when set (Actions sets it; tests point it at a fake), else the
        host's REST API: api.github.com, or `/api/v3` on a GitHub Enterprise host."""
        configured = environ.get("GITHUB_API_URL", "").strip()
        if configured:
            return configured.rstrip("/")
        if self.is_public_github:
            return PUBLIC_API_URL
        return f"{self.scheme}://{self.host}/api/v3"


def parse_pull_request_url(text: str) -> PullRequestUrl:
    """Parse `https://HOST/OWNER/REPO/pull/N` (plus a PR tab, query or fragment).

    Raises ConfigError saying what was expected.
    """
    raw = text.strip()
    if "://" not in raw:
        raw = "https://" + raw  # `github.com/o/r/pull/1` as typed into a terminal
    try:
        parts = urlsplit(raw)
        host = parts.netloc.lower()
        _ = parts.port  # validates the port
    except ValueError:
        raise ConfigError(f"not a pull request URL: {text!r} ({_EXPECTED})") from None
    match = _PATH.fullmatch(parts.path)
    if parts.scheme not in ("http", "https") or not host or "@" in host or match is None:
        raise ConfigError(f"not a pull request URL: {text!r} ({_EXPECTED})")
    owner, repo = match["owner"], match["repo"]
    if {owner, repo} & {".", ".."}:
        raise ConfigError(f"not a pull request URL: {text!r} ({_EXPECTED})")
    return PullRequestUrl(
        scheme=parts.scheme,
        host="github.com" if host in _PUBLIC_HOSTS else host,
        owner=owner,
        repo=repo,
        number=int(match["number"]),
    )
