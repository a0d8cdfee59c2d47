"""Earlier runs' artifacts, found and downloaded through the REST API: the one place both the
baseline (`baseline-report: auto`) and the run history take them from.

Only runs of the repository's default branch that executed its own code may serve: a
`push`, `workflow_dispatch` or `schedule` run whose head is that branch of this repository
(never a fork's, never a pull request's, whose artifacts hold whatever the PR's code
wrote). The archive is downloaded from the signed storage URL GitHub redirects to, without
the token, over https, and capped in size before it is read.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from assay.action.github_api import TIMEOUT_S

if TYPE_CHECKING:
    from github import Github
    from github.Artifact import Artifact
    from github.Repository import Repository

__all__ = [
    "TRUSTED_EVENTS",
    "ArtifactUnavailable",
    "TrustedArtifact",
    "download_artifact",
    "too_big",
    "trusted_artifacts",
]

TRUSTED_EVENTS = frozenset({"push", "workflow_dispatch", "schedule"})
"""Events whose runs execute the default branch's own code (no pull request's)."""
MAX_CANDIDATES = 100
"""Artifacts examined, newest first, before giving up (one page of the API)."""
_CHUNK_BYTES = 1024 * 1024
_REDIRECTS = (301, 302, 303, 307, 308)


class ArtifactUnavailable(Exception):
    """Why there is no usable artifact; shown as a warning's text."""


@dataclass(frozen=True)
class TrustedArtifact:
    artifact: Artifact
    run_id: int
    branch: str


def trusted_artifacts(
    repo: Repository, name: str, *, conclusions: Collection[str] = ("success",)
) -> Iterator[TrustedArtifact]:
    """The unexpired artifacts called `name` of trusted runs on the default branch whose
    conclusion is one of `conclusions`, newest first."""
    branch = repo.default_branch
    candidates = []
    for artifact in repo.get_artifacts(name=name):
        candidates.append(artifact)
        if len(candidates) >= MAX_CANDIDATES:
            break
    for artifact in sorted(candidates, key=lambda a: (a.created_at, a.id), reverse=True):
        run_id = _trusted_run(repo, artifact, branch, conclusions)
        if run_id is not None:
            yield TrustedArtifact(artifact, run_id, branch)


def _trusted_run(
    repo: Repository, artifact: Artifact, branch: str, conclusions: Collection[str]
) -> int | None:
    """The id of the artifact's run when that run may serve, else None."""
    if artifact.expired or artifact.workflow_run is None:
        return None
    summary = artifact.workflow_run
    if summary.head_branch != branch or summary.head_repository_id != summary.repository_id:
        return None
    run = repo.get_workflow_run(summary.id)
    if run.conclusion not in conclusions or run.event not in TRUSTED_EVENTS:
        return None
    return summary.id


def download_artifact(client: Github, url: str, *, allow_http: bool, max_bytes: int) -> bytes:
    """The archive behind `archive_download_url`, at most `max_bytes`.

    GitHub answers with a redirect to a signed URL on its blob storage, whose host
    PyGithub refuses to follow to; the storage URL is fetched directly, without the token
    (the signature is the credential, and the token must not reach another host).
    `allow_http` accepts a plain-http redirect (only when the API itself is reached over
    http, as with a loopback server in tests).
    """
    status, headers, _ = client.requester.requestBlob("GET", url)
    location = headers.get("location")
    if status not in _REDIRECTS or not location:
        detail = "the artifact has expired" if status == 410 else f"HTTP {status}"
        raise ArtifactUnavailable(f"could not download the artifact ({detail})")
    scheme = urlsplit(location).scheme
    if scheme != "https" and not (allow_http and scheme == "http"):
        raise ArtifactUnavailable(f"refusing to download the artifact over {scheme or 'no'}: URL")
    return _fetch_capped(location, max_bytes)


def _fetch_capped(url: str, max_bytes: int) -> bytes:
    import requests  # lazy: start-up (requests only when used)

    with requests.get(url, stream=True, timeout=TIMEOUT_S) as response:
        if response.status_code != 200:
            raise ArtifactUnavailable(f"the artifact storage answered HTTP {response.status_code}")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise ArtifactUnavailable(too_big("the artifact archive", max_bytes))
        received = bytearray()
        for chunk in response.iter_content(_CHUNK_BYTES):
            received += chunk
            if len(received) > max_bytes:
                raise ArtifactUnavailable(too_big("the artifact archive", max_bytes))
    return bytes(received)


def too_big(what: str, max_bytes: int) -> str:
    return f"{what} is larger than {max_bytes // (1024 * 1024)} MiB"
