"""A pull request on GitHub or GitHub Enterprise as a change source, through PyGithub.

The base side is the merge base of the PR's base and head commits (what GitHub diffs
the PR against), so the captured base is exactly the state the PR's patches apply to.
Failures become one-line ConfigErrors (github_errors.py); the client neither retries for
long nor sleeps through a rate limit, so a scaffold fails fast and says why. Every field
read from an answer is checked first: an address that answers 200 with something else
(a GitHub Enterprise web page, an SSO proxy) gets the same one line, never a traceback.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from assay.report.terminal import printable
from assay.scaffold.change import Change, ChangedFile, License, Unavailable
from assay.scaffold.github_access import ApiAccess, api_access
from assay.scaffold.github_errors import github_failure, not_the_api, redirected
from assay.scaffold.url import PullRequestUrl

if TYPE_CHECKING:
    from github import Github

__all__ = ["GitHubPullRequest"]

T = TypeVar("T")

TIMEOUT_S = 15
RETRIES = 2
"""Retries of a refused connection or a 5xx answer (GET requests only); a read that times
out or breaks off is not retried."""
RETRY_BACKOFF_S = 0.5
"""urllib3 backoff factor between those retries; read when a client is made."""
PER_PAGE = 100
LISTED_FILES_CAP = 3000
"""GitHub lists at most this many files of a pull request."""
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
"""A full commit or blob id (SHA-1, or SHA-256)."""


class _NotTheApi(Exception):
    """An answer lacks a field the GitHub API always sends, or has it in another shape."""


class GitHubPullRequest:
    """The change of one pull request. Close it (or use `with`) to release connections."""

    def __init__(self, url: PullRequestUrl, *, access: ApiAccess) -> None:
        self.url = url
        self._access = access
        self._client = _client(access.api_url, access.token)
        self._repo = self._client.get_repo(url.full_name)  # lazy: no request
        self._change: Change | None = None
        self._patches: dict[str, str | None] = {}

    @classmethod
    def from_environment(
        cls, url: PullRequestUrl, environ: Mapping[str, str] = os.environ
    ) -> GitHubPullRequest:
        """The API and token the environment allows for `url` (see github_access.py)."""
        return cls(url, access=api_access(url, environ))

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
        from github import GithubException  # lazy: start-up (github only when used)

        with self._calls(f"{path} at {ref[:12]}"):
            try:
                found = self._repo.get_contents(path, ref=ref)
            except GithubException as exc:
                if exc.status == 404:
                    return Unavailable.not_found(ref)
                raise
            if isinstance(found, list):
                return Unavailable.not_a_file("directory")
            kind, size = _expect(found.type, str), _expect(found.size, int)
            if kind != "file":
                return Unavailable.not_a_file(kind)
            if max_bytes is not None and size > max_bytes:
                return Unavailable.too_large(size, max_bytes)
            return self._content(found.raw_data)

    def detected_license(self, ref: str) -> License | None:
        from github import GithubException  # lazy: start-up (github only when used)

        with self._calls(f"the license of {self.url.full_name} at {ref[:12]}"):
            try:
                _, data = self._client.requester.requestJsonAndCheck(
                    "GET", f"{self._repo.url}/license", parameters={"ref": ref}
                )
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise
            if not isinstance(data, dict):
                raise _NotTheApi
            return License(_expect(data.get("path"), str), self._content(data))

    def patch(self, file: ChangedFile) -> str | None:
        self.describe()
        return self._patches.get(file.path)

    # -- internals -------------------------------------------------------------------
    def _fetch_change(self) -> Change:
        number = self.url.number
        with self._calls(f"pull request {self.url.full_name}#{number}"):
            pull = self._repo.get_pull(number)
            title, body = _expect(pull.title, str), pull.body or ""
            base_sha, head_sha = _full_sha(pull.base), _full_sha(pull.head)
            changed_count = _expect(pull.changed_files, int)
            files = [self._changed_file(item) for item in pull.get_files()]
        warnings = [self._access.withheld] if self._access.withheld else []
        if changed_count > len(files):
            warnings.append(
                f"GitHub lists only the first {len(files)} of the {changed_count} files this "
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

    def _changed_file(self, item: Any) -> ChangedFile:
        path, status = _expect(item.filename, str), _expect(item.status, str)
        previous = _expect(item.previous_filename, str) if item.previous_filename else None
        # GitHub omits the patch of binary files and of very large diffs.
        self._patches[path] = item.patch or ("" if item.changes == 0 else None)
        return ChangedFile(status, path, previous)

    def _merge_base(self, base_sha: str, head_sha: str) -> tuple[str, tuple[str, ...]]:
        from github import GithubException  # lazy: start-up (github only when used)

        with self._calls(f"the comparison {base_sha[:12]}...{head_sha[:12]}"):
            try:
                return _full_sha(self._repo.compare(base_sha, head_sha).merge_base_commit), ()
            except GithubException as exc:
                if exc.status != 404:
                    raise
        return base_sha, (
            f"GitHub cannot compare {base_sha[:12]}...{head_sha[:12]} (404); "
            "capturing the base side at the PR's recorded base commit instead",
        )

    def _content(self, data: Mapping[str, Any]) -> bytes:
        """A contents-API answer's bytes; over 1 MB that API sends no content, the blob has it."""
        encoded = _expect(data.get("content") or "", str)
        if data.get("encoding") == "base64" and (encoded or not data.get("size")):
            return _base64(encoded)
        blob = self._repo.get_git_blob(_full_sha(data))
        content = _expect(blob.content, str)
        if blob.encoding == "base64":
            return _base64(content)
        return content.encode("utf-8")

    @contextmanager
    def _calls(self, what: str) -> Iterator[None]:
        # lazy: start-up (requests and github only when used)
        import requests
        from github import BadAttributeException, GithubException

        host = self._access.host
        what = printable(what)  # it names repository paths: one safe line in the message
        try:
            yield
        except (GithubException, requests.RequestException) as exc:
            hint = self._access.token_hint if self._access.token is None else None
            raise github_failure(
                exc, what=what, host=host, token_hint=hint, timeout_s=TIMEOUT_S
            ) from None
        except RuntimeError as exc:
            # PyGithub refuses a 301 to another scheme, host or the same path this way.
            if "redirected" not in str(exc):
                raise
            raise redirected(exc, what=what, host=host) from None
        except (
            _NotTheApi,
            BadAttributeException,
            json.JSONDecodeError,
            AssertionError,
            TypeError,
            AttributeError,
        ):
            # PyGithub raises the others for a field of the wrong type, a body that starts
            # like JSON but is not, a link in an answer that leaves the API, and a body of
            # the wrong shape (`null`, a list, an empty 302) where it expects an object.
            raise not_the_api(what=what, host=host) from None


def _expect(value: object, kind: type[T]) -> T:
    """`value`, when it has the type the GitHub API gives this field; else _NotTheApi."""
    if isinstance(value, kind):
        return value
    raise _NotTheApi


def _full_sha(part: Any) -> str:
    """The `sha` of a part of an answer (a PR's base or head, a commit, a file): a full id."""
    sha = part.get("sha") if isinstance(part, Mapping) else getattr(part, "sha", None)
    if not isinstance(sha, str) or _SHA.fullmatch(sha) is None:
        raise _NotTheApi
    return sha


def _base64(encoded: str) -> bytes:
    try:
        return base64.b64decode(encoded)
    except (binascii.Error, ValueError):
        raise _NotTheApi from None


def _client(api_url: str, token: str | None) -> Github:
    # lazy: start-up (github and urllib3 only when used)
    from github import Auth, Github
    from urllib3.util import Retry

    retry = Retry(
        total=RETRIES,
        read=False,  # a server too slow for TIMEOUT_S is reported at once, as a timeout
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
