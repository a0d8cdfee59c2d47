"""What an agent changed in a task workspace, judged against what assay built, not against git.

The agent controls everything under its workspace, `.git` included: repo-local config
can make `git status` run any command (a `filter` driver, an fsmonitor), and the index,
`replace` refs, `core.worktree` or a gitfile can hide any change from it. So assay keeps
the baseline (each tracked file's mode, blob id and size) in its own memory while the
sandbox is built, and afterwards reads the work tree itself and compares. The
workspace's `.git` is never read.

What counts follows `git status --porcelain --untracked-files=all`, PVYai's source: a
new file that the work tree's `.gitignore` files ignore is no change (pytest's
`.pytest_cache/.gitignore` hides that directory, as it does from git), and a fixture file
the fixture's own rules ignore is never tracked (`git add .` skips it), so changing it is
no change either. Only an entry named exactly `.git` is left out of the work tree (git
on Linux: `.GIT` is a file like any other), and an untracked directory holding a
repository of its own (`git init sub`) is one change, `sub/`, its files unread
(`nested_repo`). git decides what the rules match, on a scratch copy of them
(`check-ignore --no-index`), so nothing else the agent wrote takes part. Unlike git,
`.git/info/exclude` and a user's global excludes count for nothing: they are not the
suite's.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import SandboxError
from assay.isolation.git import git_message, run_git
from assay.workspace.nested_repo import is_nested_repository
from assay.workspace.objects import EXECUTABLE_MODE, FILE_MODE, SYMLINK_MODE, Snapshot, object_id
from assay.workspace.workspace_changes import ChangeCollector, WorkspaceChanges

__all__ = [
    "Baseline",
    "BaselineFile",
    "baseline_changes",
    "capture_baseline",
    "ignored_paths",
    "read_ignore_rules",
]

MAX_IGNORE_FILE_BYTES = 1024 * 1024
"""A larger `.gitignore` in the work tree is not read (git would; no suite needs one)."""


@dataclass(frozen=True, slots=True)
class BaselineFile:
    """One file or symlink of the baseline."""

    mode: int
    sha: str
    """The blob id of its content (a symlink's: its target)."""
    size: int


@dataclass(frozen=True)
class Baseline:
    """A task workspace as assay built it, kept where the agent cannot reach it."""

    files: Mapping[str, BaselineFile]
    """The tracked files (those of the baseline commit)."""
    ignore_rules: Mapping[str, bytes] = field(default_factory=dict)
    """The fixture's `.gitignore` files as built (path -> content): what an agent's own
    rules are told apart from."""


def capture_baseline(
    snapshot: Snapshot,
    *,
    stats: Mapping[str, os.stat_result],
    ignore_rules: Mapping[str, bytes] | None = None,
) -> Baseline:
    """The baseline of a work tree just written as `snapshot` (`stats`: each path's stat;
    `ignore_rules`: its `.gitignore` files, path -> content)."""
    files = {
        path: BaselineFile(entry.mode, entry.sha, stats[path].st_size)
        for path, entry in snapshot.items()
    }
    return Baseline(files=files, ignore_rules=dict(ignore_rules or {}))


def baseline_changes(workspace: Path, baseline: Baseline) -> WorkspaceChanges:
    """The changes in the work tree at `workspace` since `baseline`.

    New files the work tree's `.gitignore` files match are `ignored`, not `added`.
    A file replaced by one with the same content is unchanged; renames are exact-content
    moves. Never raises for anything the agent did: a missing or unreadable workspace
    is a workspace whose files are gone.
    """
    present = _work_tree_files(workspace, tracked_directories=_directories_of(baseline.files))
    collector = ChangeCollector()
    for path, known in baseline.files.items():
        if path not in present:
            collector.deleted.add(path)
        elif _content_id(workspace / path, sizes={known.size}) != (known.mode, known.sha):
            collector.modified.add(path)
    new = [path for path in present if path not in baseline.files]
    rules = read_ignore_rules(workspace, present)
    collector.ignored = ignored_paths(new, rules)
    collector.added = set(new) - collector.ignored
    if collector.ignored and rules != baseline.ignore_rules:
        # git status hides them too (PVYai's verdict stands), but a reviewer must see that
        # the agent's own rules did: a test-rigging conftest.py behind a self-ignoring
        # .gitignore passes a task otherwise unseen.
        collector.hidden = collector.ignored - ignored_paths(
            collector.ignored, baseline.ignore_rules
        )
    _pair_renames(collector, workspace, baseline)
    return collector.result()


def _work_tree_files(root: Path, *, tracked_directories: Iterable[str] = ()) -> set[str]:
    """Every regular file and symlink under `root` (symlinks not followed), `.git` left out.

    An entry named exactly `.git` is left out at every depth, as git leaves it out (a
    `.GIT` is a file like any other). A directory that holds no tracked file (none of
    `tracked_directories`) and that git takes for a repository of its own is one entry,
    its name with a `/` after it, as `git status` lists it, and is not entered. A
    directory the agent made unreadable is opened up for its owner first (what
    `remove_sandbox` does too): otherwise whatever it holds would go unseen.
    """
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            return set()
    except OSError:
        return set()
    tracked = set(tracked_directories)
    found: set[str] = set()
    pending = [(str(root), "")]
    while pending:
        directory, prefix = pending.pop()
        for entry in _listing(directory):
            if entry.name == ".git":
                continue
            if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                found.add(prefix + entry.name)
            elif entry.is_dir(follow_symlinks=False):
                name = prefix + entry.name
                if name not in tracked and is_nested_repository(entry.path):
                    found.add(name + "/")
                else:
                    pending.append((entry.path, name + "/"))
    return found


def _directories_of(paths: Iterable[str]) -> set[str]:
    """Every directory that holds one of `paths` (the top aside): what git's index has."""
    directories: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(len(parts), 0, -1):
            directory = "/".join(parts[:depth])
            if directory in directories:
                break
            directories.add(directory)
    return directories


def _listing(directory: str) -> list[os.DirEntry[str]]:
    """The entries of `directory`; none when it is gone or stays unreadable."""
    for _ in range(2):
        try:
            with os.scandir(directory) as listing:
                return list(listing)
        except PermissionError:
            if not _open_up(directory):
                break
        except OSError:  # gone or replaced since it was listed: it holds nothing now
            break
    return []


def _open_up(directory: str) -> bool:
    try:
        os.chmod(directory, stat.S_IMODE(os.lstat(directory).st_mode) | stat.S_IRWXU)
    except OSError:
        return False
    return True


def _content_id(path: Path, *, sizes: Iterable[int]) -> tuple[int, str] | None:
    """(git mode, blob id) of the file or symlink at `path`, or None.

    None when it is neither, cannot be read, or its size is none of `sizes`: no
    comparison needs more, and a huge file is then never read.
    """
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return SYMLINK_MODE, object_id(b"blob", os.fsencode(os.readlink(path)))
        if not stat.S_ISREG(st.st_mode) or st.st_size not in sizes:
            return None
        # O_NONBLOCK and O_NOFOLLOW: a FIFO or symlink swapped in since lstat cannot block us.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with open(fd, "rb") as handle:
            data = handle.read(st.st_size + 1)
    except OSError:
        return None
    if len(data) != st.st_size:  # it changed while we read it
        return None
    mode = EXECUTABLE_MODE if st.st_mode & stat.S_IXUSR else FILE_MODE
    return mode, object_id(b"blob", data)


def _pair_renames(collector: ChangeCollector, workspace: Path, baseline: Baseline) -> None:
    """Turn a deleted file and an added file with the same content into a rename.

    Empty files are never paired, as git never pairs them: any two are alike.
    """
    sources: dict[str, list[str]] = {}
    for path in sorted(collector.deleted):
        known = baseline.files[path]
        if known.size:
            sources.setdefault(known.sha, []).append(path)
    if not sources:
        return
    sizes = {baseline.files[path].size for paths in sources.values() for path in paths}
    for path in sorted(collector.added):
        content = _content_id(workspace / path, sizes=sizes)
        candidates = sources.get(content[1]) if content is not None else None
        if candidates:
            old = candidates.pop(0)
            collector.deleted.discard(old)
            collector.added.discard(path)
            collector.renamed.add((old, path))


def read_ignore_rules(workspace: Path, present: Iterable[str]) -> dict[str, bytes]:
    """Every `.gitignore` regular file of the work tree among `present`: path -> content
    (git skips links)."""
    rules = {}
    for path in present:
        if path.rsplit("/", 1)[-1] != ".gitignore":
            continue
        try:
            st = os.lstat(workspace / path)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_IGNORE_FILE_BYTES:
                continue
            fd = os.open(workspace / path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with open(fd, "rb") as handle:
                rules[path] = handle.read(MAX_IGNORE_FILE_BYTES)
        except OSError:
            continue
    return rules


def ignored_paths(paths: Iterable[str], rules: Mapping[str, bytes]) -> set[str]:
    """Which of `paths` the ignore `rules` (`.gitignore` path -> content) match, as git would.

    git answers for a scratch tree holding only the rules (check-ignore needs no files,
    only their names), so nothing else of the work tree can take part.
    """
    paths = list(paths)
    if not paths or not rules:
        return set()
    with tempfile.TemporaryDirectory(prefix="assay-ignore-") as scratch:
        git_dir, work = Path(scratch, "git"), Path(scratch, "work")
        for directory in (git_dir / "objects", git_dir / "refs", work):
            directory.mkdir(parents=True)
        (git_dir / "HEAD").write_bytes(b"ref: refs/heads/main\n")
        for rel, content in rules.items():
            target = work / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        result = run_git(
            ["--git-dir", str(git_dir), "--work-tree", str(work)]
            + ["check-ignore", "--no-index", "--stdin", "-z"],
            cwd=work,
            stdin=b"".join(os.fsencode(path) + b"\x00" for path in paths),
        )
    if result.returncode not in (0, 1):  # 1: none of them is ignored
        raise SandboxError(f"git check-ignore failed: {git_message(result)}")
    return {os.fsdecode(name) for name in result.stdout.split(b"\x00") if name}
