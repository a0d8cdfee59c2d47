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


def test_git_does_not_stand_in_for_a_checkout_that_is_not_the_prs(tmp_path: Path) -> None:
    from assay.action.changed_files import foreign_checkout

    checkout, base = _git_repo(tmp_path)
    head = _git(checkout, "rev-parse", "HEAD")
    pull = _pull(7, base_sha=base)
    # pull_request_target checks out the base branch: its diff shows nothing of the PR.
    why = foreign_checkout("pull_request_target", pull, workspace=checkout, merge_sha=head)
    assert why is not None and "pull_request_target" in why
    listed = list_changed_files(pull, api=None, repository=REPO, workspace=checkout, not_the_pr=why)
    assert not listed.complete and listed.paths == ()
    assert listed.problems[-1] == f"git diff cannot stand in: {why}"
    # A pull_request checkout is the PR's merge commit (GITHUB_SHA) or its head.
    assert foreign_checkout("pull_request", pull, workspace=checkout, merge_sha=head) is None
    other = foreign_checkout("pull_request", pull, workspace=checkout, merge_sha="5" * 40)
    assert other is not None and "neither PR #7's head nor its merge commit" in other


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n[{}",  # IncompleteRead
        b"HTTP/1.1 OK-ish\r\n\r\n",  # BadStatusLine
        b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"\r\n[]",
    ],
)
def test_a_garbled_http_answer_is_an_api_failure(tmp_path: Path, answer: bytes) -> None:
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)

    def answer_all() -> None:
        try:
            while True:
                conn, _ = server.accept()
                with conn:
                    conn.recv(65536)
                    conn.sendall(answer)
        except OSError:
            return

    threading.Thread(target=answer_all, daemon=True).start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    try:
        listed = list_changed_files(
            _pull(7), api=RestReader(url, TOKEN), repository=REPO, workspace=tmp_path
        )
    finally:
        server.close()
    assert not listed.complete
    assert "the GitHub API could not list the PR's files" in listed.problems[0]
