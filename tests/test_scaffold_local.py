"""`assay scaffold --repo PATH --base REF --head REF`: the same capture from a local clone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from assay.scaffold.local_source import github_repository
from tests.test_scaffold_helpers import (
    PR_URL,
    REPOSITORY,
    SIZE_CAP,
    TITLE,
    commit,
    git,
    make_repo,
    mixed_change,
    pull_from_repo,
    run_cli,
    serving,
    snapshot,
)

NAME = "case"


def _local(
    capsys: pytest.CaptureFixture[str], repo: Path, base: str, head: str, root: Path, *extra: str
) -> tuple[int, str, str]:
    return run_cli(
        capsys, "scaffold", "--repo", str(repo), f"--base={base}", f"--head={head}",
        "--root", str(root), "--name", NAME, "--max-file-size", str(SIZE_CAP), *extra,
    )  # fmt: skip


@pytest.mark.parametrize("side", ["base", "head"])
def test_local_refs_and_the_pull_request_give_the_same_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], side: str
) -> None:
    repo = tmp_path / "clone"
    base, head = mixed_change(repo)
    with serving(monkeypatch) as fake:
        pull_from_repo(fake, repo, base, head, body="The body of the change.")
        argv = ("--root", str(tmp_path / "url"), "--name", NAME, "--side", side)
        code, _, _ = run_cli(capsys, "scaffold", PR_URL, "--max-file-size", str(SIZE_CAP), *argv)
    assert code == 0
    # Branch names work as refs; the notes record the full SHAs.
    git(repo, "branch", "fix", head)
    code, _, err = _local(capsys, repo, "main~1", "fix", tmp_path / "local", "--side", side)
    assert (code, err) == (0, "")

    assert snapshot(tmp_path / "local" / "fixtures") == snapshot(tmp_path / "url" / "fixtures")
    assert len(snapshot(tmp_path / "url" / "fixtures")) == 4
    from_url = json.loads((tmp_path / "url" / "security-review" / f"{NAME}.json").read_text())
    local = json.loads((tmp_path / "local" / "security-review" / f"{NAME}.json").read_text())
    assert local["notes"].pop("source") == f"{repo} main~1..fix"
    assert from_url["notes"].pop("source") == PR_URL
    assert local == from_url
    assert local["given"] == TITLE
    assert local["notes"]["source_ref"] == (base if side == "base" else head)


@pytest.mark.slow
def test_rubric_cases_from_local_refs_match_the_pull_request_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = mixed_change(repo)
    with serving(monkeypatch) as fake:
        pull_from_repo(fake, repo, base, head, body="The body of the change.")
        argv = ("--root", str(tmp_path / "url"), "--name", NAME, "--format", "rubric")
        assert run_cli(capsys, "scaffold", PR_URL, "--max-file-size", str(SIZE_CAP), *argv)[0] == 0
    assert _local(capsys, repo, base, head, tmp_path / "local", "--format", "rubric")[0] == 0
    case = Path("rubric", "cases", NAME)
    url_files = snapshot(tmp_path / "url" / case)
    local_files = snapshot(tmp_path / "local" / case)
    assert url_files.pop("source.json") != local_files.pop("source.json")  # notes.source
    assert local_files == url_files


def test_origin_decides_the_repository_and_a_non_github_clone_is_local(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "my tool"
    base, head = make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    git(repo, "remote", "set-url", "origin", "https://gitlab.example.com/team/tool.git")
    assert _local(capsys, repo, base, head, tmp_path / "out")[0] == 0
    scenario = json.loads((tmp_path / "out" / "security-review" / f"{NAME}.json").read_text())
    assert scenario["files"] == [f"fixtures/{NAME}/github/local/my tool/a.py"]
    assert scenario["notes"]["repository"] == "local/my tool"


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("https://github.com/getsentry/sentry.git", "getsentry/sentry"),
        ("https://github.com/getsentry/sentry", "getsentry/sentry"),
        ("https://x-access-token:abc@github.com/o/r.git", "o/r"),
        ("git@github.com:getsentry/sentry.git", "getsentry/sentry"),
        ("ssh://git@github.com/o/r.js.git", "o/r.js"),
        ("ssh://git@github.com:22/o/r/", "o/r"),
        ("https://gitlab.com/o/r.git", None),
        ("https://github.com.evil.example/o/r.git", None),
        ("/srv/git/r.git", None),
    ],
)
def test_github_remote_urls(remote: str, expected: str | None) -> None:
    assert github_repository(remote) == expected


def test_a_subdirectory_of_the_clone_works_and_the_license_can_have_any_license_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base = {"LICENSE-APACHE": "Apache\n", "pkg/a.py": "a\n"}
    base_sha, head_sha = make_repo(repo, base, {"pkg/a.py": "b\n"})
    code, _, err = _local(capsys, repo / "pkg", base_sha, head_sha, tmp_path / "out")
    assert (code, err) == (0, "")
    scenario = json.loads((tmp_path / "out" / "security-review" / f"{NAME}.json").read_text())
    assert scenario["supporting_files"] == [f"fixtures/{NAME}/github/acme/widgets/LICENSE-APACHE"]


@pytest.mark.parametrize(
    ("refs", "message"),
    [
        (("nope", "HEAD"), "no commit 'nope' in "),
        (("HEAD~1", "v9.9"), "no commit 'v9.9' in "),
        (("--output=/tmp/x", "HEAD"), "invalid ref '--output=/tmp/x'"),
    ],
)
def test_a_ref_that_does_not_exist_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], refs: tuple[str, str], message: str
) -> None:
    repo = tmp_path / "clone"
    make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    code, out, err = _local(capsys, repo, *refs, tmp_path / "out")
    assert code == 2 and message in err and out == ""
    assert not (tmp_path / "out").exists()


def test_not_a_clone_and_incomplete_options_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, _, err = _local(capsys, plain, "a", "b", tmp_path / "out")
    assert code == 2 and "not inside a git clone" in err
    code, _, err = run_cli(capsys, "scaffold", "--repo", str(plain), "--base", "a")
    assert code == 2 and "(missing --head)" in err
    code, _, err = run_cli(capsys, "scaffold", PR_URL, "--repo", str(plain))
    assert code == 2 and "do not go together" in err
    code, _, err = run_cli(capsys, "scaffold")
    assert code == 2 and "give a pull request URL, or --repo PATH --base REF --head REF" in err


def test_a_change_with_only_a_binary_file_has_nothing_usable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = make_repo(repo, {"LICENSE": "MIT\n", "x.bin": b"\x00\x01"}, {"x.bin": b"\x00\x02"})
    git(repo, "checkout", "-q", "-b", "later")
    commit(repo, {"x.bin": b"\x00\x03"}, "later")
    code, _, err = _local(capsys, repo, base, head, tmp_path / "out")
    assert code == 2
    assert "no usable files on the base side (try --side head), nothing was written" in err
    assert "x.bin: binary content" in err
    assert not (tmp_path / "out").exists()


def test_symlinks_in_the_clone_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {})
    (repo / "link.py").symlink_to("a.py")
    commit(repo, {"a.py": "b\n"}, "add a link")
    (repo / "link.py").unlink()
    (repo / "link.py").symlink_to("LICENSE")
    head = commit(repo, {"a.py": "c\n"}, "retarget the link")
    code, _, err = _local(capsys, repo, f"{head}~1", head, tmp_path / "out")
    assert (code, err) == (0, "")
    scenario = json.loads((tmp_path / "out" / "security-review" / f"{NAME}.json").read_text())
    assert scenario["notes"]["skipped_files"] == [
        {"path": "link.py", "reason": "a symlink, not a regular file"}
    ]


def test_skipped_file_names_cannot_start_a_workflow_command_or_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    hostile = {
        "bin\n::error file=x::injected": "new\n",
        "\x1b]0;pwned\x07\x1b[2Jtitle.txt": "new\n",
        "csi\u009b31m.txt": "new\n",
    }
    base, head = make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n", **hostile})
    code, out, err = _local(capsys, repo, base, head, tmp_path / "out")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert not [line for line in lines if line.lstrip().startswith("::")]
    assert not any(c in out for c in "\x1b\x07\u009b")
    assert "  bin_::error file=x::injected: added by the change: not on the base side" in lines
    assert "  _]0;pwned__[2Jtitle.txt: added by the change: not on the base side" in lines
    # The notes keep the real names: they are JSON, and provenance.
    scenario = json.loads((tmp_path / "out" / "security-review" / f"{NAME}.json").read_text())
    assert {s["path"] for s in scenario["notes"]["skipped_files"]} == set(hostile)

    # The same names in the error that refuses a change with nothing usable.
    later = commit(repo, {"\x1b[31mred\n::warning::x": "only\n"}, "add one")
    code, _, err = _local(capsys, repo, head, later, tmp_path / "none")
    assert code == 2 and "\x1b" not in err and err.count("\n") == 1
    assert "(_[31mred_::warning::x: added by the change: not on the base side)" in err


def test_a_bare_repository_gives_the_same_case_as_its_clone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = mixed_change(repo)
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "widgets.git"))
    bare = tmp_path / "widgets.git"
    git(bare, "remote", "set-url", "origin", f"https://github.com/{REPOSITORY}.git")
    assert _local(capsys, repo, base, head, tmp_path / "from-clone")[0] == 0
    code, _, err = _local(capsys, bare, base, head, tmp_path / "from-bare")
    assert (code, err) == (0, "")
    from_bare = snapshot(tmp_path / "from-bare")
    from_clone = snapshot(tmp_path / "from-clone")
    scenario = f"security-review/{NAME}.json"
    assert json.loads(from_bare.pop(scenario))["notes"]["source"] == f"{bare} {base}..{head}"
    from_clone.pop(scenario)
    assert from_bare == from_clone
    # Without a github.com origin, the case is filed under the repository's name.
    git(bare, "remote", "remove", "origin")
    code, _, _ = _local(capsys, bare, base, head, tmp_path / "local", "--side", "head")
    assert code == 0
    assert (tmp_path / "local" / f"fixtures/{NAME}/github/local/widgets/src/added.py").is_file()


def test_a_dot_git_that_git_does_not_see_as_a_repository_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / ".git").write_bytes(b"")
    code, out, err = _local(capsys, fake, "main", "main", tmp_path / "out")
    assert (code, out) == (2, "")
    assert err.startswith(f"assay: error: --repo {fake}: git does not see a repository at {fake} (")
    assert "invalid gitfile format" in err and err.count("\n") == 1


def test_refs_that_do_not_differ_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "clone"
    base, _ = make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    code, out, err = _local(capsys, repo, "main", "HEAD", tmp_path / "out")
    assert (code, out) == (2, "")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert err == (
        f"assay: error: {repo} main..HEAD: nothing to capture, no file differs between base "
        f"{head[:12]} and head {head[:12]}; nothing was written\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_name_or_category_that_reads_as_an_option_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    for option in ("--category=-h", "--name=-x"):
        code, out, err = _local(capsys, repo, base, head, tmp_path / "out", option)
        flag, value = option.split("=")
        assert (code, out) == (2, "")
        assert f"{flag} '{value}' is not allowed: it may not start with '-'" in err
    assert not (tmp_path / "out").exists()


def test_a_file_name_that_is_not_utf8_is_skipped_for_that_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    latin1 = os.fsdecode(b"caf\xe9.txt")
    base, head = make_repo(
        repo, {"LICENSE": "MIT\n", "a.py": "a\n", latin1: "x\n"}, {latin1: "y\n"}
    )
    code, _, err = _local(capsys, repo, base, head, tmp_path / "out", "--format", "rubric")
    assert code == 2
    reason = "its name is not valid UTF-8, so it cannot be read back by that name"
    assert f"caf\ufffd.txt: {reason}" in err
    assert "not in the tree of" not in err


def test_a_root_below_a_regular_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("a regular file\n")
    code, out, err = _local(capsys, repo, base, head, Path("afile/x"))
    assert (code, out, err) == (
        2,
        "",
        "assay: error: cannot write under afile/x: Not a directory\n",
    )


def test_no_license_scaffolds_private_code_and_says_so_in_the_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = make_repo(repo, {"a.py": "a\n"}, {"a.py": "b\n"})
    code, _, err = _local(capsys, repo, base, head, tmp_path / "refused")
    assert code == 2 and "pass --no-license or set [tool.assay] scaffold_without_license" in err
    assert not (tmp_path / "refused").exists()

    code, out, err = _local(capsys, repo, base, head, tmp_path / "evals", "--no-license")
    assert (code, err) == (0, "")
    scenario = json.loads((tmp_path / "evals" / "security-review" / f"{NAME}.json").read_text())
    assert scenario["supporting_files"] == []
    assert [f["sourcePath"] for f in scenario["notes"]["source_files"]] == ["a.py"]
    assert scenario["notes"]["license"].startswith("none copied: --no-license")
    assert "assay validate" in out


@pytest.mark.parametrize("fmt", ["review", "rubric"])
def test_the_config_key_waives_the_license_for_every_format(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
) -> None:
    repo = tmp_path / "clone"
    base, head = make_repo(repo, {"a.py": "a\n"}, {"a.py": "b\n"})
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.assay]\nscaffold_without_license = true\n")
    monkeypatch.chdir(project)
    code, _, err = _local(capsys, repo, base, head, project / "evals", "--format", fmt)
    assert (code, err) == (0, "")
    if fmt == "review":
        notes = json.loads((project / "evals" / "security-review" / f"{NAME}.json").read_text())[
            "notes"
        ]
    else:
        case = project / "evals" / "rubric" / "cases" / NAME
        notes = json.loads((case / "source.json").read_text())
        assert sorted(p.name for p in (case / "base").iterdir()) == ["a.py"]
    expected = "none copied: [tool.assay] scaffold_without_license = true in pyproject.toml"
    assert notes["license"].startswith(expected)


def test_a_commit_without_a_message_gets_a_title_that_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    git(repo, "commit", "-q", "--amend", "--allow-empty-message", "-m", "")
    code, _, err = _local(capsys, repo, "HEAD~1", "HEAD", tmp_path / "out")
    assert (code, err) == (0, "")
    head = git(repo, "rev-parse", "HEAD").strip()
    scenario = tmp_path / "out" / "security-review" / "case.json"
    assert json.loads(scenario.read_text())["given"] == f"untitled change {head[:12]}"
