"""Content routes for the GitHub fake: files by path and ref, blobs, the license, compare.

`add_contents_routes(fake)` adds them to a `FakeGitHub`. State lives in each repo's
`extra`:

- `trees`: `{ref: {path: bytes | Symlink}}`, the repository's files at each commit SHA
  (or branch name); fill it with `add_tree`, which also indexes the blobs;
- `blobs`: `{blob sha: bytes}`, keyed by the SHA git (and GitHub) gives the content;
- `merge_bases`: `{(base, head): sha}` for compare (default: the base itself);
- `license_path`: the file the license API reports (default: the first root file named
  like a license, as GitHub detects; None for a repository GitHub finds no license in).

Like GitHub, the contents API leaves `content` empty (encoding `none`) for files over
1 MB, which only the blobs API then serves, and answers 404 for paths and refs it lacks.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from tests.fakes.github import REPO, FakeGitHub, FakeRepo
from tests.fakes.loopback import Reply, Request

__all__ = [
    "CONTENTS_API_LIMIT",
    "Symlink",
    "add_contents_routes",
    "add_tree",
    "blob_sha",
    "pr_file",
]

CONTENTS_API_LIMIT = 1024 * 1024
_DETECT = object()
_LICENSE_LIKE = re.compile(r"(?i)(licen[cs]e|copying)([.-].*)?")
_NOT_FOUND = Reply(404, {"message": "Not Found", "documentation_url": "https://docs.github.com"})


@dataclass(frozen=True)
class Symlink:
    """A symlink in a fake tree (the contents API reports it as type `symlink`)."""

    target: str


def blob_sha(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def add_tree(
    fake: FakeGitHub, repository: str, ref: str, files: Mapping[str, bytes | str | Symlink]
) -> None:
    """The repository's files at `ref` (a commit SHA or a branch name)."""
    repo = fake.repos.get(repository.lower()) or fake.add_repo(repository)
    tree: dict[str, bytes | Symlink] = {}
    for path, content in files.items():
        value = content.encode() if isinstance(content, str) else content
        tree[path] = value
        if isinstance(value, bytes):
            repo.extra.setdefault("blobs", {})[blob_sha(value)] = value
    repo.extra.setdefault("trees", {})[ref] = tree


def pr_file(
    filename: str,
    status: str = "modified",
    *,
    previous_filename: str | None = None,
    patch: str | None = None,
    changes: int | None = None,
) -> dict[str, Any]:
    """One entry of `GET /pulls/{n}/files`, as GitHub shapes it."""
    lines = patch.splitlines() if patch else []
    additions = sum(1 for x in lines if x.startswith("+"))
    deletions = sum(1 for x in lines if x.startswith("-"))
    entry: dict[str, Any] = {
        "sha": blob_sha(filename.encode()),
        "filename": filename,
        "status": status,
        "additions": additions,
        "deletions": deletions,
        "changes": additions + deletions if changes is None else changes,
        "blob_url": f"https://github.com/blob/{filename}",
        "raw_url": f"https://github.com/raw/{filename}",
        "contents_url": f"https://api.github.com/contents/{filename}",
    }
    if patch is not None:
        entry["patch"] = patch
    if previous_filename is not None:
        entry["previous_filename"] = previous_filename
    return entry


def add_contents_routes(fake: FakeGitHub) -> None:
    fake.route("GET", REPO + r"/contents/(?P<path>.+)", lambda r: _contents(fake, r))
    fake.route("GET", REPO + r"/git/blobs/(?P<sha>[0-9a-f]{40})", lambda r: _blob(fake, r))
    fake.route("GET", REPO + r"/license", lambda r: _license(fake, r))
    fake.route("GET", REPO + r"/compare/(?P<basehead>.+)", lambda r: _compare(fake, r))


def _tree(fake: FakeGitHub, repo: FakeRepo, request: Request) -> dict[str, Any] | None:
    ref = request.query.get("ref", [repo.default_branch])[0]
    trees: dict[str, dict[str, Any]] = repo.extra.get("trees", {})
    return trees.get(ref)


def _contents(fake: FakeGitHub, request: Request) -> Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    tree = _tree(fake, repo, request)
    if tree is None:
        ref = request.query.get("ref", [""])[0]
        return Reply(404, {"message": f"No commit found for the ref {ref}"})
    path = unquote(request.params["path"]).strip("/")
    if path in tree:
        return Reply(200, _file_json(fake, repo, path, tree[path]))
    children = sorted({p[len(path) + 1 :].split("/")[0] for p in tree if p.startswith(path + "/")})
    if not children:
        return _NOT_FOUND
    listing = []
    for name in children:
        child = f"{path}/{name}"
        listing.append(
            {"name": name, "path": child, "type": "file" if child in tree else "dir", "size": 0}
        )
    return Reply(200, listing)


def _file_json(fake: FakeGitHub, repo: FakeRepo, path: str, value: bytes | Symlink) -> dict:
    url = f"{fake.url}/repos/{repo.full_name}/contents/{path}"
    common = {"name": path.rsplit("/", 1)[-1], "path": path, "url": url, "html_url": url}
    if isinstance(value, Symlink):
        target = value.target.encode()
        return {**common, "type": "symlink", "target": value.target, "size": len(target),
                "sha": blob_sha(target)}  # fmt: skip
    sha = blob_sha(value)
    large = len(value) > CONTENTS_API_LIMIT
    return {
        **common,
        "type": "file",
        "size": len(value),
        "sha": sha,
        "git_url": f"{fake.url}/repos/{repo.full_name}/git/blobs/{sha}",
        "download_url": f"{fake.url}/raw/{repo.full_name}/{path}",
        "encoding": "none" if large else "base64",
        "content": "" if large else _base64(value),
    }


def _blob(fake: FakeGitHub, request: Request) -> Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    sha = request.params["sha"]
    content = repo.extra.get("blobs", {}).get(sha)
    if content is None:
        return _NOT_FOUND
    return Reply(
        200,
        {
            "sha": sha,
            "node_id": f"B_{sha[:8]}",
            "size": len(content),
            "url": f"{fake.url}/repos/{repo.full_name}/git/blobs/{sha}",
            "content": _base64(content),
            "encoding": "base64",
        },
    )


def _license(fake: FakeGitHub, request: Request) -> Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    tree = _tree(fake, repo, request) or {}
    path = repo.extra.get("license_path", _DETECT)
    if path is _DETECT:
        names = sorted(p for p in tree if "/" not in p and _LICENSE_LIKE.fullmatch(p))
        path = names[0] if names else None
    if path is None or not isinstance(tree.get(path), bytes):
        return _NOT_FOUND
    body = _file_json(fake, repo, path, tree[path])
    body["license"] = {"key": "mit", "name": "MIT License", "spdx_id": "MIT", "url": None}
    return Reply(200, body)


def _compare(fake: FakeGitHub, request: Request) -> Reply:
    repo = fake.find_repo(request)
    if isinstance(repo, Reply):
        return repo
    base, sep, head = unquote(request.params["basehead"]).partition("...")
    trees = repo.extra.get("trees", {})
    if not sep or base not in trees or head not in trees:
        return _NOT_FOUND
    merge_base = repo.extra.get("merge_bases", {}).get((base, head), base)
    commit_url = f"{fake.url}/repos/{repo.full_name}/commits"
    return Reply(
        200,
        {
            "url": f"{fake.url}/repos/{repo.full_name}/compare/{base}...{head}",
            "status": "ahead",
            "ahead_by": 1,
            "behind_by": 0,
            "total_commits": 1,
            "base_commit": {"sha": base, "url": f"{commit_url}/{base}"},
            "merge_base_commit": {"sha": merge_base, "url": f"{commit_url}/{merge_base}"},
            "commits": [],
            "files": [],
        },
    )


def _base64(content: bytes) -> str:
    """Base64 wrapped at 60 characters, as GitHub sends it."""
    encoded = base64.b64encode(content).decode()
    if not encoded:
        return ""
    return "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60)) + "\n"
