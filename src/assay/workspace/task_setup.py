"""Fixtures PVYai's harness cannot set up a workspace from, found without running it.

PVYai's materialiser (`materialize.go`) copies the fixture (regular files and directories,
leaving out only directories named exactly `.git`), then runs `git init`, `git add .` and
`git commit -m baseline`, without `--allow-empty`. When a step fails, its benchmark
gives the task status `error` and runs no agent. assay builds its sandbox without git
(`task.py`), so it asks the same questions here, in the same order, and raises
`WorkspaceSetupError` with PVYai's own report of the failure:

- the copy refuses an entry that is neither a regular file nor a directory (assay's
  loader refuses those already, except inside a directory its walk leaves out: one
  named `.git` in another case, such as `.GIT`);
- `git init` fails when the fixture's top holds a `.git` that is not a directory (git
  reads a file there as a link to another repository);
- `git add .` refuses a path with a component git never stores: `.git` in any case, or
  one of NTFS's other spellings of it (`git~1`, `.git.`, `.git :x`: `core.protectNTFS`
  is on by default on every system), unless the fixture's ignore rules leave it out;
- `git commit -m baseline` has nothing to commit: the fixture is empty, holds only
  directories, or its `.gitignore` files ignore every file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from assay.errors import WorkspaceSetupError
from assay.upstream.go.fmt import go_quote

__all__ = ["check_baseline_commit", "git_refuses", "left_out_files"]

_CANNOT = "PVYai cannot set up this task: "
_NOTHING_TO_COMMIT = (
    "git commit -m baseline: exit status 1: On branch master\n\nInitial commit\n\n"
    'nothing to commit (create/copy files and use "git add" to track)'
)
"""What git says to PVYai's baseline commit in a new repository with nothing staged (its
branch is `master` unless the user's git configures another)."""


def left_out_files(fixture: Path, directories: Iterable[str]) -> list[str]:
    """The files PVYai copies into the workspace that assay's fixture walk left out: those
    under a directory named `.git` in another case (`.GIT/config`), git would refuse them.

    `directories` are the fixture's directories (its top aside). Raises WorkspaceSetupError
    for an entry PVYai's copy refuses there, and for a `.git` at the top that is not a
    directory (`git init` fails)."""
    files: list[str] = []
    refused: list[str] = []
    top_gitfile = False
    for directory in ["", *directories]:
        for name in _names(fixture / directory):
            if os.fsencode(name).lower() != b".git":
                continue
            rel = f"{directory}/{name}" if directory else name
            mode = os.lstat(fixture / rel).st_mode
            if name == ".git" and stat.S_ISDIR(mode):
                continue  # PVYai's copy leaves these out too
            if name == ".git" and stat.S_ISREG(mode):
                # Copied, and never seen by git's walk of the work tree, except at the top,
                # where `git init` takes it for a link to another repository.
                top_gitfile = top_gitfile or not directory
                continue
            _walk(fixture, rel, mode, files, refused)
    if refused:
        first = min(refused, key=_walk_order)
        raise WorkspaceSetupError(
            f"{_CANNOT}its copy of the fixture refuses {first}, which is neither a regular "
            "file nor a directory",
            harness_error=(
                f"unsupported fixture entry {go_quote(first)}: only regular files and "
                "directories are supported"
            ),
        )
    if top_gitfile:
        raise WorkspaceSetupError(
            f"{_CANNOT}the fixture's .git is a file, which `git init` reads as a link to "
            "another repository"
        )
    return files


def check_baseline_commit(committed: Iterable[str], added: Iterable[str] = ()) -> None:
    """Raise WorkspaceSetupError when PVYai's `git add .` and `git commit -m baseline` fail
    for a fixture whose files `git add .` takes are `committed` (what assay commits) and
    `added` (files assay leaves out of its workspace that PVYai copies and adds)."""
    committed = list(committed)
    refused = sorted((p for p in [*committed, *added] if git_refuses(p)), key=os.fsencode)
    if refused:
        path = refused[0]
        raise WorkspaceSetupError(
            f"{_CANNOT}`git add .` refuses the fixture's path {path!r} (git stores no "
            "path with a component named .git in any case, nor NTFS's other spellings of it)",
            harness_error=(
                f"git add .: exit status 128: error: invalid path '{path}'\n"
                f"error: unable to add '{path}' to index\nfatal: adding files failed"
            ),
        )
    if not committed:
        raise WorkspaceSetupError(
            f"{_CANNOT}its baseline commit would hold no file (the fixture is empty, holds "
            "only directories, or its .gitignore files ignore every file), and "
            "`git commit -m baseline` refuses to make an empty commit",
            harness_error=_NOTHING_TO_COMMIT,
        )


def git_refuses(path: str) -> bool:
    """Whether `git add` refuses `path` (`/`-separated), as git's `verify_path` does on a
    system that is not Windows with its default config: a component that is `.`, `..` or
    `.git` (any case), or that NTFS would take for `.git`, checked at each component and
    after each backslash (`core.protectNTFS`)."""
    for part in path.split("/"):
        raw = os.fsencode(part)
        if raw in (b"", b".", b"..") or raw.lower() == b".git":
            return True
        starts = [0, *(index + 1 for index, byte in enumerate(raw) if byte == ord("\\"))]
        if any(_ntfs_dotgit(raw[start:]) for start in starts):
            return True
    return False


def _ntfs_dotgit(name: bytes) -> bool:
    """git's `is_ntfs_dotgit`: `.git` or `git~1` (any case), then only dots and spaces up
    to the end, a backslash or a colon."""
    lower = name.lower()
    if lower.startswith(b".git"):
        rest = name[4:]
    elif lower.startswith(b"git~1"):
        rest = name[5:]
    else:
        return False
    for byte in rest:
        if byte in b"\\:":
            return True
        if byte not in b". ":
            return False
    return True


def _walk(fixture: Path, rel: str, mode: int, files: list[str], refused: list[str]) -> None:
    """Sort `rel` and everything under it into the files PVYai copies and the entries its
    copy refuses."""
    if stat.S_ISREG(mode):
        files.append(rel)
    elif stat.S_ISDIR(mode):
        for name in _names(fixture / rel):
            child = f"{rel}/{name}"
            child_mode = os.lstat(fixture / child).st_mode
            if name != ".git" or not stat.S_ISDIR(child_mode):  # PVYai skips those anywhere
                _walk(fixture, child, child_mode, files, refused)
    else:
        refused.append(rel)


def _names(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:  # not a directory we can list: the copy reports it, not this check
        return []


def _walk_order(rel: str) -> tuple[bytes, ...]:
    """Where `filepath.WalkDir` meets `rel`: depth first, each directory's names in order."""
    return tuple(os.fsencode(part) for part in rel.split("/"))
