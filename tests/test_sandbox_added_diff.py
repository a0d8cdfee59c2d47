"""The in-process diff of an additions-only review sandbox is git's, byte for byte."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from assay.suites.case import FixtureFile, ReviewSpec
from assay.workspace import build_sandbox, review
from assay.workspace.added_diff import added_files_diff
from assay.workspace.objects import FILE_MODE, SYMLINK_MODE, Entry
from assay.workspace.repo import branch_diff
from tests.test_sandbox_helpers import make_case, write

CONTENTS: dict[str, bytes] = {
    "empty": b"",
    "one line": b"x = 1\n",
    "one line, no newline": b"x = 1",
    "lines": b"a\nb\n\nc\n",
    "no final newline": b"a\nb",
    "only a newline": b"\n",
    "blank lines": b"\n\n\n",
    "crlf": b"a\r\nb\r\n",
    "a lone cr at the end": b"a\nb\r",
    "utf-8": "caf\u00e9 \u2603\n".encode(),
    "not utf-8": b"\xff\xfe bad \xc3\n",
    "nul early": b"abc\x00def\n",
    "nul after 8000 bytes": b"a" * 8000 + b"\x00\n",
    "nul at 7999": b"a" * 7999 + b"\x00",
    "long": b"".join(b"line %d\n" % n for n in range(3000)),
    "diff-like lines": b"--- a\n+++ b\n@@ -1 +1 @@\n\\ No newline\n",
}


def _sandbox_diffs(
    tmp_path: Path, files: dict[str, tuple[bytes, bool]], *, in_process: bool = True
) -> tuple[str, str]:
    """(the sandbox's diff, git's) for a case whose fixture files are `files`; the
    sandbox's was written without git exactly when `in_process`."""
    asked: list[Path] = []

    def git_diff(path: Path) -> str:
        asked.append(path)
        return branch_diff(path)

    root = tmp_path / "evals"
    fixtures = []
    for n, (dest, (data, executable)) in enumerate(sorted(files.items())):
        source = write(root / "fixtures" / f"f{n}", data, executable=executable)
        fixtures.append(FixtureFile(source, dest))
    skill = write(root / "skills" / "bugs.md", "Find bugs.\n")
    spec = ReviewSpec(given="a change", files=tuple(fixtures), skill=skill)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(review, "branch_diff", git_diff)
        sandbox = build_sandbox(make_case("review", spec), parent=work)
    assert bool(asked) is not in_process
    return sandbox.diff, branch_diff(sandbox.path)


@pytest.mark.parametrize("name", sorted(CONTENTS))
def test_one_added_file_matches_git(tmp_path: Path, name: str) -> None:
    ours, gits = _sandbox_diffs(tmp_path, {"src/file.txt": (CONTENTS[name], False)})
    assert ours == gits


def test_many_files_in_many_directories_match_git(tmp_path: Path) -> None:
    rng = random.Random(20)
    names = ["a", "a-b", "a.b", "a0", "b", "z", "A", "_x", "x+y", "v1.2", "e@x", "k=v", "c,d"]
    files: dict[str, tuple[bytes, bool]] = {}
    while len(files) < 40:
        depth = rng.randint(0, 3)
        path = "/".join(rng.choice(names) + "d" for _ in range(depth))
        path = f"{path}/{rng.choice(names)}" if path else rng.choice(names)
        if any(p == path or p.startswith(path + "/") or path.startswith(p + "/") for p in files):
            continue
        files[path] = (rng.choice(list(CONTENTS.values())), rng.random() < 0.3)
    ours, gits = _sandbox_diffs(tmp_path, files)
    assert ours == gits


def test_paths_git_would_quote_or_pad_are_left_to_git(tmp_path: Path) -> None:
    for n, path in enumerate(["with space.txt", "caf\u00e9.txt", 'quote".txt', "tab\t.txt"]):
        ours, gits = _sandbox_diffs(tmp_path / str(n), {path: (b"x\n", False)}, in_process=False)
        assert ours == gits


def test_a_modified_file_is_left_to_git() -> None:
    base = {"a": Entry(FILE_MODE, "1" * 40)}
    head = {"a": Entry(FILE_MODE, "2" * 40)}
    assert added_files_diff(base, head, {"a": b"x"}, object_ids=set(), has_attributes=False) is None


def test_attributes_or_an_ambiguous_short_id_are_left_to_git() -> None:
    head = {"a": Entry(FILE_MODE, "abcdef1" + "0" * 33)}
    contents = {"a": b"x\n"}
    ids = {"abcdef1" + "0" * 33}
    assert added_files_diff({}, head, contents, object_ids=ids, has_attributes=True) is None
    clash = ids | {"abcdef1" + "f" * 33}
    assert added_files_diff({}, head, contents, object_ids=clash, has_attributes=False) is None
    assert added_files_diff({}, head, contents, object_ids=ids, has_attributes=False)


def test_a_fixture_over_a_supporting_file_is_left_to_git(tmp_path: Path) -> None:
    root = tmp_path / "evals"
    old = write(root / "support" / "app.py", "a = 1\n")
    new = write(root / "fixtures" / "app.py", "a = 2\n")
    spec = ReviewSpec(
        given="a change",
        files=(FixtureFile(new, "app.py"),),
        supporting_files=(FixtureFile(old, "app.py"),),
    )
    work = tmp_path / "work"
    work.mkdir()
    sandbox = build_sandbox(make_case("review", spec), parent=work)
    assert sandbox.diff == branch_diff(sandbox.path)
    assert "-a = 1\n+a = 2\n" in sandbox.diff


def test_a_symlink_or_a_crowded_repository_is_left_to_git() -> None:
    sha = "abcdef1" + "0" * 33
    link = {"a": Entry(SYMLINK_MODE, sha)}
    assert added_files_diff({}, link, {"a": b"t"}, object_ids={sha}, has_attributes=False) is None
    crowded = {sha, *(f"{n:040x}" for n in range(1 << 13))}
    plain = {"a": Entry(FILE_MODE, sha)}
    assert (
        added_files_diff({}, plain, {"a": b"x\n"}, object_ids=crowded, has_attributes=False) is None
    )
