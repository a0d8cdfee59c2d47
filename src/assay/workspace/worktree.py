"""The files of a sandbox being built: every write also stores its blob and keeps its stat.

All writes go through `WorkTree`, which remembers what it created: a path can never be
written through a symlink or a file standing where a directory should be, and the
snapshot it returns is exactly what is on disk.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from assay._util.fixture_tree import DIRECTORY, FILE, SYMLINK, fixture_entries
from assay.core.paths import PathEscape, safe_relative
from assay.errors import SandboxError
from assay.workspace.objects import (
    EXECUTABLE_MODE,
    FILE_MODE,
    SYMLINK_MODE,
    Entry,
    ObjectStore,
    Snapshot,
)

__all__ = ["WorkTree", "repo_path"]


def repo_path(raw: str) -> str:
    """A fixture's destination inside the repo, normalised; it must stay inside and avoid `.git`.

    Raises SandboxError.
    """
    try:
        relative = safe_relative(raw)
    except PathEscape as exc:
        raise SandboxError(f"fixture destination {exc}") from None
    if any(part.casefold() == ".git" for part in relative.parts):
        raise SandboxError(f"fixture destination {raw!r} is inside .git")
    return relative.as_posix()


class WorkTree:
    """The work tree at `root`; blobs go to `store`, stats of the files written to `stats`."""

    def __init__(self, root: Path, store: ObjectStore, *, keep_contents: bool = False) -> None:
        self.root = root
        self.store = store
        self.stats: dict[str, os.stat_result] = {}
        self.contents: dict[str, bytes] | None = {} if keep_contents else None
        """With `keep_contents`: the bytes written at each path (a symlink's target), so
        the diff of an additions-only change can be written without git (`added_diff`)."""
        self.has_attributes = False
        """Whether a `.gitattributes` file was written (git would then convert content)."""
        self.ignore_rules: dict[str, bytes] = {}
        """Every `.gitignore` written: path -> content (the task baseline's ignore rules)."""
        self._kinds: dict[str, str] = {}

    @property
    def directories(self) -> list[str]:
        """Every directory this work tree made (the root aside), relative to it."""
        return [rel for rel, kind in self._kinds.items() if kind == DIRECTORY]

    def put_file(self, rel: str, data: bytes, *, executable: bool) -> Entry:
        """Write a regular file at `rel` (replacing one written before) and store its blob."""
        target = self._claim(rel)
        if rel.rpartition("/")[2] == ".gitignore":
            self.ignore_rules[rel] = data
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755 if executable else 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            self.stats[rel] = os.fstat(fd)
        finally:
            os.close(fd)
        if self.contents is not None:
            self.contents[rel] = data
        return Entry(EXECUTABLE_MODE if executable else FILE_MODE, self.store.blob(data))

    def put_symlink(self, rel: str, target: str) -> Entry:
        """Create a symlink at `rel` pointing at `target` (already checked to stay inside)."""
        path = self._claim(rel)
        os.symlink(target, path)
        self.stats[rel] = os.lstat(path)
        if self.contents is not None:
            self.contents[rel] = os.fsencode(target)
        return Entry(SYMLINK_MODE, self.store.blob(os.fsencode(target)))

    def copy_file(self, source: Path, rel: str) -> Entry:
        """Copy the regular file `source` to `rel`, keeping its executable bit."""
        try:
            mode = os.stat(source).st_mode
            if not stat.S_ISREG(mode):  # checked first: opening a FIFO would block
                raise SandboxError(f"fixture {source} is not a regular file")
            with open(source, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise SandboxError(f"cannot read fixture {source}: {exc.strerror}") from None
        return self.put_file(rel, data, executable=bool(mode & stat.S_IXUSR))

    def copy_tree(self, source: Path, prefix: str = "") -> Snapshot:
        """Copy every file, symlink and directory under `source` to `prefix` (default: the root).

        `.git` entries are left out. A symlink is kept as a symlink when it resolves
        inside `source`; one that is absolute or leads outside raises SandboxError, as
        does any special file (fifo, socket, device).
        """
        snapshot: Snapshot = {}
        for kind, path, rel, target in fixture_entries(source):
            dest = f"{prefix}/{rel}" if prefix else rel
            if kind == SYMLINK:
                snapshot[dest] = self.put_symlink(dest, target)
            elif kind == DIRECTORY:
                self._make_dirs(dest)  # empty directories are part of a workspace too
            else:
                snapshot[dest] = self.copy_file(path, dest)
        return snapshot

    def scan(self) -> Snapshot:
        """Read the work tree back from disk (after git changed it); refreshes `stats`."""
        snapshot: Snapshot = {}
        self.stats = {}
        pending = [(str(self.root), "")]
        while pending:
            directory, rel_dir = pending.pop()
            with os.scandir(directory) as listing:
                items = list(listing)
            for item in items:
                if item.name == ".git":
                    continue
                rel = rel_dir + item.name
                self.has_attributes |= item.name == ".gitattributes"
                st = item.stat(follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    blob = self.store.blob(os.fsencode(os.readlink(item.path)))
                    snapshot[rel] = Entry(SYMLINK_MODE, blob)
                elif stat.S_ISDIR(st.st_mode):
                    pending.append((item.path, rel + "/"))
                    continue
                elif stat.S_ISREG(st.st_mode):
                    with open(item.path, "rb") as handle:
                        blob = self.store.blob(handle.read())
                    mode = EXECUTABLE_MODE if st.st_mode & stat.S_IXUSR else FILE_MODE
                    snapshot[rel] = Entry(mode, blob)
                else:
                    raise SandboxError(f"{item.path}: unexpected special file in the work tree")
                self.stats[rel] = st
        return snapshot

    def _make_dirs(self, rel: str) -> None:
        """Create directory `rel` and its parents unless this work tree already made them."""
        parts = rel.split("/")
        for depth in range(1, len(parts) + 1):
            directory = "/".join(parts[:depth])
            kind = self._kinds.get(directory)
            if kind is None:
                (self.root / directory).mkdir()
                self._kinds[directory] = DIRECTORY
            elif kind != DIRECTORY:
                raise SandboxError(f"{rel!r} needs {directory!r} to be a directory, not a file")

    def _claim(self, rel: str) -> Path:
        """Make `rel`'s parent directories and free `rel` itself for a new file or symlink."""
        parent, _, _ = rel.rpartition("/")
        if parent and self._kinds.get(parent) != DIRECTORY:
            self._make_dirs(parent)
        kind = self._kinds.get(rel)
        if kind == DIRECTORY:
            raise SandboxError(f"{rel!r} is needed both as a file and as a directory")
        path = self.root / rel
        if rel.rpartition("/")[2] == ".gitattributes":
            self.has_attributes = True
        if kind is not None:
            # a later layer replaces this file (e.g. a fixture over a supporting file)
            os.unlink(path)
        self._kinds[rel] = FILE
        return path
