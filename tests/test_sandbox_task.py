"""Task sandboxes: PVYai's workspace copy + baseline commit, checked with real git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.errors import SandboxError
from assay.suites.case import TaskSpec, VerificationCommand
from assay.workspace import Sandbox, build_sandbox
from tests.test_sandbox_changes import changes_of
from tests.test_sandbox_helpers import assert_healthy, git, make_case, write


def _workspace(root: Path) -> Path:
    write(root / "README.md", "# api server\n")
    write(root / "src" / "server.py", "def handler():\n    return 200\n")
    write(root / "bin" / "serve", "#!/bin/sh\npython -m server\n", executable=True)
    write(root / ".gitignore", "*.log\n")
    write(root / "debug.log", "tracked although ignored\n")
    (root / "empty").mkdir()
    os.symlink("src/server.py", root / "entry.py")
    os.symlink("src", root / "lib")
    return root


def _spec(workspace: Path) -> TaskSpec:
    return TaskSpec(
        prompt="fix the handler",
        workspace=workspace,
        commands=(VerificationCommand(id="test", name="tests", argv=("true",)),),
    )


def _build(tmp_path: Path, workspace: Path) -> Sandbox:
    parent = tmp_path / "work"
    parent.mkdir(exist_ok=True)
    return build_sandbox(make_case("task", _spec(workspace)), parent=parent)


def test_workspace_copy_with_baseline_commit(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path / "fixtures" / "api-server")
    write(workspace / ".git" / "config", "[core]\n\thooksPath = /tmp/evil\n")
    sandbox = _build(tmp_path, workspace)
    repo = sandbox.path

    assert sandbox.kind == "task"
    assert sandbox.head_commit == sandbox.base_commit
    assert (sandbox.diff, sandbox.changed_files, sandbox.repository) == ("", (), None)
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/master"  # plain git init
    assert git(repo, "rev-parse", "HEAD").strip() == sandbox.base_commit
    staged = git(repo, "ls-files", "-s").splitlines()
    listing = {line.split("\t")[1]: line.split()[0] for line in staged}
    assert listing == {
        ".gitignore": "100644",
        "README.md": "100644",
        "bin/serve": "100755",
        "entry.py": "120000",
        "lib": "120000",
        "src/server.py": "100644",
    }
    assert os.readlink(repo / "entry.py") == "src/server.py"
    assert os.readlink(repo / "lib") == "src"
    assert (repo / "empty").is_dir()
    assert os.access(repo / "bin" / "serve", os.X_OK)
    assert "evil" not in (repo / ".git" / "config").read_text()  # the fixture's .git stays behind
    assert changes_of(repo, sandbox.base_commit).changed == ()
    assert sandbox.baseline is not None
    assert changes_of(repo, sandbox.baseline).changed == ()
    # What the fixture's own rules ignore is on disk but untracked, as `git add .` leaves it.
    assert (repo / "debug.log").exists() and "debug.log" not in sandbox.baseline.files
    assert_healthy(repo)


def test_task_builds_are_reproducible(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path / "fixtures" / "api-server")
    first, second = _build(tmp_path, workspace), _build(tmp_path, workspace)
    assert first.base_commit == second.base_commit
    assert first.path != second.path


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("../../outside.txt", "points outside the fixture"),
        ("src/../../../etc/passwd", "points outside the fixture"),
        ("/etc/passwd", "is absolute"),
    ],
)
def test_escaping_symlinks_are_refused(tmp_path: Path, target: str, message: str) -> None:
    workspace = _workspace(tmp_path / "fixtures" / "api-server")
    write(tmp_path / "outside.txt", "secret\n")
    os.symlink(target, workspace / "src" / "escape")
    with pytest.raises(SandboxError, match=message):
        _build(tmp_path, workspace)
    assert list((tmp_path / "work").iterdir()) == []


def test_symlink_chain_leading_out_is_refused(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path / "fixtures" / "api-server")
    os.symlink("..", workspace / "up")  # itself points outside the fixture
    with pytest.raises(SandboxError, match="up -> .. points outside"):
        _build(tmp_path, workspace)


def test_special_files_are_refused(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path / "fixtures" / "api-server")
    os.mkfifo(workspace / "pipe")
    with pytest.raises(SandboxError, match="pipe: not a regular file"):
        _build(tmp_path, workspace)


def test_missing_workspace_is_a_sandbox_error(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="is not a directory"):
        _build(tmp_path, tmp_path / "nope")
