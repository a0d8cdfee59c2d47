"""Digests of the contents of a case's files, for `--resume`'s fingerprint.

A result reused after its skill or a fixture was edited answers another question, so the
fingerprint holds what those files hold, not only their paths. A directory (a task's
workspace, a rubric's base tree, a skill directory) is read through the one fixture walk
(`_util/fixture_tree.py`), with its limits: names, symlink targets and file bytes. A file
(a fixture, a tarball, a skill file) is hashed as it is. Each path is read once per run,
however many cases share it. What cannot be read is digested as its error: the case
fails the same way, and a fixture made readable again changes the digest.
"""

from __future__ import annotations

import functools
import hashlib
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.fixture_tree import MAX_EXPANDED_BYTES, fixture_entries
from assay.errors import SandboxError

if TYPE_CHECKING:
    from hashlib import _Hash

__all__ = ["ContentDigests", "packaged_prompts_digest"]

_CHUNK = 1024 * 1024


class ContentDigests:
    """The digest of each path's contents, each path read at most once."""

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def of(self, path: Path) -> str:
        key = os.path.realpath(path)
        if key not in self._known:
            self._known[key] = _digest(Path(key))
        return self._known[key]


@functools.cache
def packaged_prompts_digest() -> str:
    """The judge's and the builtin agent's prompts that ship with assay: a new version of
    assay with other prompts grades another way."""
    digest = hashlib.sha256()
    for package in ("assay.grading", "assay.agents"):
        folder = resources.files(package).joinpath("prompts")
        for item in sorted(folder.iterdir(), key=lambda entry: entry.name):
            if item.is_file():
                digest.update(item.name.encode() + b"\0" + item.read_bytes() + b"\0")
    return digest.hexdigest()


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        if path.is_dir():
            digest.update(b"dir\0")
            for kind, entry, rel, target in sorted(fixture_entries(path), key=lambda e: e[2]):
                digest.update(f"{kind}\0{rel}\0{target}\0".encode("utf-8", "surrogateescape"))
                if kind == "file":
                    _update_with_file(digest, entry)
        else:
            digest.update(b"file\0")
            _update_with_file(digest, path)
    except (OSError, SandboxError) as exc:
        return "unreadable:" + type(exc).__name__ + ":" + str(exc)
    return digest.hexdigest()


def _update_with_file(digest: _Hash, path: Path) -> None:
    with open(path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if size > MAX_EXPANDED_BYTES:
            # Over every fixture limit: the sandbox refuses it, reading it would only cost.
            digest.update(f"too large:{size}".encode())
            return
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
        digest.update(b"\0")
