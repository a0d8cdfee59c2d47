"""Which review sandboxes count as small, and so are built on the runner's event loop: a few
files, a few KiB in all, fixtures, supporting files and skill together."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.suites.case import FixtureFile, ReviewSpec
from assay.workspace.review import (
    SMALL_SANDBOX_BYTES,
    SMALL_SANDBOX_FILES,
    build_review_sandbox,
    is_small_review_sandbox,
)


def _spec(tmp_path: Path, sizes: list[int], *, supporting: int = 0) -> ReviewSpec:
    def fixture(name: str, size: int) -> FixtureFile:
        source = tmp_path / "fixtures" / name
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_bytes(b"x" * size)
        return FixtureFile(source, name)

    files = tuple(fixture(f"f{n}.py", size) for n, size in enumerate(sizes))
    extra = tuple(fixture(f"s{n}.py", 10) for n in range(supporting))
    return ReviewSpec(given="a bug", files=files, supporting_files=extra)


def _skill_dir(tmp_path: Path, files: int) -> Path:
    skill = tmp_path / "skills" / "bugs"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("Find bugs.\n")
    for n in range(files - 1):
        (skill / "references" / f"r{n}.md").write_text("more\n")
    return skill


def test_a_warden_fixture_with_a_skill_file_is_small(tmp_path: Path) -> None:
    skill = tmp_path / "bugs.md"
    skill.write_text("Find bugs.\n")
    assert is_small_review_sandbox(_spec(tmp_path, [2000, 300]), skill)


def test_too_many_files_in_all_is_not_small(tmp_path: Path) -> None:
    limit = SMALL_SANDBOX_FILES
    assert is_small_review_sandbox(_spec(tmp_path, [10] * (limit - 2), supporting=2), None)
    assert not is_small_review_sandbox(_spec(tmp_path, [10] * (limit - 2), supporting=3), None)


def test_too_many_bytes_in_all_is_not_small(tmp_path: Path) -> None:
    half = SMALL_SANDBOX_BYTES // 2
    assert is_small_review_sandbox(_spec(tmp_path, [half, half]), None)
    assert not is_small_review_sandbox(_spec(tmp_path, [half, half + 1]), None)


@pytest.mark.parametrize("as_file", [False, True], ids=["directory", "file-in-directory"])
def test_a_directory_skill_counts_every_file_it_brings(tmp_path: Path, as_file: bool) -> None:
    def skill(files: int) -> Path:
        tree = _skill_dir(tmp_path / str(files), files)
        return tree / "SKILL.md" if as_file else tree

    spec = _spec(tmp_path, [100])
    assert is_small_review_sandbox(spec, skill(SMALL_SANDBOX_FILES - 1))
    assert not is_small_review_sandbox(spec, skill(SMALL_SANDBOX_FILES))


def test_a_missing_file_is_left_to_the_build_which_says_what_is_wrong(tmp_path: Path) -> None:
    spec = _spec(tmp_path, [100])
    spec.files[0].source.unlink()
    assert not is_small_review_sandbox(spec, None)
    assert not is_small_review_sandbox(_spec(tmp_path, [100]), tmp_path / "no-such-skill.md")


def test_a_small_sandbox_builds_without_starting_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What makes building it on the event loop safe: no process, only file-system work."""
    import subprocess

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a small sandbox started a process: {args}")

    spec = _spec(tmp_path, [120, 40])
    skill = tmp_path / "bugs.md"
    skill.write_text("Find bugs.\n")
    assert is_small_review_sandbox(spec, skill)
    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    repo = tmp_path / "repo"
    repo.mkdir()
    sandbox = build_review_sandbox(spec, repo, kind="review", skill=skill, name="small")
    assert list(sandbox.changed_files) == ["f0.py", "f1.py"]
    assert sandbox.diff.startswith("diff --git a/f0.py b/f0.py\nnew file mode 100644\n")
