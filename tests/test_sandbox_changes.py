"""workspace_changes: what an agent changed since the baseline, as `git status` shows it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.errors import ConfigError, SandboxError
from assay.sandbox import Sandbox, WorkspaceChanges, build_sandbox, workspace_changes
from assay.suites.case import TaskSpec
from tests.test_sandbox_helpers import git, make_case, write

NAMES = {
    "plain": "src/app.py",
    "spaced": "docs/read me.md",
    "unicode": "src/naïve.py",
    "quoted": 'src/say "hi".txt',
    "old": "src/old name.py",
    "gone": "src/gone.py",
}


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    fixture = tmp_path / "fixture"
    for name in NAMES.values():
        write(fixture / name, f"content of {name}\n" * 5)
    parent = tmp_path / "work"
    parent.mkdir()
    spec = TaskSpec(prompt="p", workspace=fixture, commands=())
    return build_sandbox(make_case("task", spec), parent=parent)


def _agent_edits(repo: Path) -> None:
    """What an agent might do: edit, delete, rename, create - in awkward names."""
    (repo / NAMES["plain"]).write_text("changed\n")
    (repo / NAMES["unicode"]).write_text("changé\n")
    (repo / NAMES["gone"]).unlink()
    write(repo / "new dir" / "café ☕.txt", "new\n")
    write(repo / "tab\there.txt", "new\n")
    write(repo / "line\nbreak.txt", "new\n")


def test_untouched_workspace_has_no_changes(sandbox: Sandbox) -> None:
    assert workspace_changes(sandbox.path) == WorkspaceChanges(changed=())
    assert workspace_changes(sandbox.path, baseline=sandbox.base_commit).changed == ()


def test_added_modified_deleted_untracked(sandbox: Sandbox) -> None:
    _agent_edits(sandbox.path)
    changes = workspace_changes(sandbox.path, baseline=sandbox.base_commit)
    added = ("line\nbreak.txt", "new dir/café ☕.txt", "tab\there.txt")
    assert changes.added == added
    assert changes.modified == (NAMES["plain"], NAMES["unicode"])
    assert changes.deleted == (NAMES["gone"],)
    assert changes.renamed == ()
    assert changes.changed == tuple(
        sorted({*added, NAMES["plain"], NAMES["unicode"], NAMES["gone"]})
    )


def test_staged_rename_lists_both_names(sandbox: Sandbox) -> None:
    git(sandbox.path, "mv", NAMES["old"], "src/new name.py")
    (sandbox.path / NAMES["quoted"]).write_text("edited\n")
    changes = workspace_changes(sandbox.path, baseline=sandbox.base_commit)
    assert changes.renamed == ((NAMES["old"], "src/new name.py"),)
    assert changes.modified == (NAMES["quoted"],)
    assert changes.changed == ("src/new name.py", NAMES["old"], NAMES["quoted"])


def test_unstaged_move_is_a_delete_and_an_add(sandbox: Sandbox) -> None:
    shutil.move(sandbox.path / NAMES["old"], sandbox.path / "moved.py")
    changes = workspace_changes(sandbox.path)
    assert (changes.added, changes.deleted) == (("moved.py",), (NAMES["old"],))


def test_commits_made_by_the_agent_are_still_changes(sandbox: Sandbox) -> None:
    repo = sandbox.path
    _agent_edits(repo)
    expected = workspace_changes(repo, baseline=sandbox.base_commit)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "agent work")
    write(repo / "after commit.txt", "untracked again\n")
    git(repo, "mv", NAMES["old"], "src/renamed.py")

    changes = workspace_changes(repo, baseline=sandbox.base_commit)
    assert set(changes.added) == {*expected.added, "after commit.txt"}
    assert changes.modified == expected.modified
    assert changes.deleted == expected.deleted
    assert changes.renamed == ((NAMES["old"], "src/renamed.py"),)
    # Without the baseline only what is not yet committed shows, as plain git status would.
    assert workspace_changes(repo).changed == ("after commit.txt", NAMES["old"], "src/renamed.py")


def test_not_a_git_work_tree_is_a_config_error(tmp_path: Path, sandbox: Sandbox) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ConfigError, match="not a git work tree") as caught:
        workspace_changes(plain)
    assert caught.value.location is not None and caught.value.location.path == plain
    # A directory inside a repo is not a workspace of its own.
    with pytest.raises(ConfigError, match="not a git work tree"):
        workspace_changes(sandbox.path / "src")
    with pytest.raises(ConfigError, match="not a directory"):
        workspace_changes(tmp_path / "missing")


def test_unknown_baseline_is_a_sandbox_error(sandbox: Sandbox) -> None:
    with pytest.raises(SandboxError, match="git failed"):
        workspace_changes(sandbox.path, baseline="0" * 40)
