"""Git objects written directly: blobs, trees and commits in one pack (zlib + SHA-1 in Python).

Starting a git process costs a few milliseconds; hashing and deflating a handful of small
files costs microseconds. So sandboxes write their objects here and start git only where
its own logic matters (`git apply`, `git diff`). The result is an ordinary repository
that `git fsck` accepts.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from assay.isolation.git import COMMIT_IDENTITY

__all__ = [
    "EMPTY_TREE",
    "FILE_MODE",
    "EXECUTABLE_MODE",
    "SYMLINK_MODE",
    "Entry",
    "ObjectStore",
    "Snapshot",
    "object_id",
    "write_commit",
    "write_tree",
]

FILE_MODE = 0o100644
EXECUTABLE_MODE = 0o100755
SYMLINK_MODE = 0o120000
_TREE_MODE = b"40000"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True)
class Entry:
    """One tracked path: its git mode and blob id."""

    mode: int
    sha: str


Snapshot = dict[str, Entry]
"""A whole tree: repo-relative POSIX path -> entry. Every commit is made from one."""

_Node = dict[str, Union["_Node", Entry]]


class ObjectStore:
    """Collects a repository's new objects and writes them as one pack (`flush`).

    One pack and its index instead of loose objects: a loose object needs its own
    `objects/xx/` directory, and creating (and later removing) directories is the
    slowest thing a sandbox does on many filesystems.
    """

    def __init__(self, git_dir: Path) -> None:
        self._pack_dir = git_dir / "objects" / "pack"
        self._known: set[str] = set()
        self._pending: list[tuple[str, bytes]] = []
        """(id, packed entry: type-and-size header + zlib data), in write order."""

    def write(self, kind: bytes, data: bytes) -> str:
        """Add one object of `kind` (blob, tree, commit) and return its id."""
        sha = object_id(kind, data)
        if sha not in self._known:
            self._known.add(sha)
            # Level 1: a sandbox's objects are read a few times at most.
            self._pending.append(
                (sha, _entry_header(_PACK_TYPES[kind], len(data)) + zlib.compress(data, 1))
            )
        return sha

    @property
    def ids(self) -> frozenset[str]:
        """Every object id written to this store."""
        return frozenset(self._known)

    def blob(self, data: bytes) -> str:
        return self.write(b"blob", data)

    def flush(self) -> None:
        """Write every object added since the last flush as `pack-<id>.pack` + `.idx`."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        pack = bytearray(b"PACK" + struct.pack(">II", 2, len(pending)))
        located: list[tuple[bytes, int, int]] = []  # (raw id, crc32, offset)
        for sha, entry in pending:
            located.append((bytes.fromhex(sha), zlib.crc32(entry), len(pack)))
            pack += entry
        checksum = hashlib.sha1(pack, usedforsecurity=False).digest()
        pack += checksum
        name = f"pack-{checksum.hex()}"
        (self._pack_dir / f"{name}.pack").write_bytes(pack)
        # Written last: git only looks for a pack through its index.
        (self._pack_dir / f"{name}.idx").write_bytes(_pack_index(located, checksum))


def object_id(kind: bytes, data: bytes) -> str:
    """The id git gives an object of `kind` (blob, tree, commit) holding `data`."""
    digest = hashlib.sha1(b"%s %d\x00" % (kind, len(data)), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


_PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3}
_LARGE_OFFSET = 0x80000000


def _entry_header(kind: int, size: int) -> bytes:
    """A pack entry's header: type and size, little-endian base-128 with a 4-bit first group."""
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def _pack_index(located: list[tuple[bytes, int, int]], pack_checksum: bytes) -> bytes:
    """A version-2 pack index for objects given as (raw id, crc32, offset)."""
    located = sorted(located)
    fanout = [0] * 256
    for raw, _, _ in located:
        fanout[raw[0]] += 1
    running = 0
    for first in range(256):
        running += fanout[first]
        fanout[first] = running
    small: list[int] = []
    large: list[int] = []
    for _, _, offset in located:
        if offset < _LARGE_OFFSET:
            small.append(offset)
        else:
            small.append(_LARGE_OFFSET | len(large))
            large.append(offset)
    count = len(located)
    body = b"".join(
        [
            b"\xfftOc",
            struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            b"".join(raw for raw, _, _ in located),
            struct.pack(f">{count}I", *(crc for _, crc, _ in located)),
            struct.pack(f">{count}I", *small),
            struct.pack(f">{len(large)}Q", *large),
            pack_checksum,
        ]
    )
    return body + hashlib.sha1(body, usedforsecurity=False).digest()


def write_tree(store: ObjectStore, snapshot: Mapping[str, Entry]) -> str:
    """Write the tree objects of `snapshot` (and every subtree); return the root tree id.

    Raises ValueError when one path is both a file and a directory.
    """
    root: _Node = {}
    for path, entry in snapshot.items():
        *parents, name = path.split("/")
        node = root
        for part in parents:
            child = node.setdefault(part, {})
            if isinstance(child, Entry):
                raise ValueError(f"{path!r} needs {part!r} to be a directory, but it is a file")
            node = child
        if isinstance(node.get(name), dict):
            raise ValueError(f"{path!r} is a file and a directory")
        node[name] = entry
    return _write_node(store, root)


def _write_node(store: ObjectStore, node: _Node) -> str:
    items: list[tuple[bytes, bytes, str]] = []
    for name, value in node.items():
        raw = os.fsencode(name)
        if isinstance(value, Entry):
            items.append((raw, b"%o %s" % (value.mode, raw), value.sha))
        else:
            # git orders a subtree as if its name ended in "/"
            items.append((raw + b"/", _TREE_MODE + b" " + raw, _write_node(store, value)))
    items.sort(key=lambda item: item[0])
    return store.write(
        b"tree", b"".join(head + b"\x00" + bytes.fromhex(sha) for _, head, sha in items)
    )


def write_commit(
    store: ObjectStore,
    *,
    tree: str,
    parents: Sequence[str],
    message: str,
    identity: str = COMMIT_IDENTITY,
) -> str:
    """The one function that makes a commit: a fixed author and committer (`identity`, a
    `gitenv.commit_identity` line: assay's unless said otherwise) and date."""
    lines = [f"tree {tree}", *(f"parent {parent}" for parent in parents)]
    lines += [f"author {identity}", f"committer {identity}", "", message]
    return store.write(b"commit", ("\n".join(lines) + "\n").encode("utf-8"))
