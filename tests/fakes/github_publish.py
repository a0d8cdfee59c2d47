"""Publishing routes for the GitHub fake: PR (issue) comments and check runs.

`add_publish_routes(fake)` adds them to a `FakeGitHub`. State lives in each repo's
`extra`: `comments` (dicts as GitHub returns them, plus `issue_number`), `check_runs`
(plus `annotations` and `annotation_batches`, the count sent by each call) and
`permissions` (`{"pull_requests": "write", "checks": "write"}` by default; set one to
"read" to get GitHub's 403 "Resource not accessible by integration").

Like GitHub, the fake refuses comment bodies over 65,536 characters and more than 50
annotations in one request (422). Also like GitHub, a token with `pull_requests: write`
may edit *any* comment on the repository, whoever wrote it: telling its own comments from
look-alikes is the client's job. Comments the token creates are by `fake.login`.
"""

from __future__ import annotations

import itertools
from typing import Any

from tests.fakes.github import ACTIONS_BOT, REPO, FakeGitHub, FakeRepo
from tests.fakes.loopback import Reply, Request

__all__ = ["BOT_LOGIN", "add_comment", "add_publish_routes", "check_runs", "comments"]

BOT_LOGIN = ACTIONS_BOT
"""Who the fake's token acts as unless the FakeGitHub is given another `login`."""
MAX_COMMENT_CHARS = 65_536
MAX_ANNOTATIONS_PER_REQUEST = 50
_TIMESTAMP = "2024-01-01T00:00:00Z"
_ids = itertools.count(1001)

_FORBIDDEN = Reply(
    403,
    {
        "message": "Resource not accessible by integration",
        "documentation_url": "https://docs.github.com/rest",
    },
)


def comments(fake: FakeGitHub, repository: str) -> list[dict[str, Any]]:
    return _repo(fake, repository).extra.setdefault("comments", [])


def check_runs(fake: FakeGitHub, repository: str) -> list[dict[str, Any]]:
    return _repo(fake, repository).extra.setdefault("check_runs", [])


def add_comment(
    fake: FakeGitHub, repository: str, number: int, body: str, *, login: str = "octocat"
) -> dict[str, Any]:
    """A comment already on the PR (by default someone else's)."""
    repo = _repo(fake, repository)
    comment = _comment_json(fake, repo, number, body, login)
    comments(fake, repository).append(comment)
    return comment


def _repo(fake: FakeGitHub, repository: str) -> FakeRepo:
    return fake.repos.get(repository.lower()) or fake.add_repo(repository)


def _comment_json(
    fake: FakeGitHub, repo: FakeRepo, number: int, body: str, login: str
) -> dict[str, Any]:
    comment_id = next(_ids)
    base = f"{fake.url}/repos/{repo.full_name}"
    return {
        "id": comment_id,
        "node_id": f"IC_{comment_id}",
        "url": f"{base}/issues/comments/{comment_id}",
        "html_url": f"https://github.com/{repo.full_name}/pull/{number}#issuecomment-{comment_id}",
        "issue_url": f"{base}/issues/{number}",
        "body": body,
        "user": fake.user_json(login),
        "created_at": _TIMESTAMP,
        "updated_at": _TIMESTAMP,
        "author_association": "NONE",
        "issue_number": number,
    }


def add_publish_routes(fake: FakeGitHub) -> None:
    issue = REPO + r"/issues/(?P<number>\d+)"
    fake.route("GET", issue + "/comments", lambda r: _list_comments(fake, r))
    fake.route("POST", issue + "/comments", lambda r: _create_comment(fake, r))
    fake.route("PATCH", REPO + r"/issues/comments/(?P<id>\d+)", lambda r: _edit_comment(fake, r))
    fake.route("DELETE", REPO + r"/issues/comments/(?P<id>\d+)", lambda r: _delete_comment(fake, r))
    fake.route("POST", REPO + r"/check-runs", lambda r: _create_check_run(fake, r))
    fake.route("PATCH", REPO + r"/check-runs/(?P<id>\d+)", lambda r: _update_check_run(fake, r))
    fake.route("GET", REPO + r"/check-runs/(?P<id>\d+)", lambda r: _get_check_run(fake, r))


# -- access ------------------------------------------------------------------------------
def _writable(fake: FakeGitHub, request: Request, scope: str) -> FakeRepo | Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    if not request.headers.get("authorization"):
        return Reply(401, {"message": "Requires authentication"})
    permissions = repo.extra.get("permissions", {})
    if permissions.get(scope, "write") != "write":
        return _FORBIDDEN
    return repo


# -- comments ----------------------------------------------------------------------------
def _list_comments(fake: FakeGitHub, request: Request) -> Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    number = int(request.params["number"])
    mine = [c for c in repo.extra.get("comments", []) if c["issue_number"] == number]
    return fake.paginate(request, mine)


def _check_body(body: Any) -> Reply | None:
    if not isinstance(body, str) or not body:
        return Reply(422, {"message": "Validation Failed", "errors": [{"field": "body"}]})
    if len(body) > MAX_COMMENT_CHARS:
        return Reply(
            422, {"message": "Validation Failed: body is too long (maximum is 65536 characters)"}
        )
    return None


def _create_comment(fake: FakeGitHub, request: Request) -> Reply:
    repo = _writable(fake, request, "pull_requests")
    if isinstance(repo, Reply):
        return repo
    number = int(request.params["number"])
    if number not in repo.pulls:
        return Reply(404, {"message": "Not Found"})
    body = (request.json() or {}).get("body")
    invalid = _check_body(body)
    if invalid:
        return invalid
    comment = _comment_json(fake, repo, number, body, fake.login)
    repo.extra.setdefault("comments", []).append(comment)
    return Reply(201, comment)


def _delete_comment(fake: FakeGitHub, request: Request) -> Reply:
    repo = _writable(fake, request, "pull_requests")
    if isinstance(repo, Reply):
        return repo
    held = repo.extra.get("comments", [])
    comment_id = int(request.params["id"])
    kept = [c for c in held if c["id"] != comment_id]
    if len(kept) == len(held):
        return Reply(404, {"message": "Not Found"})
    repo.extra["comments"] = kept
    return Reply(204, raw=b"")


def _edit_comment(fake: FakeGitHub, request: Request) -> Reply:
    repo = _writable(fake, request, "pull_requests")
    if isinstance(repo, Reply):
        return repo
    comment_id = int(request.params["id"])
    found = next((c for c in repo.extra.get("comments", []) if c["id"] == comment_id), None)
    if found is None:
        return Reply(404, {"message": "Not Found"})
    body = (request.json() or {}).get("body")
    invalid = _check_body(body)
    if invalid:
        return invalid
    found["body"] = body
    found["updated_at"] = "2024-01-02T00:00:00Z"
    found.setdefault("edits", 0)
    found["edits"] += 1
    return Reply(200, found)


# -- check runs --------------------------------------------------------------------------
def _check_run_json(fake: FakeGitHub, repo: FakeRepo, run: dict[str, Any]) -> dict[str, Any]:
    public = {k: v for k, v in run.items() if k not in ("annotations", "annotation_batches")}
    public["output"] = {**run["output"], "annotations_count": len(run["annotations"])}
    return public


def _take_output(run: dict[str, Any], output: Any) -> Reply | None:
    if output is None:
        return None
    annotations = output.get("annotations") or []
    if len(annotations) > MAX_ANNOTATIONS_PER_REQUEST:
        return Reply(
            422, {"message": "Validation Failed: only 50 annotations are allowed per request"}
        )
    for annotation in annotations:
        missing = {"path", "start_line", "end_line", "annotation_level", "message"} - set(
            annotation
        )
        if missing:
            return Reply(
                422, {"message": f"Validation Failed: annotation misses {sorted(missing)}"}
            )
    run["output"] = {
        "title": output.get("title"),
        "summary": output.get("summary"),
        "text": output.get("text"),
    }
    run["annotations"].extend(annotations)
    run["annotation_batches"].append(len(annotations))
    return None


def _create_check_run(fake: FakeGitHub, request: Request) -> Reply:
    repo = _writable(fake, request, "checks")
    if isinstance(repo, Reply):
        return repo
    data = request.json() or {}
    if not data.get("name") or not data.get("head_sha"):
        return Reply(422, {"message": "Validation Failed: name and head_sha are required"})
    run_id = next(_ids)
    run: dict[str, Any] = {
        "id": run_id,
        "name": data["name"],
        "head_sha": data["head_sha"],
        "status": data.get("status", "queued"),
        "conclusion": data.get("conclusion"),
        "details_url": data.get("details_url"),
        "url": f"{fake.url}/repos/{repo.full_name}/check-runs/{run_id}",
        "html_url": f"https://github.com/{repo.full_name}/runs/{run_id}",
        "started_at": _TIMESTAMP,
        "completed_at": _TIMESTAMP if data.get("conclusion") else None,
        "output": {"title": None, "summary": None, "text": None},
        "annotations": [],
        "annotation_batches": [],
    }
    invalid = _take_output(run, data.get("output"))
    if invalid:
        return invalid
    repo.extra.setdefault("check_runs", []).append(run)
    return Reply(201, _check_run_json(fake, repo, run))


def _find_run(fake: FakeGitHub, request: Request, repo: FakeRepo) -> dict[str, Any] | None:
    run_id = int(request.params["id"])
    return next((r for r in repo.extra.get("check_runs", []) if r["id"] == run_id), None)


def _update_check_run(fake: FakeGitHub, request: Request) -> Reply:
    repo = _writable(fake, request, "checks")
    if isinstance(repo, Reply):
        return repo
    run = _find_run(fake, request, repo)
    if run is None:
        return Reply(404, {"message": "Not Found"})
    data = request.json() or {}
    for key in ("status", "conclusion", "details_url", "name"):
        if key in data:
            run[key] = data[key]
    invalid = _take_output(run, data.get("output"))
    if invalid:
        return invalid
    return Reply(200, _check_run_json(fake, repo, run))


def _get_check_run(fake: FakeGitHub, request: Request) -> Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    run = _find_run(fake, request, repo)
    return (
        Reply(200, _check_run_json(fake, repo, run))
        if run
        else Reply(404, {"message": "Not Found"})
    )
