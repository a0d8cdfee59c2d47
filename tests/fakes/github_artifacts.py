"""Actions artifact routes for the GitHub fake: list artifacts, their workflow runs, downloads.

`add_artifact_routes(fake)` adds them to a `FakeGitHub`; `add_workflow_run` and
`add_artifact` build the state (kept in each repo's `extra` as `workflow_runs` and
`artifacts`). As on GitHub:

- `GET /repos/{o}/{r}/actions/artifacts?name=N` lists the artifacts called N, newest
  first, as `{"total_count", "artifacts": [...]}`, each with a `workflow_run` summary
  (`id`, `repository_id`, `head_repository_id`, `head_branch`, `head_sha`);
- `GET /repos/{o}/{r}/actions/runs/{id}` returns the run (`event`, `conclusion`, ...);
- `GET /repos/{o}/{r}/actions/artifacts/{id}/zip` answers `302 Found` with a signed,
  short-lived URL on "blob storage" (here a second route of the same server) and
  `410 Gone` for an expired artifact. Blob storage serves the zip only for the right
  signature and refuses any request carrying an `Authorization` header, so a client that
  forwards its GitHub token to storage fails the test instead of leaking the token.

`blob_downloads(fake)` counts the zip downloads storage served.
"""

from __future__ import annotations

import io
import itertools
import zipfile
from pathlib import Path
from typing import Any

from tests.fakes.github import REPO, FakeGitHub, FakeRepo
from tests.fakes.loopback import Reply, Request

__all__ = [
    "add_artifact",
    "add_artifact_routes",
    "add_workflow_run",
    "blob_downloads",
    "zip_of",
]

_ids = itertools.count(9001)
_FORK_REPOSITORY_ID = 777
_PER_PAGE_DEFAULT = 30


def zip_of(files: dict[str, bytes | str]) -> bytes:
    """A zip archive holding `files` (name -> content), as upload-artifact builds them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def zip_of_directory(directory: Path) -> bytes:
    """The directory as upload-artifact zips it: its files at the top of the archive."""
    return zip_of(
        {
            path.relative_to(directory).as_posix(): path.read_bytes()
            for path in sorted(directory.rglob("*"))
            if path.is_file()
        }
    )


def _repo(fake: FakeGitHub, repository: str) -> FakeRepo:
    return fake.repos.get(repository.lower()) or fake.add_repo(repository)


def _repository_id(repo: FakeRepo) -> int:
    return abs(hash(repo.full_name)) % 10**8


def add_workflow_run(
    fake: FakeGitHub,
    repository: str,
    *,
    head_branch: str = "main",
    event: str = "push",
    conclusion: str | None = "success",
    from_fork: bool = False,
    head_sha: str = "a" * 40,
) -> dict[str, Any]:
    """A finished (or, with conclusion None, still running) workflow run."""
    repo = _repo(fake, repository)
    run_id = next(_ids)
    head_repo = (
        {"id": _FORK_REPOSITORY_ID, "full_name": f"mallory/{repo.name}"}
        if from_fork
        else {"id": _repository_id(repo), "full_name": repo.full_name}
    )
    run = {
        "id": run_id,
        "name": "Evals",
        "head_branch": head_branch,
        "head_sha": head_sha,
        "event": event,
        "status": "completed" if conclusion else "in_progress",
        "conclusion": conclusion,
        "run_number": run_id - 9000,
        "url": f"{fake.url}/repos/{repo.full_name}/actions/runs/{run_id}",
        "html_url": f"https://github.com/{repo.full_name}/actions/runs/{run_id}",
        "repository": fake.repo_json(repo),
        "head_repository": head_repo,
        "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:10:00Z",
    }
    repo.extra.setdefault("workflow_runs", {})[run_id] = run
    return run


def add_artifact(
    fake: FakeGitHub,
    repository: str,
    *,
    run: dict[str, Any],
    data: bytes,
    name: str = "assay-report",
    expired: bool = False,
    created_at: str = "2024-01-01T00:10:00Z",
) -> dict[str, Any]:
    """An artifact of `run` whose zip archive is `data`."""
    repo = _repo(fake, repository)
    artifact_id = next(_ids)
    base = f"{fake.url}/repos/{repo.full_name}/actions/artifacts/{artifact_id}"
    artifact = {
        "id": artifact_id,
        "node_id": f"MDg6QXJ0aWZhY3Q{artifact_id}",
        "name": name,
        "size_in_bytes": len(data),
        "url": base,
        "archive_download_url": f"{base}/zip",
        "expired": expired,
        "created_at": created_at,
        "updated_at": created_at,
        "expires_at": "2099-01-01T00:00:00Z",
        "workflow_run": {
            "id": run["id"],
            "repository_id": _repository_id(repo),
            "head_repository_id": run["head_repository"]["id"],
            "head_branch": run["head_branch"],
            "head_sha": run["head_sha"],
        },
    }
    repo.extra.setdefault("artifacts", []).append(artifact)
    repo.extra.setdefault("artifact_data", {})[artifact_id] = data
    return artifact


def blob_downloads(fake: FakeGitHub) -> int:
    return fake.count(r"/blob-storage/\d+\.zip", "GET")


def add_artifact_routes(fake: FakeGitHub) -> None:
    fake.route("GET", REPO + r"/actions/artifacts", lambda r: _list_artifacts(fake, r))
    fake.route("GET", REPO + r"/actions/runs/(?P<run_id>\d+)", lambda r: _get_run(fake, r))
    fake.route(
        "GET",
        REPO + r"/actions/artifacts/(?P<artifact_id>\d+)/zip",
        lambda r: _redirect_to_storage(fake, r),
    )
    fake.route("GET", r"/blob-storage/(?P<artifact_id>\d+)\.zip", lambda r: _serve_blob(fake, r))


def _list_artifacts(fake: FakeGitHub, request: Request) -> Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    wanted = request.query.get("name", [None])[0]
    found = [a for a in repo.extra.get("artifacts", []) if wanted is None or a["name"] == wanted]
    found.sort(key=lambda a: (a["created_at"], a["id"]), reverse=True)
    per_page = int(request.query.get("per_page", [str(_PER_PAGE_DEFAULT)])[0])
    page = int(request.query.get("page", ["1"])[0])
    chunk = found[(page - 1) * per_page : page * per_page]
    headers = {}
    if page * per_page < len(found):
        query = f"per_page={per_page}&page={page + 1}" + (f"&name={wanted}" if wanted else "")
        headers["link"] = f'<{fake.url}{request.path}?{query}>; rel="next"'
    return Reply(200, {"total_count": len(found), "artifacts": chunk}, headers=headers)


def _get_run(fake: FakeGitHub, request: Request) -> Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    run = repo.extra.get("workflow_runs", {}).get(int(request.params["run_id"]))
    return Reply(200, run) if run else Reply(404, {"message": "Not Found"})


def _signature(artifact_id: int) -> str:
    return f"sig{artifact_id * 7919 % 100003}"


def _redirect_to_storage(fake: FakeGitHub, request: Request) -> Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    artifact_id = int(request.params["artifact_id"])
    artifact = next((a for a in repo.extra.get("artifacts", []) if a["id"] == artifact_id), None)
    if artifact is None:
        return Reply(404, {"message": "Not Found"})
    if artifact["expired"]:
        return Reply(410, {"message": "Artifact has expired"})
    location = f"{fake.url}/blob-storage/{artifact_id}.zip?sig={_signature(artifact_id)}"
    return Reply(302, None, headers={"location": location})


def _serve_blob(fake: FakeGitHub, request: Request) -> Reply:
    if "authorization" in request.headers:
        return Reply(400, {"message": "storage refuses requests carrying a GitHub token"})
    artifact_id = int(request.params["artifact_id"])
    if request.query.get("sig", [""])[0] != _signature(artifact_id):
        return Reply(403, {"message": "signature mismatch"})
    for repo in fake.repos.values():
        data = repo.extra.get("artifact_data", {}).get(artifact_id)
        if data is not None:
            return Reply(200, raw=data, headers={"content-type": "application/zip"})
    return Reply(404, {"message": "BlobNotFound"})
