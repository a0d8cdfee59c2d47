"""`assay scaffold --format rubric`: a Cassandra case (base/ + input.diff) and its manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.github_contents import Symlink, pr_file
from tests.scaffold.test_helpers import (
    BINARY_HEAD_REASON,
    PR_URL,
    SIZE_CAP,
    TITLE,
    ServedFiles,
    apply_case_diff,
    commit,
    fill_in_rubrics,
    git,
    make_repo,
    mixed_change,
    pull_from_repo,
    run_cli,
    serving,
    simple_pull,
    snapshot,
    tree_at,
)

NAME = "replay-scope"


def _rubric(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> tuple[int, str, str]:
    argv = ("--root", str(root), "--format", "rubric", "--max-file-size", str(SIZE_CAP))
    return run_cli(capsys, "scaffold", PR_URL, *argv, *extra)


def _local_rubric(
    capsys: pytest.CaptureFixture[str], repo: Path, base: str, head: str, root: Path, *extra: str
) -> tuple[int, str, str]:
    return run_cli(
        capsys, "scaffold", "--repo", str(repo), "--base", base, "--head", head,
        "--root", str(root), "--format", "rubric", *extra,
    )  # fmt: skip


def test_the_case_is_base_files_plus_a_diff_that_applies_to_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "clone"
    base, head = mixed_change(repo)
    root = tmp_path / "evals"
    with serving(monkeypatch) as fake:
        pull_from_repo(fake, repo, base, head)
        code, out, err = _rubric(capsys, root, "--name", NAME)
    assert (code, err) == (0, "")
    case_dir = root / "rubric" / "cases" / NAME
    base_tree, head_tree = tree_at(repo, base), tree_at(repo, head)
    captured = {"src/app.py", "src/old_name.py", "src/gone.py", "LICENSE"}
    assert snapshot(case_dir / "base") == {p: base_tree[p] for p in captured}
    # The diff turns the base into the head side of every file it could carry.
    applied = apply_case_diff(case_dir, tmp_path / "applied")
    expected = {p for p in head_tree if p not in ("assets/logo.png", "data/big.txt", "README.md")}
    assert applied == {p: head_tree[p] for p in expected}

    manifest = json.loads((root / "rubric" / "rubric.json").read_text())
    assert manifest["cases"] == [
        {
            "id": NAME,
            "name": TITLE,
            "description": f"Scaffolded from {PR_URL} (base {base[:12]}).",
            "rubric": manifest["cases"][0]["rubric"],
            "fixture_path": f"cases/{NAME}",
        }
    ]
    assert manifest["cases"][0]["rubric"].startswith("TODO:")
    notes = json.loads((case_dir / "source.json").read_text())
    assert (notes["source"], notes["source_ref"], notes["side"]) == (PR_URL, base, "base")
    assert {s["path"]: s["reason"] for s in notes["skipped_files"]} == {
        "assets/logo.png": "binary content (a NUL byte, or not valid UTF-8); "
        "left out of base/ and input.diff",
        "data/big.txt": "2061 bytes, over the 1000-byte size cap (--max-file-size); "
        "left out of base/ and input.diff",
    }
    assert f"next: edit the rubric of case '{NAME}' in evals/rubric/rubric.json" in out
    assert f"  assay run evals/rubric/rubric.json -t rubric/{NAME}\n" in out

    fill_in_rubrics(root / "rubric" / "rubric.json")
    code, out, _ = run_cli(capsys, "validate", str(root))
    assert code == 0 and "rubric-manifest" in out
    argv = ("--dry-run", "-t", f"rubric/{NAME}", "--work-root", str(tmp_path / "w"))
    code, out, _ = run_cli(capsys, "run", str(root), *argv)
    assert code == 0
    assert "rubric  rubric/replay-scope: 4 files changed" in out


def test_the_untouched_rubric_stub_does_not_validate_strictly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    assert _local_rubric(capsys, repo, base, head, tmp_path / "out", "--name", NAME)[0] == 0
    manifest = str(tmp_path / "out" / "rubric" / "rubric.json")
    code, _, err = run_cli(capsys, "validate", manifest)
    assert code == 0 and "warning: cases[0].rubric: still the scaffold's TODO" in err
    code, _, err = run_cli(capsys, "validate", "--strict", manifest)
    assert code == 2 and "TODO" in err


def test_unportable_and_colliding_paths_are_renamed_consistently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    names = ["docs/a:b?.md", "README.md", "readme.md", "aux.txt", "notes."]
    base, head = make_repo(
        repo,
        {"LICENSE": "MIT\n", **{n: f"{n} v1\n" for n in names}},
        {**{n: f"{n} v2\n" for n in names}, "Docs/new.md": "new\n"},
    )
    code, _, err = _local_rubric(capsys, repo, base, head, tmp_path / "out", "--name", NAME)
    assert (code, err) == (0, "")
    case_dir = tmp_path / "out" / "rubric" / "cases" / NAME
    placed = {
        "docs/a_b_.md": "docs/a:b?.md v1\n",
        "README.md": "README.md v1\n",
        "readme-2.md": "readme.md v1\n",
        "_aux.txt": "aux.txt v1\n",
        "notes_": "notes. v1\n",
        "LICENSE": "MIT\n",
    }
    assert snapshot(case_dir / "base") == {k: v.encode() for k, v in placed.items()}
    applied = apply_case_diff(case_dir, tmp_path / "applied")
    assert applied["readme-2.md"] == b"readme.md v2\n"
    assert applied["docs/a_b_.md"] == b"docs/a:b?.md v2\n"
    assert applied["Docs/new.md"] == b"new\n"
    notes = json.loads((case_dir / "source.json").read_text())
    sources = {f["sourcePath"]: f["path"] for f in notes["source_files"]}
    assert sources["docs/a:b?.md"] == f"rubric/cases/{NAME}/base/docs/a_b_.md"
    assert sources["readme.md"] == f"rubric/cases/{NAME}/base/readme-2.md"


def test_the_manifest_is_extended_never_duplicated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    root = tmp_path / "out"
    manifest_path = root / "rubric" / "rubric.json"
    manifest_path.parent.mkdir(parents=True)
    manifest_path.write_text(
        json.dumps(
            {
                "name": "mine",
                "description": "hand-written",
                "cases": [{"id": "first", "rubric": "r", "fixture_path": "cases/first"}],
            }
        )
    )
    assert _local_rubric(capsys, repo, base, head, root, "--name", "second")[0] == 0
    assert _local_rubric(capsys, repo, base, head, root, "--name", "third")[0] == 0
    manifest = json.loads(manifest_path.read_text())
    assert (manifest["name"], manifest["description"]) == ("mine", "hand-written")
    assert [c["id"] for c in manifest["cases"]] == ["first", "second", "third"]

    before = snapshot(root)
    code, _, err = _local_rubric(capsys, repo, base, head, root, "--name", "second")
    assert code == 2
    lines = manifest_path.read_text().splitlines()
    line = lines.index('      "id": "second",')  # the line before it opens the case
    assert f"rubric.json:{line}: case id 'second' already exists" in err
    assert "rubric/cases/second/ (already holds files)" in err
    assert snapshot(root) == before

    code, _, _ = _local_rubric(capsys, repo, base, head, root, "--name", "second", "--force")
    assert code == 0
    assert [c["id"] for c in json.loads(manifest_path.read_text())["cases"]] == [
        "first",
        "second",
        "third",
    ]


def test_a_manifest_file_that_is_not_a_manifest_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    manifest = tmp_path / "out" / "rubric" / "rubric.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"tasks": []}')
    code, _, err = _local_rubric(capsys, repo, base, head, tmp_path / "out")
    assert code == 2
    assert f"{manifest}: cannot add a case: this file is not a rubric suite manifest" in err
    manifest.write_text('{"cases": [')
    code, _, err = _local_rubric(capsys, repo, base, head, tmp_path / "out")
    assert code == 2
    assert f"{manifest}:1:12: cannot add a case to this suite manifest: malformed JSON" in err


def test_an_all_new_change_makes_a_case_whose_diff_creates_every_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = make_repo(repo, {"LICENSE": "MIT\n"}, {"pkg/new.py": "print('new')\n"})
    code, _, err = _local_rubric(capsys, repo, base, head, tmp_path / "out", "--name", NAME)
    assert (code, err) == (0, "")
    case_dir = tmp_path / "out" / "rubric" / "cases" / NAME
    assert snapshot(case_dir / "base") == {"LICENSE": b"MIT\n"}
    assert apply_case_diff(case_dir, tmp_path / "applied")["pkg/new.py"] == b"print('new')\n"
    assert json.loads((case_dir / "source.json").read_text())["skipped_files"] == []


def test_side_head_does_not_apply_to_rubric_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "scaffold", PR_URL, "--format", "rubric", "--side", "head")
    assert code == 2 and "--side head does not apply to --format rubric" in err


def _type_change(repo: Path) -> tuple[str, str]:
    """a.txt becomes a symlink (git: T), link.txt is added as one, b.txt is edited."""
    base, _ = make_repo(repo, {"LICENSE": "MIT\n", "a.txt": "hello\n", "b.txt": "b\n"}, {})
    (repo / "a.txt").unlink()
    (repo / "a.txt").symlink_to("LICENSE")
    (repo / "link.txt").symlink_to("b.txt")
    head = commit(repo, {"b.txt": "b, edited\n"}, "Make a.txt a link")
    assert git(repo, "diff", "--name-status", base, head).split() == [
        "T", "a.txt", "M", "b.txt", "A", "link.txt"
    ]  # fmt: skip
    return base, head


_LINK_REASON = "not in input.diff: head side: a symlink, not a regular file"


def test_a_change_into_a_symlink_is_left_out_of_a_diff_that_still_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base, head = _type_change(repo)
    code, out, err = _local_rubric(capsys, repo, base, head, tmp_path / "out", "--name", NAME)
    assert (code, err) == (0, "")
    case_dir = tmp_path / "out" / "rubric" / "cases" / NAME
    assert "new file mode 120000" not in (case_dir / "input.diff").read_text()
    applied = apply_case_diff(case_dir, tmp_path / "applied")
    assert applied == {"LICENSE": b"MIT\n", "a.txt": b"hello\n", "b.txt": b"b, edited\n"}
    notes = json.loads((case_dir / "source.json").read_text())
    assert notes["skipped_files"] == [
        {"path": "a.txt", "reason": _LINK_REASON},
        {"path": "link.txt", "reason": _LINK_REASON},
    ]
    assert f"  a.txt: {_LINK_REASON}\n" in out


def test_a_pull_request_that_turns_a_file_into_a_symlink_gives_the_same_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base_files: ServedFiles = {"LICENSE": "MIT\n", "a.txt": "hello\n", "b.txt": "b\n"}
    head_files: ServedFiles = {**base_files, "a.txt": Symlink("LICENSE"), "b.txt": "b, edited\n"}
    files = [
        pr_file(
            "a.txt", "changed", patch="@@ -1 +1 @@\n-hello\n+LICENSE\n\\ No newline at end of file"
        ),
        pr_file("b.txt", patch="@@ -1 +1 @@\n-b\n+b, edited"),
    ]
    with serving(monkeypatch) as fake:
        simple_pull(fake, base_files, head_files=head_files, pr_files=files)
        code, _, err = _rubric(capsys, tmp_path / "out", "--name", NAME)
    assert (code, err) == (0, "")
    case_dir = tmp_path / "out" / "rubric" / "cases" / NAME
    applied = apply_case_diff(case_dir, tmp_path / "applied")
    assert applied == {"LICENSE": b"MIT\n", "a.txt": b"hello\n", "b.txt": b"b, edited\n"}
    skipped = json.loads((case_dir / "source.json").read_text())["skipped_files"]
    assert skipped == [{"path": "a.txt", "reason": _LINK_REASON}]


def test_only_git_s_header_marks_a_patch_binary_not_a_line_of_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "clone"
    base_files = {"LICENSE": "MIT\n", "notes.md": "# Notes\n", "data.txt": "text\n"}
    notes = "# Notes\nGIT binary patch\nBinary files a and b differ\n"
    base, head = make_repo(repo, base_files, {"notes.md": notes, "data.txt": b"\x00 binary\n"})
    code, _, err = _local_rubric(capsys, repo, base, head, tmp_path / "out", "--name", NAME)
    assert (code, err) == (0, "")
    case_dir = tmp_path / "out" / "rubric" / "cases" / NAME
    assert apply_case_diff(case_dir, tmp_path / "applied")["notes.md"] == notes.encode()
    skipped = json.loads((case_dir / "source.json").read_text())["skipped_files"]
    assert skipped == [{"path": "data.txt", "reason": BINARY_HEAD_REASON}]
