"""Pull request URLs, as people copy them out of the browser (github_access.py says
which API, and which token, a URL leads to)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from assay.errors import ConfigError

__all__ = ["PullRequestUrl", "parse_pull_request_url"]

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
    """`github.com`, or a GitHub Enterprise host (with its port, if any); lower case, without
    the trailing dot a fully qualified name may carry."""
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


def parse_pull_request_url(text: str) -> PullRequestUrl:
    """Parse `https://HOST/OWNER/REPO/pull/N` (plus a PR tab, query or fragment).

    Raises ConfigError saying what was expected.
    """
    raw = text.strip()
    if "://" not in raw:
        raw = "https://" + raw  # `github.com/o/r/pull/1` as typed into a terminal
    try:
        parts = urlsplit(raw)
        host = _host(parts)
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


def _host(parts: SplitResult) -> str:
    """The netloc in lower case, without a trailing dot on the name (`github.com.` is
    github.com: the same host, and it must get the same treatment, token rules included)."""
    netloc = parts.netloc.lower()
    name = parts.hostname or ""
    if name.endswith(".") and netloc.startswith(name):  # (userinfo is refused later)
        netloc = name.rstrip(".") + netloc[len(name) :]
    return netloc
