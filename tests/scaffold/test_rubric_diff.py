"""A rubric case's `input.diff` for changes a text patch shows badly: empty files, binary
files, and a path that is a file on one side and a directory on the other. Each case is
scaffolded from a pull request (the GitHub fake) and from the clone itself, checked with
real `git apply` on its base/ (Cassandra's sandbox) and then with `assay validate` and
the sandbox `assay run --dry-run` builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scaffold.test_helpers import (
    BINARY,
    BINARY_HEAD_REASON,
    PR_URL,
    apply_case_diff,
    commit,
    fill_in_rubrics,
    git,
    make_repo,
    pull_from_repo,
    run_cli,
    serving,
    snapshot,
    tree_at,
)

NAME = "odd-files"
CASE_ID = f"rubric/{NAME}"
SOURCES = ("pull-request", "clone")


@pytest.fixture(autouse=True)
def _a_judge_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # validate says which key a skipped case would need; these cases are judged, and no
    # model is called here: a key keeps validate's output about the scaffolded files alone.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-validate-only-never-sent")


def _scaffold(
    source: str,
    repo: Path,
    base: str,
    head: str,
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:
    argv = ("--root", str(root), "--format", "rubric", "--name", NAME)
    if source == "clone":
        refs = ("--repo", str(repo), "--base", base, "--head", head)
        return run_cli(capsys, "scaffold", *refs, *argv)
    with serving(monkeypatch) as fake:
        pull_from_repo(fake, repo, base, head)
        return run_cli(capsys, "scaffold", PR_URL, *argv)


def _sandbox_head(capsys: pytest.CaptureFixture[str], root: Path, work: Path) -> dict[str, bytes]:
    """Fill in the rubric, validate with the real loader, build the case's sandbox: the
    files of its `eval` branch (the base with input.diff applied)."""
    fill_in_rubrics(root / "rubric" / "rubric.json")
    code, out, err = run_cli(capsys, "validate", str(root))
    assert (code, err) == (0, ""), err
    assert "ok: 1 case in 1 file" in out
    code, out, _ = run_cli(
        capsys, "run", str(root), "--dry-run", "-t", CASE_ID, "--work-root", str(work)
    )
    assert code == 0
    return tree_at(Path(out.splitlines()[1].strip()), "eval")


@pytest.mark.parametrize("source", SOURCES)
def test_an_added_empty_file_comes_from_its_header_and_a_binary_one_is_left_out_saying_why(
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo, root = tmp_path / "clone", tmp_path / "out"
    base_files = {"LICENSE": "MIT\n", "src/app.py": "old\n"}
    head_files = {"src/app.py": "new\n", "pkg/__init__.py": "", "logo.png": BINARY}
    base, head = make_repo(repo, base_files, head_files)
    code, out, err = _scaffold(source, repo, base, head, root, monkeypatch, capsys)
    assert (code, err) == (0, "")
    case_dir = root / "rubric" / "cases" / NAME
    diff = (case_dir / "input.diff").read_text()
    assert "diff --git a/pkg/__init__.py b/pkg/__init__.py\nnew file mode 100644\n" in diff
    assert "logo.png" not in diff
    shown = f"  logo.png: {BINARY_HEAD_REASON}\n"
    assert f"skipped 1 file (recorded in source.json; review them):\n{shown}" in out
    skipped = json.loads((case_dir / "source.json").read_text())["skipped_files"]
    assert skipped == [{"path": "logo.png", "reason": BINARY_HEAD_REASON}]

    # What `git apply` makes of the base is the head side, but for the binary file.
    head_tree = {p: c for p, c in tree_at(repo, head).items() if p != "logo.png"}
    assert head_tree["pkg/__init__.py"] == b""
    assert apply_case_diff(case_dir, tmp_path / "applied") == head_tree
    assert _sandbox_head(capsys, root, tmp_path / "work") == head_tree


@pytest.mark.parametrize("source", SOURCES)
def test_a_removed_empty_file_is_deleted_by_its_header(
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo, root = tmp_path / "clone", tmp_path / "out"
    base_files = {"LICENSE": "MIT\n", "src/app.py": "old\n", "src/marker": ""}
    base, head = make_repo(repo, base_files, {"src/app.py": "new\n", "src/marker": None})
    code, out, err = _scaffold(source, repo, base, head, root, monkeypatch, capsys)
    assert (code, err) == (0, "")
    assert "skipped" not in out
    case_dir = root / "rubric" / "cases" / NAME
    assert (case_dir / "base" / "src" / "marker").read_bytes() == b""
    diff = (case_dir / "input.diff").read_text()
    assert diff.endswith("diff --git a/src/marker b/src/marker\ndeleted file mode 100644\n")
    head_tree = tree_at(repo, head)
    assert apply_case_diff(case_dir, tmp_path / "applied") == head_tree
    assert _sandbox_head(capsys, root, tmp_path / "work") == head_tree


def _file_and_directory_swap(repo: Path) -> tuple[str, str]:
    """The file `conf` becomes the directory `conf/`, the directory `lib/` the file `lib`."""
    base_files = {"LICENSE": "MIT\n", "conf": "a = 1\n", "lib/util.py": "def util():\n    pass\n"}
    base, _ = make_repo(repo, base_files, {})
    (repo / "conf").unlink()
    (repo / "lib" / "util.py").unlink()
    (repo / "lib").rmdir()
    head = commit(repo, {"conf/main.py": "SETTINGS = {'a': 2}\n", "lib": "a file now\n"}, "swap")
    assert git(repo, "diff", "--name-status", base, head).split() == [
        "D", "conf", "A", "conf/main.py", "A", "lib", "D", "lib/util.py"
    ]  # fmt: skip
    return base, head


@pytest.mark.parametrize("source", SOURCES)
def test_a_file_that_becomes_a_directory_is_one_deletion_and_one_addition(
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo, root = tmp_path / "clone", tmp_path / "out"
    base, head = _file_and_directory_swap(repo)
    code, out, err = _scaffold(source, repo, base, head, root, monkeypatch, capsys)
    assert (code, err) == (0, "")
    assert "skipped" not in out
    case_dir = root / "rubric" / "cases" / NAME
    assert snapshot(case_dir / "base") == tree_at(repo, base)  # LICENSE, conf, lib/util.py
    # Each path once, as what it is, under its own name (no `conf-2/`).
    headers = [
        line
        for line in (case_dir / "input.diff").read_text().splitlines()
        if line[:4] in ("diff", "new ", "dele")
    ]
    assert headers == [
        "diff --git a/conf b/conf", "deleted file mode 100644",
        "diff --git a/conf/main.py b/conf/main.py", "new file mode 100644",
        "diff --git a/lib b/lib", "new file mode 100644",
        "diff --git a/lib/util.py b/lib/util.py", "deleted file mode 100644",
    ]  # fmt: skip

    head_tree = tree_at(repo, head)
    assert apply_case_diff(case_dir, tmp_path / "applied") == head_tree
    assert _sandbox_head(capsys, root, tmp_path / "work") == head_tree
