"""A pull request on GitHub or GitHub Enterprise as a change source, through PyGithub.

The base side is the merge base of the PR's base and head commits (what GitHub diffs
the PR against), so the captured base is exactly the state the PR's patches apply to.
Failures become one-line ConfigErrors (github_errors.py); the client neither retries for
long nor sleeps through a rate limit, so a scaffold fails fast and says why.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from assay.scaffold.github_errors import github_failure
from assay.scaffold.model import Change, ChangedFile, License, Unavailable
from assay.scaffold.url import PullRequestUrl

if TYPE_CHECKING:
    from github import Github

__all__ = ["GitHubPullRequest", "github_token"]

TIMEOUT_S = 15
RETRIES = 2
"""Retries of a refused connection or a 5xx answer (GET requests only)."""
RETRY_BACKOFF_S = 0.5
"""urllib3 backoff factor between those retries; read when a client is made."""
PER_PAGE = 100
LISTED_FILES_CAP = 3000
"""GitHub lists at most this many files of a pull request."""


def github_token(environ: Mapping[str, str]) -> str | None:
    """GITHUB_TOKEN, else GH_TOKEN (the GitHub CLI's), else None (public repositories only)."""
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


class GitHubPullRequest:
    """The change of one pull request. Close it (or use `with`) to release connections."""

    def __init__(self, url: PullRequestUrl, *, api_url: str, token: str | None) -> None:
        self.url = url
        self._host = urlsplit(api_url).netloc or api_url
        self._authenticated = token is not None
        self._client = _client(api_url, token)
        self._repo = self._client.get_repo(url.full_name)  # lazy: no request
        self._change: Change | None = None
        self._patches: dict[str, str | None] = {}

    @classmethod
    def from_environment(
        cls, url: PullRequestUrl, environ: Mapping[str, str] = os.environ
    ) -> GitHubPullRequest:
        return cls(url, api_url=url.api_url(environ), token=github_token(environ))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> GitHubPullRequest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ChangeSource ----------------------------------------------------------------
    def describe(self) -> Change:
        if self._change is None:
            self._change = self._fetch_change()
        return self._change

    def read(self, path: str, *, ref: str, max_bytes: int | None) -> bytes | Unavailable:
        from github import GithubException

        with self._calls(f"{path} at {ref[:12]}"):
            try:
                found = self._repo.get_contents(path, ref=ref)
            except GithubException as exc:
                if exc.status == 404:
                    return Unavailable.not_found(ref)
                raise
            if isinstance(found, list):
                return Unavailable.not_a_file("directory")
            if found.type != "file":
                return Unavailable.not_a_file(found.type)
            if max_bytes is not None and found.size > max_bytes:
                return Unavailable.too_large(found.size, max_bytes)
            return self._content(found.raw_data)

    def detected_license(self, ref: str) -> License | None:
        from github import GithubException

        with self._calls(f"the license of {self.url.full_name} at {ref[:12]}"):
            try:
                _, data = self._client.requester.requestJsonAndCheck(
                    "GET", f"{self._repo.url}/license", parameters={"ref": ref}
                )
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise
            return License(str(data["path"]), self._content(data))

    def patch(self, file: ChangedFile) -> str | None:
        self.describe()
        return self._patches.get(file.path)

    # -- internals -------------------------------------------------------------------
    def _fetch_change(self) -> Change:
        number = self.url.number
        with self._calls(f"pull request {self.url.full_name}#{number}"):
            pull = self._repo.get_pull(number)
            title, body = pull.title, pull.body or ""
            base_sha, head_sha = pull.base.sha, pull.head.sha
            changed_count = pull.changed_files
            listed = list(pull.get_files())
        files = []
        for item in listed:
            files.append(ChangedFile(item.status, item.filename, item.previous_filename or None))
            # GitHub omits the patch of binary files and of very large diffs.
            self._patches[item.filename] = item.patch or ("" if item.changes == 0 else None)
        warnings = []
        if changed_count > len(listed):
            warnings.append(
                f"GitHub lists only the first {len(listed)} of the {changed_count} files this "
                f"pull request changes (its cap is {LISTED_FILES_CAP}); the rest were not captured"
            )
        merge_base, note = self._merge_base(base_sha, head_sha)
        return Change(
            repository=self.url.full_name,
            title=title,
            body=body,
            source=self.url.web_url,
            base_sha=merge_base,
            head_sha=head_sha,
            files=tuple(files),
            fallback_name=f"pr-{number}",
            warnings=tuple(warnings) + note,
        )

    def _merge_base(self, base_sha: str, head_sha: str) -> tuple[str, tuple[str, ...]]:
        from github import GithubException

        with self._calls(f"the comparison {base_sha[:12]}...{head_sha[:12]}"):
            try:
                return self._repo.compare(base_sha, head_sha).merge_base_commit.sha, ()
            except GithubException as exc:
                if exc.status != 404:
                    raise
        return base_sha, (
            f"GitHub cannot compare {base_sha[:12]}...{head_sha[:12]} (404); "
            "capturing the base side at the PR's recorded base commit instead",
        )

    def _content(self, data: Mapping[str, Any]) -> bytes:
        """A contents-API answer's bytes; over 1 MB that API sends no content, the blob has it."""
        encoded = data.get("content") or ""
        if data.get("encoding") == "base64" and (encoded or not data.get("size")):
            return base64.b64decode(encoded)
        blob = self._repo.get_git_blob(str(data["sha"]))
        if blob.encoding == "base64":
            return base64.b64decode(blob.content)
        return blob.content.encode("utf-8")

    @contextmanager
    def _calls(self, what: str) -> Iterator[None]:
        import requests
        from github import GithubException

        try:
            yield
        except (GithubException, requests.RequestException) as exc:
            raise github_failure(
                exc,
                what=what,
                host=self._host,
                authenticated=self._authenticated,
                timeout_s=TIMEOUT_S,
            ) from None


def _client(api_url: str, token: str | None) -> Github:
    from github import Auth, Github
    from urllib3.util import Retry

    retry = Retry(
        total=RETRIES,
        backoff_factor=RETRY_BACKOFF_S,
        status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),
        raise_on_status=False,  # the last answer reaches PyGithub, which raises with its status
        respect_retry_after_header=False,
    )
    return Github(
        base_url=api_url,
        auth=Auth.Token(token) if token else None,
        timeout=TIMEOUT_S,
        per_page=PER_PAGE,
        retry=retry,
        seconds_between_requests=None,
        lazy=True,
    )
