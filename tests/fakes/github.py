"""A loopback fake of the GitHub REST endpoints assay calls, used through the real PyGithub.

This module holds the shared state (repos, pull requests and their files) and the
routes every user needs; other modules add theirs with a function taking the fake:
`github_publish.add_publish_routes(fake)` (comments, check runs, artifacts) and
`github_contents.add_contents_routes(fake)` (contents, blobs, license, commits).

The token acts as `login` (by default `github-actions[bot]`, as an Actions GITHUB_TOKEN
does). As on GitHub, who that is can be asked through GraphQL (`query { viewer { login }
}`, any token) or `GET /user` (a user's token only: an App installation token, the
GITHUB_TOKEN included, gets 403 "Resource not accessible by integration").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.loopback import LoopbackServer, Reply, Request

REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
ACTIONS_BOT = "github-actions[bot]"
"""Who an Actions GITHUB_TOKEN acts as."""
_VIEWER_QUERY = re.compile(r"\s*(?:query\s*)?\{\s*viewer\s*\{\s*login\s*\}\s*\}\s*")


@dataclass
class FakeRepo:
    owner: str
    name: str
    private: bool = False
    default_branch: str = "main"
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    pull_files: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    """Free space for route modules (contents by ref, comments, check runs...)."""

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class FakeGitHub(LoopbackServer):
    """State plus routes. `token` (when set) is the only accepted credential; it acts as `login`."""

    def __init__(
        self, *, token: str | None = None, max_files: int = 3000, login: str = ACTIONS_BOT
    ) -> None:
        super().__init__()
        self.token = token
        self.max_files = max_files
        self.login = login
        """Who the token acts as: the author of the comments it creates, the GraphQL viewer."""
        self.repos: dict[str, FakeRepo] = {}
        self.graphql_refusal: Reply | None = None
        """When set, GraphQL answers every query with it (a GraphQL outage, a token refused)."""
        self.route("POST", r"/graphql", self._graphql)
        self.route("GET", r"/user", self._get_user)
        self.route("GET", REPO, self._get_repo)
        self.route("GET", REPO + r"/pulls/(?P<number>\d+)", self._get_pull)
        self.route("GET", REPO + r"/pulls/(?P<number>\d+)/files", self._list_pull_files)

    # -- building state ------------------------------------------------------------
    def add_repo(self, full_name: str, **kwargs: Any) -> FakeRepo:
        owner, name = full_name.split("/")
        repo = FakeRepo(owner, name, **kwargs)
        self.repos[full_name.lower()] = repo
        return repo

    def add_pull(
        self,
        full_name: str,
        number: int,
        *,
        title: str = "A change",
        body: str = "",
        base_sha: str = "b" * 40,
        head_sha: str = "h" * 40,
        head_repo: str | None = None,
        labels: tuple[str, ...] = (),
        files: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        repo = self.repos.get(full_name.lower()) or self.add_repo(full_name)
        head_full = head_repo or full_name
        pull = {
            "number": number,
            "title": title,
            "body": body,
            "state": "open",
            "html_url": f"https://github.com/{full_name}/pull/{number}",
            "url": f"{self.url}/repos/{full_name}/pulls/{number}",
            "labels": [{"name": n} for n in labels],
            "base": {"ref": repo.default_branch, "sha": base_sha, "repo": self.repo_json(repo)},
            "head": {
                "ref": "feature",
                "sha": head_sha,
                "repo": {"full_name": head_full, "fork": head_full != full_name},
            },
            "changed_files": len(files or []),
        }
        repo.pulls[number] = pull
        repo.pull_files[number] = list(files or [])
        return pull

    def repo_json(self, repo: FakeRepo) -> dict[str, Any]:
        return {
            "id": abs(hash(repo.full_name)) % 10**8,
            "name": repo.name,
            "full_name": repo.full_name,
            "owner": {"login": repo.owner},
            "private": repo.private,
            "default_branch": repo.default_branch,
            "url": f"{self.url}/repos/{repo.full_name}",
        }

    def user_json(self, login: str) -> dict[str, Any]:
        """A user as GitHub shows it; an App's bot user (`slug[bot]`) has type Bot."""
        return {
            "login": login,
            "id": abs(hash(login)) % 10**6,
            "type": "Bot" if login.endswith("[bot]") else "User",
        }

    # -- helpers for route modules -----------------------------------------------------
    def authorized(self, request: Request) -> bool:
        if self.token is None:
            return True
        header = request.headers.get("authorization", "")
        return header.split(" ", 1)[-1] == self.token

    def find_repo(self, request: Request) -> FakeRepo | Reply:
        """The repo named in the path, or the reply GitHub gives (401 bad token, 404 hidden)."""
        header = request.headers.get("authorization")
        if header and not self.authorized(request):
            return Reply(401, {"message": "Bad credentials"})
        repo = self.repos.get(f"{request.params['owner']}/{request.params['repo']}".lower())
        if repo is None or (repo.private and not (header and self.authorized(request))):
            return Reply(404, {"message": "Not Found"})
        return repo

    def paginate(self, request: Request, items: list[Any]) -> Reply:
        per_page = int(request.query.get("per_page", ["30"])[0])
        page = int(request.query.get("page", ["1"])[0])
        start = (page - 1) * per_page
        chunk = items[start : start + per_page]
        headers = {}
        if start + per_page < len(items):
            nxt = f"{self.url}{request.path}?per_page={per_page}&page={page + 1}"
            last = (len(items) + per_page - 1) // per_page
            headers["link"] = (
                f'<{nxt}>; rel="next", '
                f'<{self.url}{request.path}?per_page={per_page}&page={last}>; rel="last"'
            )
        return Reply(200, chunk, headers=headers)

    def _authenticated(self, request: Request) -> Reply | None:
        """None for the right token; else GitHub's 401 (no token, or a wrong one)."""
        if not request.headers.get("authorization"):
            return Reply(401, {"message": "Requires authentication"})
        if not self.authorized(request):
            return Reply(401, {"message": "Bad credentials"})
        return None

    # -- routes ----------------------------------------------------------------------
    def _graphql(self, request: Request) -> Reply:
        refused = self._authenticated(request)
        if refused:
            return refused
        if self.graphql_refusal is not None:
            return self.graphql_refusal
        query = (request.json() or {}).get("query", "")
        if not _VIEWER_QUERY.fullmatch(query):
            # GitHub answers a query it cannot run with 200 and `errors`.
            return Reply(200, {"errors": [{"message": "the fake only knows `viewer { login }`"}]})
        return Reply(200, {"data": {"viewer": {"login": self.login}}})

    def _get_user(self, request: Request) -> Reply:
        refused = self._authenticated(request)
        if refused:
            return refused
        if self.login.endswith("[bot]"):  # an App installation token has no user
            return Reply(403, {"message": "Resource not accessible by integration"})
        return Reply(200, self.user_json(self.login))

    def _get_repo(self, request: Request) -> Reply:
        repo = self.find_repo(request)
        return repo if isinstance(repo, Reply) else Reply(200, self.repo_json(repo))

    def _get_pull(self, request: Request) -> Reply:
        repo = self.find_repo(request)
        if isinstance(repo, Reply):
            return repo
        pull = repo.pulls.get(int(request.params["number"]))
        return Reply(200, pull) if pull else Reply(404, {"message": "Not Found"})

    def _list_pull_files(self, request: Request) -> Reply:
        repo = self.find_repo(request)
        if isinstance(repo, Reply):
            return repo
        number = int(request.params["number"])
        if number not in repo.pulls:
            return Reply(404, {"message": "Not Found"})
        # GitHub lists at most 3000 files of a pull request.
        return self.paginate(request, repo.pull_files[number][: self.max_files])


def rate_limited(reset_epoch: int = 2_000_000_000) -> Reply:
    """The 403 GitHub sends when the primary rate limit is exhausted."""
    return Reply(
        403,
        {"message": "API rate limit exceeded", "documentation_url": "https://docs.github.com/rest"},
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset_epoch)},
    )
