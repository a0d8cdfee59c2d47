"""PR files through the stdlib REST reader against the fake (paginated, capped); git fallback."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.action import rest
from assay.action.changed_files import MAX_PR_FILES, list_changed_files
from assay.action.event import PullRequestRef
from assay.action.rest import RestReader
from tests.fakes.github import FakeGitHub
from tests.fakes.loopback import Reply

REPO = "acme/widgets"
TOKEN = "ghs_fake_token"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        server.add_repo(REPO)
        yield server  # type: ignore[misc]


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rest, "BACKOFF_S", 0.0)


def _files(names: list[str]) -> list[dict[str, object]]:
    return [{"filename": n, "status": "modified", "sha": "0" * 40} for n in names]


def _pull(
    number: int, *, base_sha: str = "1" * 40, changed_files: int | None = None
) -> PullRequestRef:
    return PullRequestRef(
        number=number,
        title="t",
        labels=(),
        base_repo=REPO,
        head_repo=REPO,
        base_sha=base_sha,
        head_sha="2" * 40,
        changed_files=changed_files,
    )


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _git_repo(tmp_path: Path) -> tuple[Path, str]:
    """A checkout whose HEAD changes evals/new.yaml and src/app.py since the returned base."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("hello\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    (repo / "evals").mkdir()
    (repo / "evals" / "new.yaml").write_text("skill: x\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print(1)\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "head")
    return repo, base


def test_lists_every_page_and_renamed_files(fake: FakeGitHub, tmp_path: Path) -> None:
    names = [f"src/f{i}.py" for i in range(250)]
    files = _files(names)
    files[-1]["previous_filename"] = "evals/old.yaml"
    fake.add_pull(REPO, 7, files=files)
    listed = list_changed_files(
        _pull(7),
        api=RestReader(fake.url, TOKEN),
        repository=REPO,
        workspace=tmp_path,
    )
    assert listed.complete and listed.source == "GitHub API" and listed.problems == ()
    assert listed.paths[:250] == (*names[:249], names[249]) and listed.paths[-1] == "evals/old.yaml"
    assert fake.count(rf"/repos/{REPO}/pulls/7/files", "GET") == 3  # 100 per page


def test_capped_listing_warns_and_falls_back_to_git(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.add_pull(REPO, 9, files=_files([f"src/f{i}.py" for i in range(MAX_PR_FILES + 100)]))
    api = RestReader(fake.url, TOKEN)

    listed = list_changed_files(_pull(9), api=api, repository=REPO, workspace=tmp_path)
    assert not listed.complete and len(listed.paths) == MAX_PR_FILES
    assert "changes 3100 files; the GitHub API lists only the first 3000" in listed.problems[0]
    assert "git diff" in listed.problems[1]

    checkout, base = _git_repo(tmp_path)
    listed = list_changed_files(
        _pull(9, base_sha=base), api=api, repository=REPO, workspace=checkout
    )
    assert listed.complete and listed.source == "git diff"
    assert sorted(listed.paths) == ["evals/new.yaml", "src/app.py"]
    assert "lists only the first 3000" in listed.problems[0]


def test_api_failure_falls_back_to_git(fake: FakeGitHub, tmp_path: Path) -> None:
    checkout, base = _git_repo(tmp_path)
    fake.add_pull(REPO, 7, files=_files(["src/x.py"]))
    fake.inject(Reply(500, {"message": "boom"}), path=rf"/repos/{REPO}/pulls/7/files", times=10)
    listed = list_changed_files(
        _pull(7, base_sha=base),
        api=RestReader(fake.url, TOKEN),
        repository=REPO,
        workspace=checkout,
    )
    assert listed.complete and listed.source == "git diff"
    assert "the GitHub API could not list the PR's files" in listed.problems[0]


def test_no_token_uses_git_and_nothing_works_says_why(tmp_path: Path) -> None:
    checkout, base = _git_repo(tmp_path)
    listed = list_changed_files(
        _pull(7, base_sha=base), api=None, repository=REPO, workspace=checkout
    )
    assert listed.complete and "evals/new.yaml" in listed.paths
    assert listed.problems == ("no github-token to list the PR's files",)

    # A shallow checkout without the base commit: git cannot answer either.
    listed = list_changed_files(
        _pull(7, base_sha="3" * 40), api=None, repository=REPO, workspace=checkout
    )
    assert not listed.complete and listed.paths == ()
    assert "fetch-depth: 0" in listed.problems[-1]


def test_git_fallback_refuses_a_base_that_is_not_a_sha(tmp_path: Path) -> None:
    checkout, _ = _git_repo(tmp_path)
    listed = list_changed_files(
        _pull(7, base_sha="--output=/tmp/pwned"), api=None, repository=REPO, workspace=checkout
    )
    assert not listed.complete
    assert "no usable base commit" in listed.problems[-1]
    assert not Path("/tmp/pwned").exists()


def test_a_redirect_is_followed_with_the_token_only_within_the_api(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    fake.add_pull(REPO, 7, files=_files(["evals/x.yaml"]))
    fake.repos[REPO].private = True  # answers 404 without the token
    # A renamed repository: GitHub answers 301 to the same API, which still needs the token.
    fake.inject(
        Reply(301, headers={"Location": f"{fake.url}/repos/{REPO}/pulls/7/files?per_page=100"}),
        path=r"/repos/acme/old-name/pulls/7/files",
    )
    listed = list_changed_files(
        _pull(7), api=RestReader(fake.url, TOKEN), repository="acme/old-name", workspace=tmp_path
    )
    assert listed.complete and listed.paths == ("evals/x.yaml",)

    with FakeGitHub() as elsewhere:
        fake.inject(
            Reply(302, headers={"Location": f"{elsewhere.url}/steal"}),
            path=rf"/repos/{REPO}/pulls/7/files",
        )
        listed = list_changed_files(
            _pull(7), api=RestReader(fake.url, TOKEN), repository=REPO, workspace=tmp_path
        )
        assert elsewhere.count() == 0  # never asked, so never handed the token
    assert not listed.complete
    assert "refusing a redirect to 127.0.0.1:" in listed.problems[0]


def test_at_the_cap_the_payloads_count_stands_in_for_an_unanswered_pull(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    fake.add_pull(REPO, 9, files=_files([f"src/f{i}.py" for i in range(MAX_PR_FILES + 5)]))
    fake.inject(Reply(500, {"message": "boom"}), path=rf"/repos/{REPO}/pulls/9$", times=10)
    listed = list_changed_files(
        _pull(9, changed_files=4000), api=RestReader(fake.url, TOKEN), repository=REPO,
        workspace=tmp_path,
    )  # fmt: skip
    assert len(listed.paths) == MAX_PR_FILES and not listed.complete
    assert "changes 4000 files; the GitHub API lists only the first 3000" in listed.problems[0]
