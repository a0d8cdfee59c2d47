"""Rubric sandboxes: Cassandra's base state + `git apply input.diff`, checked with real git."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from assay.errors import SandboxError
from assay.suites.case import RubricSpec
from assay.workspace import Sandbox, build_sandbox
from tests.test_sandbox_helpers import assert_healthy, git, make_case, source_lines, write

PNG = bytes(range(256)) * 4  # not text: git needs a binary patch for it


def _base(root: Path) -> Path:
    write(root / "AGENTS.md", "Use the repository's logging helpers.\n")
    write(root / "config.go", source_lines(30, tag="config"))
    write(root / "legacy.go", "package legacy\n")
    write(root / "docs" / "old-name.md", source_lines(20, tag="docs"))
    write(root / "scripts" / "build.sh", "#!/bin/sh\nmake\n")
    return root


def _make_diff(tmp_path: Path, base: Path | None) -> tuple[Path, str, str]:
    """Change a copy of `base` in a real repo; return (input.diff, base tree, changed tree)."""
    repo = tmp_path / "origin"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    if base is not None:
        for path in base.rglob("*"):
            if path.is_file():
                write(
                    repo / path.relative_to(base),
                    path.read_bytes(),
                    executable=path.stat().st_mode & 0o100 != 0,
                )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    base_tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    if base is not None:
        config = (repo / "config.go").read_text().replace("config-3", "API_KEY = 'sk-live-123'")
        write(repo / "config.go", config)
        (repo / "legacy.go").unlink()
        (repo / "docs" / "old-name.md").rename(repo / "docs" / "new-name.md")
        (repo / "scripts" / "build.sh").chmod(0o755)
    write(repo / "assets" / "logo.png", PNG)
    write(repo / "pkg" / "new.go", 'package pkg\n\nconst Token = "secret"\n')
    git(repo, "add", "-A")
    changed_tree = git(repo, "write-tree").strip()
    diff = tmp_path / "case" / "input.diff"
    write(diff, git(repo, "diff", "--cached", "--binary", "HEAD"))
    return diff, base_tree, changed_tree


def _build(tmp_path: Path, spec: RubricSpec) -> Sandbox:
    parent = tmp_path / "work"
    parent.mkdir(exist_ok=True)
    return build_sandbox(make_case("rubric", spec), parent=parent)


def _tarball(source: Path, target: Path, *extra: tuple[str, bytes]) -> Path:
    with tarfile.open(target, "w:gz") as archive:
        for path in sorted(source.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(source)), recursive=False)
        for name, data in extra:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return target


def test_base_directory_then_applied_diff(tmp_path: Path) -> None:
    base = _base(tmp_path / "case" / "base")
    diff, base_tree, changed_tree = _make_diff(tmp_path, base)
    sandbox = _build(tmp_path, RubricSpec(rubric="find the key", diff=diff, base=base))
    repo = sandbox.path

    assert sandbox.kind == "rubric"
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/eval"
    assert git(repo, "rev-parse", "main^{tree}").strip() == base_tree
    assert git(repo, "rev-parse", "eval^{tree}").strip() == changed_tree
    assert git(repo, "rev-parse", "eval^").strip() == sandbox.base_commit
    assert sandbox.diff == git(repo, "diff", "main...eval")
    # The whole base is there, not only what the diff touches.
    assert (repo / "AGENTS.md").read_text() == "Use the repository's logging helpers.\n"
    assert (repo / "assets" / "logo.png").read_bytes() == PNG
    assert not (repo / "legacy.go").exists()
    assert (repo / "scripts" / "build.sh").stat().st_mode & 0o100
    assert "API_KEY = 'sk-live-123'" in sandbox.diff
    assert "rename from docs/old-name.md" in sandbox.diff
    assert "Binary files /dev/null and b/assets/logo.png differ" in sandbox.diff
    assert sandbox.changed_files == (
        "assets/logo.png",
        "config.go",
        "docs/new-name.md",
        "docs/old-name.md",
        "legacy.go",
        "pkg/new.go",
        "scripts/build.sh",
    )
    assert_healthy(repo)


def test_base_tarball_gives_the_same_repo_as_the_directory(tmp_path: Path) -> None:
    base = _base(tmp_path / "case" / "base")
    diff, _, _ = _make_diff(tmp_path, base)
    tarball = _tarball(base, tmp_path / "case" / "base.tar.gz")

    from_dir = _build(tmp_path, RubricSpec(rubric="r", diff=diff, base=base))
    from_tar = _build(tmp_path, RubricSpec(rubric="r", diff=diff, base=tarball))
    assert (from_tar.base_commit, from_tar.head_commit, from_tar.diff) == (
        from_dir.base_commit,
        from_dir.head_commit,
        from_dir.diff,
    )
    assert sorted(p.name for p in from_tar.root.iterdir()) == ["repo", "scratch"]
    assert_healthy(from_tar.path)


def test_tarball_cannot_bring_its_own_git_directory(tmp_path: Path) -> None:
    base = _base(tmp_path / "case" / "base")
    diff, _, _ = _make_diff(tmp_path, base)
    hostile = b"[core]\n\thooksPath = /tmp/evil\n\tfsmonitor = touch /tmp/pwned\n"
    tarball = _tarball(base, tmp_path / "case" / "base.tar.gz", (".git/config", hostile))

    sandbox = _build(tmp_path, RubricSpec(rubric="r", diff=diff, base=tarball))
    assert "evil" not in (sandbox.path / ".git" / "config").read_text()
    assert_healthy(sandbox.path)


def test_unsafe_tarball_is_refused(tmp_path: Path) -> None:
    base = _base(tmp_path / "case" / "base")
    diff, _, _ = _make_diff(tmp_path, base)
    tarball = _tarball(base, tmp_path / "case" / "base.tar.gz", ("../escape.txt", b"x"))
    with pytest.raises(SandboxError, match="unsafe tarball"):
        _build(tmp_path, RubricSpec(rubric="r", diff=diff, base=tarball))
    assert list((tmp_path / "work").iterdir()) == []


def test_no_base_is_an_empty_base_commit(tmp_path: Path) -> None:
    diff, base_tree, changed_tree = _make_diff(tmp_path, None)
    sandbox = _build(tmp_path, RubricSpec(rubric="r", diff=diff, base=None))
    repo = sandbox.path
    assert git(repo, "rev-parse", "main^{tree}").strip() == base_tree
    assert base_tree == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree
    assert git(repo, "rev-parse", "eval^{tree}").strip() == changed_tree
    assert sandbox.changed_files == ("assets/logo.png", "pkg/new.go")
    assert_healthy(repo)


def test_diff_that_does_not_apply_names_the_file_and_gits_reason(tmp_path: Path) -> None:
    base = _base(tmp_path / "case" / "base")
    diff, _, _ = _make_diff(tmp_path, base)
    (base / "config.go").write_text("package config\n// rewritten since the diff was made\n")
    with pytest.raises(SandboxError) as caught:
        _build(tmp_path, RubricSpec(rubric="r", diff=diff, base=base))
    message = str(caught.value)
    # Cassandra's words first, so its results file says where the case failed.
    assert message.startswith(
        f"failed to create sandbox: failed to apply diff: {diff}: "
        "input.diff does not apply to the base: "
    )
    assert "config.go" in message and "patch does not apply" in message
    assert list((tmp_path / "work").iterdir()) == []


@pytest.mark.parametrize("what", ["missing base", "missing diff", "not a tarball"])
def test_unusable_inputs_are_sandbox_errors(tmp_path: Path, what: str) -> None:
    base = _base(tmp_path / "case" / "base")
    diff, _, _ = _make_diff(tmp_path, base)
    spec = {
        "missing base": RubricSpec(rubric="r", diff=diff, base=tmp_path / "nope"),
        "missing diff": RubricSpec(rubric="r", diff=tmp_path / "nope.diff", base=base),
        "not a tarball": RubricSpec(rubric="r", diff=diff, base=write(tmp_path / "b.zip", "PK")),
    }[what]
    with pytest.raises(
        SandboxError, match="does not exist|neither a directory nor a .tar.gz"
    ) as caught:
        _build(tmp_path, spec)
    assert str(caught.value).startswith("failed to create sandbox: ")
