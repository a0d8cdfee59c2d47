"""Sandboxes ignore the caller's git config and environment, and fixtures' git attributes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.suites.case import Case, FixtureFile, ReviewSpec, RubricSpec, TaskSpec
from assay.workspace import Sandbox, build_sandbox, private_work_root
from tests.test_sandbox_changes import changes_of
from tests.test_sandbox_helpers import assert_healthy, git, make_case, source_lines, write


def _cases(tmp_path: Path) -> list[Case]:
    src = tmp_path / "src"
    write(src / "skill.md", "# skill\n")
    write(src / "handler.ts", source_lines(40, tag="handler"))
    write(src / "base" / "app.py", "def main():\n    return 1\n")
    # Trailing whitespace: a hostile `apply.whitespace = error` would refuse this diff.
    write(
        src / "input.diff",
        "diff --git a/app.py b/app.py\n"
        "--- a/app.py\n+++ b/app.py\n"
        "@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 2   \n",
    )
    review = ReviewSpec(
        given="g",
        files=(FixtureFile(src / "handler.ts", "case/handler.ts"),),
        skill=src / "skill.md",
        repository="owner/repo",
    )
    rubric = RubricSpec(rubric="r", diff=src / "input.diff", base=src / "base")
    task = TaskSpec(prompt="p", workspace=src / "base", commands=())
    return [
        make_case("review", review, name="review"),
        make_case("rubric", rubric, name="rubric"),
        make_case("task", task, name="task"),
    ]


def _hostile_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME, XDG dir and GIT_* variables that would change or break every git step."""
    marker = tmp_path / "pwned"
    evil = write(
        tmp_path / "evil.sh", f'#!/bin/sh\necho "$0 $*" >> {marker}\nexit 1\n', executable=True
    )
    hooks = tmp_path / "hooks"
    for hook in (
        "pre-commit",
        "post-checkout",
        "post-commit",
        "pre-applypatch",
        "post-index-change",
    ):
        write(hooks / hook, evil.read_text(), executable=True)
    write(tmp_path / "template" / "hooks" / "post-checkout", evil.read_text(), executable=True)
    config = (
        "[user]\n\tname = Evil\n\temail = evil@example.com\n"
        f"[core]\n\thooksPath = {hooks}\n\tfsmonitor = {evil}\n"
        f"\texcludesFile = {tmp_path}/ignore-all\n"
        "\tautocrlf = true\n\tquotePath = false\n"
        f"[init]\n\ttemplateDir = {tmp_path}/template\n\tdefaultBranch = trunk\n"
        "[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = /bin/false\n"
        f"[diff]\n\texternal = {evil}\n\tnoprefix = true\n\trenames = false\n\tcontext = 0\n"
        "[color]\n\tui = always\n[apply]\n\twhitespace = error\n"
        "[status]\n\tshowUntrackedFiles = no\n"
    )
    write(tmp_path / "ignore-all", "*\n")
    home = tmp_path / "home"
    write(home / ".gitconfig", config)
    write(home / ".config" / "git" / "config", config)
    write(home / ".config" / "git" / "ignore", "*\n")
    write(home / ".config" / "git" / "attributes", "* text eol=crlf\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(hooks))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere.git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "stray-index"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Evil")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2030-01-01T00:00:00Z")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(evil))
    return marker


def _build_all(tmp_path: Path, cases: list[Case], name: str) -> list[Sandbox]:
    parent = tmp_path / name
    parent.mkdir()
    return [build_sandbox(case, parent=parent) for case in cases]


def test_hostile_user_config_and_environment_change_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = _cases(tmp_path)
    clean = _build_all(tmp_path, cases, "clean")
    marker = _hostile_environment(tmp_path, monkeypatch)
    hostile = _build_all(tmp_path, cases, "hostile")

    for before, after in zip(clean, hostile, strict=True):
        assert (after.base_commit, after.head_commit) == (before.base_commit, before.head_commit)
        assert after.diff == before.diff
        assert after.changed_files == before.changed_files
    review, rubric, task = hostile
    assert review.diff.startswith("diff --git a/case/handler.ts b/case/handler.ts\n")
    assert "\x1b[" not in review.diff
    assert "+    return 2   \n" in rubric.diff

    write(task.path / "agent-notes.txt", "untracked\n")
    (task.path / "app.py").write_text("changed\n")
    for baseline in (task.base_commit, task.baseline):
        changes = changes_of(task.path, baseline)
        assert changes.added == ("agent-notes.txt",) and changes.modified == ("app.py",)

    assert not marker.exists(), marker.read_text()
    assert not (tmp_path / "elsewhere.git").exists()
    assert not (tmp_path / "stray-index").exists()
    for sandbox in hostile:
        assert not list((sandbox.path / ".git").glob("hooks/*"))


def test_fixture_gitattributes_do_not_make_a_fresh_sandbox_dirty(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    # Taken at face value, these would make git see both files as modified (CRLF -> LF
    # normalisation, `$Id: ...$` collapsed to `$Id$`).
    write(workspace / ".gitattributes", "*.bat text eol=lf\n*.txt ident\n")
    write(workspace / "windows.bat", b"@echo off\r\necho hi\r\n")
    write(workspace / "notes.txt", "$Id: deadbeef $\n")
    parent = tmp_path / "work"
    parent.mkdir()
    spec = TaskSpec(prompt="p", workspace=workspace, commands=())
    sandbox = build_sandbox(make_case("task", spec), parent=parent)
    assert (sandbox.path / "windows.bat").read_bytes() == b"@echo off\r\necho hi\r\n"
    # The blob holds the work tree's bytes, CRLF included (no conversion on the way in).
    raw = git(sandbox.path, "hash-object", "--no-filters", "windows.bat")
    assert git(sandbox.path, "rev-parse", "HEAD:windows.bat") == raw
    for name in ("windows.bat", "notes.txt"):  # new stat: git must compare the content
        os.utime(sandbox.path / name, ns=(10**18, 10**18))
    assert_healthy(sandbox.path)
    assert changes_of(sandbox.path).changed == ()
    assert changes_of(sandbox.path, sandbox.baseline).changed == ()


def test_private_work_root(tmp_path: Path) -> None:
    chosen = tmp_path / "chosen" / "nested"
    first, second = private_work_root(chosen), private_work_root(chosen)
    assert first.parent == chosen and second.parent == chosen and first != second
    assert stat.S_IMODE(first.stat().st_mode) == 0o700
    default = private_work_root(None)  # under the system's temporary directory
    assert default.is_dir()
    default.rmdir()

    blocker = write(tmp_path / "a-file", "x")
    with pytest.raises(ConfigError, match="cannot create a work directory"):
        private_work_root(blocker / "below")


def test_a_relative_work_root_gives_absolute_workspaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--work-root wr` handed each agent `wr/assay-run-.../repo`, a path that means
    nothing in the workspace the agent runs in: every task failed without saying why."""
    monkeypatch.chdir(tmp_path)
    root = private_work_root(Path("wr"))
    assert root.is_absolute() and root.parent == tmp_path / "wr"
