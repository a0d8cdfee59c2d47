"""A sandbox repository under construction: skeleton, commits, branches, index, diff.

The skeleton is the least git accepts as a repository: HEAD, config, `objects/`, `refs/`
(branches live in `packed-refs`), no templates or sample hooks. Every directory counts:
creating and removing one is the slowest step of a build on many filesystems.
Nothing here reads user or system configuration.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from assay.errors import SandboxError
from assay.isolation.git import COMMIT_IDENTITY, git_output
from assay.workspace.index import write_index
from assay.workspace.objects import ObjectStore, Snapshot, write_commit, write_tree
from assay.workspace.worktree import WorkTree

__all__ = ["BASE_BRANCH", "EVAL_BRANCH", "RepoBuilder", "branch_diff", "changed_paths"]

BASE_BRANCH = "main"
EVAL_BRANCH = "eval"

_CORE_CONFIG = (
    "[core]\n"
    "\trepositoryformatversion = 0\n"
    "\tfilemode = true\n"
    "\tbare = false\n"
    "\tlogallrefupdates = true\n"
)
# Blobs hold the bytes exactly as they are in the work tree. When a fixture brings a
# .gitattributes, unsetting the conversion attributes in info/attributes (which outranks
# it) keeps git from seeing CRLF, `ident` or filter-driven files as modified.
_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"
_REPOSITORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+")


class RepoBuilder:
    """The repository at `path`; HEAD names `head_branch` from the start (unborn until checkout).

    `user` (name, email) is written to the repository's own config as `user.name` and
    `user.email`, so that a `git commit` in it needs no identity from elsewhere.
    """

    def __init__(
        self,
        path: Path,
        *,
        head_branch: str,
        repository: str | None = None,
        keep_contents: bool = False,
        user: tuple[str, str] | None = None,
    ) -> None:
        self.path = path
        self.git_dir = path / ".git"
        os.makedirs(self.git_dir / "objects" / "pack")
        (self.git_dir / "refs").mkdir()
        config = _CORE_CONFIG
        if repository is not None:
            if not _REPOSITORY.fullmatch(repository) or ".." in repository:
                raise SandboxError(f"repository {repository!r} is not of the form owner/repo")
            config += (
                '[remote "origin"]\n'
                f"\turl = https://github.com/{repository}.git\n"
                "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
            )
        if user is not None:
            name, email = user
            config += f"[user]\n\tname = {_config_value(name)}\n\temail = {_config_value(email)}\n"
        (self.git_dir / "config").write_text(config, encoding="utf-8")
        (self.git_dir / "HEAD").write_text(f"ref: refs/heads/{head_branch}\n", encoding="utf-8")
        self.store = ObjectStore(self.git_dir)
        self.work = WorkTree(path, self.store, keep_contents=keep_contents)

    def commit(
        self,
        snapshot: Snapshot,
        *,
        parents: Iterable[str] = (),
        message: str,
        identity: str = COMMIT_IDENTITY,
    ) -> str:
        """Commit `snapshot` (not necessarily what is on disk) and return the commit id;
        `identity` is its author and committer line (`gitenv.commit_identity`)."""
        try:
            tree = write_tree(self.store, snapshot)
        except ValueError as exc:
            raise SandboxError(str(exc)) from None
        return write_commit(
            self.store, tree=tree, parents=tuple(parents), message=message, identity=identity
        )

    def sync(self) -> None:
        """Put everything built so far on disk, so that a git process sees it."""
        self.store.flush()
        info = self.git_dir / "info"
        if self.work.has_attributes and not info.exists():
            info.mkdir()
            (info / "attributes").write_text(_ATTRIBUTES, encoding="utf-8")

    def check_out(self, branches: Mapping[str, str], *, snapshot: Snapshot) -> None:
        """Point `branches` at their commits; put `snapshot` (HEAD's tree, on disk) in the index."""
        self.sync()
        refs = [f"{commit} refs/heads/{name}\n" for name, commit in sorted(branches.items())]
        packed = "# pack-refs with: peeled fully-peeled sorted \n" + "".join(refs)
        (self.git_dir / "packed-refs").write_text(packed, encoding="ascii")
        write_index(self.git_dir, snapshot, self.work.stats)


def _config_value(value: str) -> str:
    """`value` as `git config` writes it: as is, unless it needs quotes (`"`, `\\`, `#`, `;`,
    or space at either end); a line break cannot be one."""
    if any(char in value for char in "\n\r\x00"):
        raise SandboxError(f"{value!r} cannot be a git config value")
    if value == value.strip() and not any(char in value for char in '"\\#;'):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def changed_paths(base: Snapshot, head: Snapshot) -> tuple[str, ...]:
    """Every path whose content, mode or existence differs, in git's (byte) order."""
    paths = {path for path in base.keys() | head.keys() if base.get(path) != head.get(path)}
    return tuple(sorted(paths, key=os.fsencode))


def branch_diff(path: Path) -> str:
    """`git diff main...eval` in the repo at `path`, as text."""
    raw = git_output(
        ["diff", "--no-color", "--no-ext-diff", f"{BASE_BRANCH}...{EVAL_BRANCH}"], cwd=path
    )
    return raw.decode("utf-8", "replace")
