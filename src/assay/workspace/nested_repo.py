"""Whether git takes a directory of the work tree for another repository, as `git status` does.

`git status --untracked-files=all` does not walk into an untracked directory that holds
a repository of its own (`git init sub`, a clone): it lists the directory once, `?? sub/`,
and PVYai's changed files then name `sub`. git decides it (`is_nonbare_repository_dir`)
by the directory's `.git`: a directory git accepts as a repository, or a file `gitdir:
<path>` naming one (or a `.git` file it cannot read). A repository is what
`is_git_directory` accepts: a `HEAD` that is a symbolic ref to `refs/...` or an object
id, and searchable `objects` and `refs` directories (in the common directory a
`commondir` file names, for a linked worktree's).

Only what those tests need is read, a few hundred bytes at most, never blocking (a FIFO
reads as empty); the answer is all that comes of it. A `gitdir:` line may name a place
outside the workspace, as git would follow it.
"""

from __future__ import annotations

import os
import stat

__all__ = ["is_nested_repository"]

_MAX_GITFILE_BYTES = 1 << 20
"""git reads no larger `.git` file (`read_gitfile_gently`)."""
_HEAD_BYTES = 255
_HEX = frozenset(b"0123456789abcdefABCDEF")


def is_nested_repository(directory: str) -> bool:
    """Whether the directory at `directory` holds a repository of its own, to git."""
    dot_git = os.path.join(directory, ".git")
    try:
        st = os.stat(dot_git)  # git follows a link here
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return _is_git_directory(dot_git)
    if st.st_size > _MAX_GITFILE_BYTES:
        return False
    try:
        data = _read(dot_git, st.st_size + 1)
    except OSError:
        return True  # git: a `.git` file it cannot open or read still marks a repository
    if len(data) < st.st_size:
        return True
    data = data[: st.st_size].rstrip(b"\r\n")
    if len(data) < 9 or not data.startswith(b"gitdir: "):
        return False
    target = os.fsdecode(data[8:].split(b"\x00", 1)[0])
    return _is_git_directory(os.path.join(directory, target))


def _is_git_directory(path: str) -> bool:
    """git's `is_git_directory`: a valid HEAD, then `objects` and `refs` to search."""
    if not _valid_head(os.path.join(path, "HEAD")):
        return False
    common = _common_dir(path)
    return all(os.access(os.path.join(common, name), os.X_OK) for name in ("objects", "refs"))


def _valid_head(path: str) -> bool:
    """git's `validate_headref`: a link into `refs/`, `ref: refs/...`, or an object id."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return os.fsencode(os.readlink(path)).startswith(b"refs/")
        head = _read(path, _HEAD_BYTES)
    except OSError:
        return False
    if head.startswith(b"ref:"):
        if head[4:].lstrip(b" \t\n\r").startswith(b"refs/"):
            return True
    return len(head) >= 40 and all(byte in _HEX for byte in head[:40])


def _common_dir(git_dir: str) -> str:
    """Where a repository keeps its objects and refs: a linked worktree's `commondir`."""
    try:
        common = _read(os.path.join(git_dir, "commondir"), _MAX_GITFILE_BYTES)
    except OSError:
        return git_dir
    return os.path.join(git_dir, os.fsdecode(common.rstrip(b"\r\n")))


def _read(path: str, limit: int) -> bytes:
    """At most `limit` bytes of the file at `path`, never waiting for a writer."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        chunks = []
        while limit > 0:
            chunk = os.read(fd, limit)
            if not chunk:
                break
            chunks.append(chunk)
            limit -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
