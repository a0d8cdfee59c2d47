"""workspace_changes: what an agent changed since the baseline, as `git status` shows it.

Both readers are held to the same answers: the sandbox's in-memory Baseline (what the
runner uses) and git against a commit of the workspace's repository (`assay score`).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from assay.errors import ConfigError, SandboxError
from assay.suites.case import TaskSpec
from assay.workspace import Baseline, Sandbox, WorkspaceChanges, build_sandbox, workspace_changes
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
    return _task_sandbox(tmp_path, fixture)


def changes_of(path: Path, baseline: Baseline | str | None = None) -> WorkspaceChanges:
    return asyncio.run(workspace_changes(path, baseline=baseline))


def _baseline(sandbox: Sandbox, reader: str) -> Baseline | str:
    if reader == "baseline":
        assert sandbox.baseline is not None
        return sandbox.baseline
    return sandbox.base_commit


READERS = pytest.mark.parametrize("reader", ["baseline", "commit"])


def _agent_edits(repo: Path) -> None:
    """What an agent might do: edit, delete, rename, create - in awkward names."""
    (repo / NAMES["plain"]).write_text("changed\n")
    (repo / NAMES["unicode"]).write_text("changé\n")
    (repo / NAMES["gone"]).unlink()
    write(repo / "new dir" / "café ☕.txt", "new\n")
    write(repo / "tab\there.txt", "new\n")
    write(repo / "line\nbreak.txt", "new\n")


def test_untouched_workspace_has_no_changes(sandbox: Sandbox) -> None:
    assert changes_of(sandbox.path) == WorkspaceChanges(changed=())
    assert changes_of(sandbox.path, sandbox.base_commit).changed == ()
    assert changes_of(sandbox.path, sandbox.baseline) == WorkspaceChanges(changed=())


@READERS
def test_added_modified_deleted_untracked(sandbox: Sandbox, reader: str) -> None:
    _agent_edits(sandbox.path)
    changes = changes_of(sandbox.path, _baseline(sandbox, reader))
    added = ("line\nbreak.txt", "new dir/café ☕.txt", "tab\there.txt")
    assert changes.added == added
    assert changes.modified == (NAMES["plain"], NAMES["unicode"])
    assert changes.deleted == (NAMES["gone"],)
    assert changes.renamed == ()
    assert changes.changed == tuple(
        sorted({*added, NAMES["plain"], NAMES["unicode"], NAMES["gone"]})
    )


@READERS
def test_staged_rename_lists_both_names(sandbox: Sandbox, reader: str) -> None:
    git(sandbox.path, "mv", NAMES["old"], "src/new name.py")
    (sandbox.path / NAMES["quoted"]).write_text("edited\n")
    changes = changes_of(sandbox.path, _baseline(sandbox, reader))
    assert changes.modified == (NAMES["quoted"],)
    if reader == "commit":  # git status's `R  old -> new`, read as PVYai reads it: the new name
        assert (changes.renamed, changes.added) == ((), ("src/new name.py",))
        assert changes.changed == ("src/new name.py", NAMES["quoted"])
    else:  # the index is the agent's: assay's own baseline sees a move, both names changed
        assert changes.renamed == ((NAMES["old"], "src/new name.py"),)
        assert changes.changed == ("src/new name.py", NAMES["old"], NAMES["quoted"])


def test_unstaged_move_is_a_delete_and_an_add_to_git_status(sandbox: Sandbox) -> None:
    shutil.move(sandbox.path / NAMES["old"], sandbox.path / "moved.py")
    changes = changes_of(sandbox.path)
    assert (changes.added, changes.deleted) == (("moved.py",), (NAMES["old"],))
    # Against the Baseline, a move is a move whether git was told or not (exact content).
    changes = changes_of(sandbox.path, sandbox.baseline)
    assert (changes.renamed, changes.changed) == (((NAMES["old"], "moved.py"),), changes.changed)
    assert changes.changed == ("moved.py", NAMES["old"])


@READERS
@pytest.mark.slow
def test_commits_made_by_the_agent_are_still_changes(sandbox: Sandbox, reader: str) -> None:
    repo = sandbox.path
    _agent_edits(repo)
    expected = changes_of(repo, _baseline(sandbox, reader))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "agent work")
    write(repo / "after commit.txt", "untracked again\n")
    git(repo, "mv", NAMES["old"], "src/renamed.py")

    changes = changes_of(repo, _baseline(sandbox, reader))
    assert set(changes.added) == {*expected.added, "after commit.txt"}
    assert changes.modified == expected.modified
    assert changes.deleted == expected.deleted
    assert changes.renamed == ((NAMES["old"], "src/renamed.py"),)
    # Without a baseline named, the root commit is one (PVYai's workspace has only it).
    assert changes_of(repo).changed == changes.changed


@READERS
def test_names_that_are_not_utf8_come_out_as_text(sandbox: Sandbox, reader: str) -> None:
    """Bytes that are not UTF-8 become `\\xNN`: such names must still serialise."""
    (sandbox.path / NAMES["plain"]).unlink()
    with open(bytes(sandbox.path) + b"/bad\xffname.txt", "wb") as handle:
        handle.write(b"x")
    changes = changes_of(sandbox.path, _baseline(sandbox, reader))
    assert changes.added == ("bad\\xffname.txt",)
    assert changes.deleted == (NAMES["plain"],)
    assert all(name.encode("utf-8") for name in changes.changed)


@READERS
def test_ignored_new_files_are_kept_apart(tmp_path: Path, reader: str) -> None:
    fixture = tmp_path / "fixture"
    write(fixture / ".gitignore", "*.log\nbuild/\n!keep.log\n")
    write(fixture / "pkg" / ".gitignore", "*.tmp\n")
    write(fixture / "debug.log", "tracked although ignored\n")
    write(fixture / "app.py", "print('hi')\n")
    sandbox = _task_sandbox(tmp_path, fixture)
    repo = sandbox.path
    write(repo / "debug.log", "a tracked file changes whatever the rules say\n")
    for name in ("new.log", "keep.log", "build/out.o", "build/keep.log", "pkg/a.tmp", "a.tmp"):
        write(repo / name, "new\n")
    changes = changes_of(repo, _baseline(sandbox, reader))
    # debug.log was never tracked (`git add .` skips what the rules ignore): no change.
    assert changes.modified == ()
    assert changes.added == ("a.tmp", "keep.log")
    assert changes.changed == ("a.tmp", "keep.log")
    if reader == "baseline":  # git status leaves them out; assay's reader keeps them apart
        ignored = ("build/keep.log", "build/out.o", "debug.log", "new.log", "pkg/a.tmp")
        assert changes.ignored == ignored


def test_the_work_trees_ignore_rules_count_as_for_git_status(tmp_path: Path) -> None:
    fixture = tmp_path / "fixture"
    write(fixture / ".gitignore", "*.log\n")
    write(fixture / "app.py", "print('hi')\n")
    sandbox = _task_sandbox(tmp_path, fixture)
    repo = sandbox.path
    with open(repo / ".gitignore", "a") as rules:
        rules.write("hidden.txt\nsrc/\n")
    write(repo / "sub" / ".gitignore", "*\n")
    write(repo / ".git" / "info" / "exclude", "*.py\n")
    for name in ("hidden.txt", "src/conftest.py", "sub/secret.py", "new.py", "x.log"):
        write(repo / name, "agent\n")
    changes = changes_of(repo, sandbox.baseline)
    assert changes.modified == (".gitignore",)
    # `.git/info/exclude` is not the suite's: assay never reads it (git status would).
    assert changes.added == ("new.py",)
    assert changes.ignored == (
        "hidden.txt",
        "src/conftest.py",
        "sub/.gitignore",
        "sub/secret.py",
        "x.log",
    )
    # Of those, all but x.log (the fixture's own rule ignores it) only the agent's rules hide.
    assert changes.hidden == ("hidden.txt", "src/conftest.py", "sub/.gitignore", "sub/secret.py")


def test_files_only_the_agents_own_rules_hide_are_named_in_the_check(tmp_path: Path) -> None:
    """A conftest.py that makes every test pass, behind a .gitignore that ignores itself:
    no change to PVYai's git status (the verdict stays its), but the check says so."""
    from assay.grading.task_checks import _changed_files_check, changed_files

    fixture = tmp_path / "fixture"
    write(fixture / "calc.py", "def add(a, b):\n    return a - b\n")
    sandbox = _task_sandbox(tmp_path, fixture)
    repo = sandbox.path
    write(repo / "calc.py", "def add(a, b):\n    return a - b  # looked at it\n")
    write(repo / "conftest.py", "# rigs the tests\n")
    (repo / ".gitignore").write_text("conftest.py\n.gitignore\n")
    changes = changes_of(repo, sandbox.baseline)
    assert changes.changed == ("calc.py",) and changes.hidden == (".gitignore", "conftest.py")
    check = _changed_files_check(
        ["calc.py"], list(changed_files(changes.porcelain)), hidden=changes.hidden
    )
    assert check.status == "pass"
    assert check.model_extra is not None
    assert check.model_extra["hiddenFiles"] == [".gitignore", "conftest.py"]
    assert "ignore rules the agent wrote hide 2 new file(s)" in check.message
    assert check.message.endswith(": .gitignore, conftest.py")


def test_the_fixtures_own_rules_hide_nothing_worth_naming(tmp_path: Path) -> None:
    fixture = tmp_path / "fixture"
    write(fixture / ".gitignore", "*.log\n")
    write(fixture / "app.py", "print('hi')\n")
    sandbox = _task_sandbox(tmp_path, fixture)
    write(sandbox.path / "run.log", "output\n")
    changes = changes_of(sandbox.path, sandbox.baseline)
    assert changes.ignored == ("run.log",) and changes.hidden == ()


def test_a_removed_or_replaced_workspace_lost_every_file(sandbox: Sandbox, tmp_path: Path) -> None:
    shutil.rmtree(sandbox.path)
    gone = changes_of(sandbox.path, sandbox.baseline)
    assert gone.deleted == tuple(sorted(NAMES.values())) and gone.added == ()
    sandbox.path.symlink_to(tmp_path)  # never followed: the workspace must be a directory
    assert changes_of(sandbox.path, sandbox.baseline) == gone


def test_a_directory_the_agent_made_unreadable_is_still_read(sandbox: Sandbox) -> None:
    write(sandbox.path / "secret" / "forbidden.txt", "hidden\n")
    (sandbox.path / "secret").chmod(0)
    (sandbox.path / "src").chmod(0)
    changes = changes_of(sandbox.path, sandbox.baseline)
    assert changes.changed == ("secret/forbidden.txt",)


def test_not_a_git_work_tree_is_a_config_error(tmp_path: Path, sandbox: Sandbox) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ConfigError, match="not a git work tree") as caught:
        changes_of(plain)
    assert caught.value.location is not None and caught.value.location.path == plain
    # A directory inside a repo is not a workspace of its own.
    with pytest.raises(ConfigError, match="not a git work tree"):
        changes_of(sandbox.path / "src")
    with pytest.raises(ConfigError, match="not a directory"):
        changes_of(tmp_path / "missing")


def test_unknown_baseline_is_a_sandbox_error(sandbox: Sandbox) -> None:
    with pytest.raises(SandboxError, match="git failed"):
        changes_of(sandbox.path, "0" * 40)


def _task_sandbox(tmp_path: Path, fixture: Path) -> Sandbox:
    parent = tmp_path / "work"
    parent.mkdir()
    spec = TaskSpec(prompt="p", workspace=fixture, commands=())
    return build_sandbox(make_case("task", spec), parent=parent)
