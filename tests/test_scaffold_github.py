"""`assay scaffold PR_URL`: a pull request on the GitHub fake, through the real PyGithub."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from assay.scaffold import github_source
from tests.fakes.github import rate_limited
from tests.fakes.github_contents import Symlink, add_tree, pr_file
from tests.fakes.loopback import Reply
from tests.test_scaffold_helpers import (
    BASE_SHA,
    HEAD_SHA,
    LICENSE_TEXT,
    PR_URL,
    REPOSITORY,
    SIZE_CAP,
    TITLE,
    ServedFiles,
    mixed_change,
    pull_from_repo,
    run_cli,
    serving,
    simple_pull,
    snapshot,
    tree_at,
)

NAME = "fix-replay-delete-accepts-project-read-scope"
FIXTURES = f"fixtures/{NAME}/github/{REPOSITORY}"


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(github_source, "RETRY_BACKOFF_S", 0)


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, str, str]:
    base, head = mixed_change(tmp_path / "clone")
    return tmp_path / "clone", base, head


def _scaffold(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(
        capsys, "scaffold", PR_URL, "--root", str(root), "--max-file-size", str(SIZE_CAP), *extra
    )


def _scenario(root: Path, name: str = NAME, category: str = "security-review") -> dict:
    return json.loads((root / category / f"{name}.json").read_text())


@pytest.mark.parametrize(
    ("side", "captured", "skipped"),
    [
        (
            "base",
            {"src/app.py", "src/old_name.py", "src/gone.py"},
            {
                "src/added.py": "added by the change: not on the base side",
                "assets/logo.png": "binary content (a NUL byte, or not valid UTF-8)",
                "data/big.txt": "2061 bytes, over the 1000-byte size cap (--max-file-size)",
            },
        ),
        (
            "head",
            {"src/app.py", "src/new_name.py", "src/added.py"},
            {
                "src/gone.py": "removed by the change: not on the head side",
                "assets/logo.png": "binary content (a NUL byte, or not valid UTF-8)",
                "data/big.txt": "2061 bytes, over the 1000-byte size cap (--max-file-size)",
            },
        ),
    ],
)
def test_each_side_captures_its_files_and_records_every_skip(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    clone: tuple[Path, str, str],
    side: str,
    captured: set[str],
    skipped: dict[str, str],
) -> None:
    repo, base, head = clone
    sha = base if side == "base" else head
    root = tmp_path / "evals"
    with serving(monkeypatch) as fake:
        pull_from_repo(fake, repo, base, head, body="Fixes it.\n" + "x" * 10_000)
        code, out, err = _scaffold(capsys, root, "--side", side)

    assert (code, err) == (0, "")
    source_tree = tree_at(repo, sha)
    fixtures = {p: c for p, c in snapshot(root / FIXTURES).items()}
    assert fixtures == {p: source_tree[p] for p in captured | {"LICENSE"}}
    scenario = _scenario(root)
    assert scenario["given"] == TITLE
    assert scenario["files"] == [f"{FIXTURES}/{p}" for p in sorted(captured)]
    assert scenario["supporting_files"] == [f"{FIXTURES}/LICENSE"]
    assert scenario["should_find"][0]["finding"].startswith("TODO:")
    assert scenario["should_not_find"] == []
    notes = scenario["notes"]
    assert notes["source"] == PR_URL
    assert notes["repository"] == REPOSITORY
    assert (notes["source_ref"], notes["side"]) == (sha, side)
    assert {s["path"]: s["reason"] for s in notes["skipped_files"]} == skipped
    assert {f["sourcePath"] for f in notes["source_files"]} == captured | {"LICENSE"}
    assert all(f["path"] == f"{FIXTURES}/{f['sourcePath']}" for f in notes["source_files"])
    assert notes["body"].startswith("Fixes it.") and len(notes["body"]) < 4100
    assert notes["body"].endswith("[... truncated by assay scaffold]")
    for path, reason in skipped.items():
        assert f"  {path}: {reason}" in out
    assert f"assay validate {root}/security-review/{NAME}.json" in out


def test_a_renamed_file_is_read_by_its_previous_name_on_the_base_side(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    clone: tuple[Path, str, str],
) -> None:
    repo, base, head = clone
    with serving(monkeypatch) as fake:
        pull_from_repo(fake, repo, base, head)
        assert _scaffold(capsys, tmp_path / "evals")[0] == 0
    contents = [r for r in fake.requests if "/contents/" in r.path]
    asked = {(r.path.split("/contents/")[1], r.query["ref"][0]) for r in contents}
    assert ("src/old_name.py", base) in asked
    assert ("src/new_name.py", base) not in asked
    assert not any(p == "src/added.py" for p, _ in asked)  # added files are never fetched


def test_a_file_over_one_megabyte_comes_through_the_blobs_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    big = ("# generated\n" + "value = 1\n" * 130_000).encode()
    assert len(big) > 1024 * 1024
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": LICENSE_TEXT, "src/app.py": big})
        code, _, err = run_cli(
            capsys, "scaffold", PR_URL, "--root", str(tmp_path), "--max-file-size", "2000000"
        )
    assert (code, err) == (0, "")
    assert (tmp_path / FIXTURES / "src/app.py").read_bytes() == big
    assert fake.count(r".*/git/blobs/[0-9a-f]{40}") == 1


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        ({"COPYING": "gpl", "LICENSE.txt": "txt", "LICENCE": "uk"}, "LICENSE.txt"),
        ({"COPYING.md": "gpl md", "LICENCE.md": "uk md"}, "LICENCE.md"),
        ({"COPYING": "gpl", "docs/LICENSE": "not the root one"}, "COPYING"),
        ({"license.rst": "found by GitHub's detection"}, "license.rst"),
    ],
)
def test_the_license_is_the_first_candidate_name_then_the_license_api(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tree: dict[str, str],
    expected: str,
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"src/app.py": "old\n", **tree})
        code, _, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))
    assert (code, err) == (0, "")
    assert (tmp_path / FIXTURES / expected).read_text() == tree[expected]
    assert _scenario(tmp_path)["supporting_files"] == [f"{FIXTURES}/{expected}"]
    used_api = fake.count(rf"/repos/{REPOSITORY}/license") == 1
    assert used_api == (expected == "license.rst")


def test_a_license_the_change_touches_is_a_fixture_not_a_supporting_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(monkeypatch) as fake:
        files = [pr_file("LICENSE", patch="@@ -1 +1 @@\n-MIT\n+MIT (2025)")]
        simple_pull(fake, {"LICENSE": "MIT\n"}, pr_files=files)
        assert run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))[0] == 0
    scenario = _scenario(tmp_path)
    assert scenario["files"] == [f"{FIXTURES}/LICENSE"]
    assert scenario["supporting_files"] == []


def test_no_license_is_an_error_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evals"
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"src/app.py": "old\n", "docs/LICENSE": "not at the root\n"})
        code, out, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(root))
    assert code == 2
    assert f"no license file found in {REPOSITORY} at bbbbbbbbbbbb" in err
    assert "LICENSE, LICENSE.md, LICENSE.txt, LICENCE, LICENCE.md, COPYING, COPYING.md" in err
    assert not root.exists() and out == ""


def test_symlinks_directories_and_missing_content_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(monkeypatch) as fake:
        files = [
            pr_file("src/app.py", patch="@@ -1 +1 @@\n-old\n+new"),
            pr_file("src/link.py", patch="@@ -1 +1 @@\n-a\n+b"),
            pr_file("src/vanished.py", patch="@@ -1 +1 @@\n-a\n+b"),
            pr_file("src/pkg", patch="@@ -1 +1 @@\n-a\n+b"),
        ]
        tree: ServedFiles = {
            "LICENSE": "MIT\n",
            "src/app.py": "old\n",
            "src/link.py": Symlink("app.py"),
            "src/pkg/__init__.py": "",
        }
        simple_pull(fake, tree, pr_files=files)
        assert run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))[0] == 0
    skipped = {s["path"]: s["reason"] for s in _scenario(tmp_path)["notes"]["skipped_files"]}
    assert skipped == {
        "src/link.py": "a symlink, not a regular file",
        "src/vanished.py": "content not available at bbbbbbbbbbbb (404)",
        "src/pkg": "a directory, not a regular file",
    }


def test_a_truncated_file_list_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [pr_file(f"src/m{i}.py", patch="@@ -1 +1 @@\n-a\n+b") for i in range(5)]
    tree = {"LICENSE": "MIT\n", **{f"src/m{i}.py": "a\n" for i in range(5)}}
    with serving(monkeypatch, max_files=3) as fake:
        simple_pull(fake, tree, pr_files=files)
        code, _, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))
    assert code == 0
    assert "warning: GitHub lists only the first 3 of the 5 files" in err
    assert len(_scenario(tmp_path)["files"]) == 3


@pytest.mark.slow
def test_files_are_listed_across_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    count = github_source.PER_PAGE + 5
    files = [pr_file(f"src/m{i:03}.py", patch="@@ -1 +1 @@\n-a\n+b") for i in range(count)]
    tree = {"LICENSE": "MIT\n", **{f"src/m{i:03}.py": "a\n" for i in range(count)}}
    with serving(monkeypatch) as fake:
        simple_pull(fake, tree, pr_files=files)
        assert run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))[0] == 0
    assert len(_scenario(tmp_path)["files"]) == count
    assert fake.count(rf"/repos/{REPOSITORY}/pulls/7/files") == 2


def test_the_base_side_is_the_merge_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    merge_base = "d" * 40
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "moved on\n"})
        add_tree(fake, REPOSITORY, merge_base, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        fake.repos[REPOSITORY].extra["merge_bases"] = {(BASE_SHA, HEAD_SHA): merge_base}
        assert run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))[0] == 0
    assert (tmp_path / FIXTURES / "src/app.py").read_text() == "old\n"
    assert _scenario(tmp_path)["notes"]["source_ref"] == merge_base


def test_a_private_repository_works_with_a_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GH_TOKEN", "s3cret-token")
    with serving(monkeypatch, token="s3cret-token") as fake:
        fake.add_repo(REPOSITORY, private=True)
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        code, out, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))
    assert (code, err) == (0, "")
    assert all(r.headers["authorization"] == "token s3cret-token" for r in fake.requests)
    assert "s3cret-token" not in out + json.dumps(_scenario(tmp_path))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing-pr", "pull request acme/widgets#7 not found (404): check the URL, or the "
         "repository is private: a token may be needed, set GITHUB_TOKEN"),
        ("private", "a token may be needed, set GITHUB_TOKEN (or GH_TOKEN)"),
        ("bad-token", "rejected the token (401 Bad credentials): check GITHUB_TOKEN"),
        ("rate-limited", "GitHub API rate limit exceeded; it resets at "),
        ("rate-limited-429", "GitHub API rate limit exceeded; it resets at "),
        ("rate-limited-mid-capture", "GitHub API rate limit exceeded; it resets at "),
        ("server-error", "GitHub answered 500 for src/app.py at bbbbbbbbbbbb"),
        ("unreachable", "could not reach 127.0.0.1:"),
        ("dropped", "could not reach 127.0.0.1:"),
        ("nothing-usable", "no usable files on the base side (try --side head), nothing was "
         "written; every file was skipped (src/new.py: added by the change: not on the base "
         "side)"),
    ],
)  # fmt: skip
def test_failures_exit_2_with_one_clear_line_and_write_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setup: str,
    message: str,
) -> None:
    reset = int(time.time()) + 600  # "in 10 minutes" while this test runs
    root = tmp_path / "evals"
    (root / "security-review").mkdir(parents=True)
    (root / "security-review" / "existing.json").write_text("{}\n")
    before = snapshot(root)
    with serving(monkeypatch, token="right" if setup == "bad-token" else None) as fake:
        if setup != "missing-pr":
            files = [pr_file("src/new.py", "added", patch="@@ -0,0 +1 @@\n+x")]
            simple_pull(
                fake,
                {"LICENSE": "MIT\n", "src/app.py": "old\n"},
                pr_files=files if setup == "nothing-usable" else None,
            )
        if setup == "private":
            fake.repos[REPOSITORY].private = True
        elif setup == "bad-token":
            monkeypatch.setenv("GITHUB_TOKEN", "wrong")
        elif setup == "rate-limited":
            fake.inject(rate_limited(reset), path=r".*/pulls/7")
        elif setup == "rate-limited-429":
            limited = rate_limited(reset)
            fake.inject(Reply(429, limited.body, headers=limited.headers), path=r".*/pulls/7")
        elif setup == "rate-limited-mid-capture":
            fake.inject(rate_limited(reset), path=r".*/license")
            fake.inject(rate_limited(reset), path=r".*/contents/LICENSE.*", times=7)
        elif setup == "server-error":
            fake.inject(Reply(500, {"message": "boom"}), path=r".*/contents/src/app.py", times=3)
        elif setup == "unreachable":
            monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:{_free_port()}")
        elif setup == "dropped":
            fake.inject(Reply(drop=True), times=3)
        code, out, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(root))
    assert code == 2
    assert message in err
    assert err.startswith("assay: error: ") and err.count("\n") == 1
    assert snapshot(root) == before
    if setup.startswith("rate-limited"):
        assert "(local time), in 10 minutes; set GITHUB_TOKEN (or GH_TOKEN)" in err
    if setup == "server-error":  # one request and two retries
        assert fake.count(rf"/repos/{REPOSITORY}/contents/src/app.py") == 3


@pytest.mark.parametrize(
    "suffix",
    ["", "/", "/files", "/files?diff=split", "/commits", "/changes#diff-1a2b", "?w=1#top"],
)
def test_pull_request_url_variants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        code, _, err = run_cli(capsys, "scaffold", PR_URL + suffix, "--root", str(tmp_path))
    assert (code, err) == (0, "")
    assert _scenario(tmp_path)["notes"]["source"] == PR_URL


@pytest.mark.parametrize(
    "option",
    [
        ("--name", "has space"),
        ("--name", ".."),
        ("--name", "a/b"),
        ("--name", "."),
        ("--category", "../outside"),
        ("--category", "sec review"),
        ("--category", ".."),
    ],
)
def test_bad_names_and_categories_are_refused_before_any_request(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: tuple[str, str],
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        code, _, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path), *option)
    assert code == 2
    assert f"{option[0]} {option[1]!r} is not allowed: use letters, digits" in err
    assert fake.requests == []
    assert snapshot(tmp_path) == {}


def test_name_and_category_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        argv = ("--root", str(tmp_path), "--name", "authz.scope_1", "--category", "code-review")
        code, out, _ = run_cli(capsys, "scaffold", PR_URL, *argv)
    assert code == 0
    scenario = _scenario(tmp_path, "authz.scope_1", "code-review")
    assert scenario["files"] == [f"fixtures/authz.scope_1/github/{REPOSITORY}/src/app.py"]
    assert "assay run " in out and "-t code-review/authz.scope_1" in out


def test_existing_files_are_refused_without_force_and_replaced_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        assert run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))[0] == 0
        scenario = tmp_path / "security-review" / f"{NAME}.json"
        scenario.write_text('{"edited": true}\n')
        stale = tmp_path / FIXTURES / "src" / "stale.py"
        stale.write_text("left from an earlier capture\n")
        before = snapshot(tmp_path)

        code, _, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))
        assert code == 2
        assert "refusing to overwrite existing files" in err and "--force" in err
        assert f": {FIXTURES}/ (already holds files), security-review/{NAME}.json (pass" in err
        assert snapshot(tmp_path) == before

        code, _, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path), "--force")
    assert (code, err) == (0, "")
    assert _scenario(tmp_path)["given"] == TITLE
    assert not stale.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".assay-scaffold-")]


def test_the_root_defaults_to_the_configured_eval_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / "evals").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.assay]\nroot = "evals"\n')
    monkeypatch.chdir(project)
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        code, out, _ = run_cli(capsys, "scaffold", PR_URL)
    assert code == 0
    assert (project / "evals" / "security-review" / f"{NAME}.json").is_file()
    assert f"  assay run -t security-review/{NAME}\n" in out


_SIGN_IN_PAGE = Reply(
    200,
    raw=b"<!DOCTYPE html><html><body>Sign in</body></html>",
    headers={"content-type": "text/html"},
)


@pytest.mark.parametrize(
    ("setup", "what"),
    [
        ("web-page", "pull request acme/widgets#7"),
        ("json-cut-short", "pull request acme/widgets#7"),
        ("changed-files-null", "pull request acme/widgets#7"),
        ("changed-files-text", "pull request acme/widgets#7"),
        ("no-head", "pull request acme/widgets#7"),
        ("sha-not-an-id", "pull request acme/widgets#7"),
        ("file-without-name", "pull request acme/widgets#7"),
        ("link-off-the-api", "pull request acme/widgets#7"),
        ("contents-page", "src/app.py at bbbbbbbbbbbb"),
    ],
)
def test_an_answer_that_is_not_the_github_api_is_one_clear_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setup: str,
    what: str,
) -> None:
    """GITHUB_API_URL at a GitHub Enterprise web UI or an SSO proxy answers 200 with HTML."""
    with serving(monkeypatch) as fake:
        files = [pr_file("src/app.py", patch="@@ -1 +1 @@\n-old\n+new")]
        if setup == "file-without-name":
            del files[0]["filename"]
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"}, pr_files=files)
        pull = fake.repos[REPOSITORY].pulls[7]
        if setup == "web-page":
            fake.inject(_SIGN_IN_PAGE, times=20)
        elif setup == "json-cut-short":
            fake.inject(Reply(200, raw=b'{"title": "Fix'), path=r".*/pulls/7")
        elif setup == "changed-files-null":
            pull["changed_files"] = None
        elif setup == "changed-files-text":
            pull["changed_files"] = "many"
        elif setup == "no-head":
            del pull["head"]
        elif setup == "sha-not-an-id":
            pull["base"]["sha"] = "\x1b]0;main\x07"
        elif setup == "link-off-the-api":
            pull["url"] = "http://127.0.0.1:1/repos/acme/widgets/pulls/7"
        elif setup == "contents-page":
            fake.inject(_SIGN_IN_PAGE, path=r".*/contents/.*", times=20)
        code, out, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path))
        host = fake.url.removeprefix("http://")
    assert (code, out) == (2, "")
    assert err == (
        f"assay: error: GitHub at {host} answered with something that is not the GitHub API "
        f"({what}); check GITHUB_API_URL, or the host of the pull request URL\n"
    )
    assert snapshot(tmp_path) == {}


def test_no_license_is_not_looked_up_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"src/app.py": "old\n"})
        code, _, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(tmp_path), "--no-license")
        assert fake.count(rf"/repos/{REPOSITORY}/license") == 0
        assert fake.count(rf"/repos/{REPOSITORY}/contents/LICENSE.*") == 0
    assert (code, err) == (0, "")
    scenario = _scenario(tmp_path)
    assert scenario["supporting_files"] == []
    assert scenario["notes"]["license"].startswith("none copied: --no-license")


def test_file_names_on_stdout_cannot_start_a_workflow_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["##[error]captured.py", "::stop-commands::pwn"]
    with serving(monkeypatch) as fake:
        files = [pr_file(n, patch="@@ -1 +1 @@\n-a\n+b") for n in ["src/app.py", *names]]
        simple_pull(
            fake, {"LICENSE": "MIT\n", "src/app.py": "old\n", names[0]: "c\n"}, pr_files=files
        )
        code, out, _ = _scaffold(capsys, tmp_path)
    assert code == 0
    for line in out.splitlines():
        assert not line.lstrip().startswith("::") and "##[" not in line, line


@pytest.mark.parametrize(
    ("location", "message"),
    [
        (
            "https://{host}/repos/acme/widgets/pulls/7",
            "to https: use the https:// pull request URL",
        ),
        ("http://other.example/repos/acme/widgets/pulls/7", "elsewhere: set GITHUB_API_URL to the"),
    ],
)
def test_a_redirect_is_one_clear_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    location: str,
    message: str,
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        host = fake.url.removeprefix("http://")
        redirect = Reply(
            301, {"message": "Moved"}, headers={"location": location.format(host=host)}
        )
        fake.inject(redirect, path=r".*/pulls/7", times=5)
        code, out, err = _scaffold(capsys, tmp_path)
    assert (code, out) == (2, "")
    assert err.startswith(
        f"assay: error: GitHub at {host} redirected the request for pull request acme/widgets#7 "
    )
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("path", "reply"),
    [
        (r".*/pulls/7", Reply(200, raw=b"null")),
        (r".*/pulls/7/files", Reply(200, [1, 2])),
        (r".*/contents/src/app.py", Reply(200, [1, 2])),
        (r".*/pulls/7", Reply(302, raw=b"", headers={"location": "/repos/acme/widgets/pulls/7"})),
    ],
)
def test_a_body_of_the_wrong_shape_is_not_the_api(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    path: str,
    reply: Reply,
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        fake.inject(reply, path=path, times=5)
        code, out, err = _scaffold(capsys, tmp_path)
    assert (code, out) == (2, "")
    assert "answered with something that is not the GitHub API" in err and err.count("\n") == 1


def test_an_absurd_rate_limit_reset_still_says_rate_limited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        fake.inject(rate_limited(99999999999999), path=r".*/pulls/7")
        code, _, err = _scaffold(capsys, tmp_path)
    assert code == 2
    assert err == (
        "assay: error: GitHub API rate limit exceeded; set GITHUB_TOKEN (or GH_TOKEN) for a "
        "higher limit\n"
    )


@pytest.mark.parametrize("path", ["", "..", "./"])
def test_a_license_api_path_that_is_no_file_path_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: str
) -> None:
    body = {"path": path, "type": "file", "size": 4, "encoding": "base64", "content": "TUlUCg=="}
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"src/app.py": "old\n"})
        fake.inject(Reply(200, body), path=r".*/license")
        code, _, err = _scaffold(capsys, tmp_path)
    assert code == 2
    assert f"asked the source to detect one; it named {path!r}, not a file path, so that " in err
    assert snapshot(tmp_path) == {}


def test_a_lone_surrogate_in_the_title_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        fake.repos[REPOSITORY].pulls[7]["title"] = "Fix \ud83d the emoji"
        code, _, err = _scaffold(capsys, tmp_path)
    assert (code, err) == (0, "")
    assert _scenario(tmp_path, "fix-the-emoji")["given"] == "Fix ? the emoji"


def test_control_characters_in_an_error_are_taken_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "src/e\x1b]0;x\x07vil\n::error::x.py"
    with serving(monkeypatch) as fake:
        files = [pr_file(name, patch="@@ -1 +1 @@\n-a\n+b")]
        simple_pull(fake, {"LICENSE": "MIT\n", name: "a\n"}, pr_files=files)
        fake.inject(
            Reply(500, {"message": "bo\x1b[2Jom\n::warning::y"}),
            path=r".*/contents/src/e.*",
            times=5,
        )
        code, _, err = _scaffold(capsys, tmp_path)
    assert code == 2
    assert err == (
        "assay: error: GitHub answered 500 for src/e ]0;x vil ::error::x.py at bbbbbbbbbbbb: "
        "bo [2Jom\n"
    )


@pytest.mark.slow
def test_a_slow_server_is_one_timeout_not_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(github_source, "TIMEOUT_S", 1)  # PyGithub takes whole seconds
    with serving(monkeypatch) as fake:
        simple_pull(fake, {"LICENSE": "MIT\n", "src/app.py": "old\n"})
        fake.inject(Reply(200, {"x": 1}, delay_s=3), path=r".*/pulls/7", times=5)
        code, _, err = _scaffold(capsys, tmp_path)
        assert fake.count(rf"/repos/{REPOSITORY}/pulls/7") == 1
        host = fake.url.removeprefix("http://")
    assert code == 2
    assert err == (
        f"assay: error: GitHub at {host} did not answer within 1 s (pull request acme/widgets#7)\n"
    )
