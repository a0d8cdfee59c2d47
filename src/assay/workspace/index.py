"""The index file (`.git/index`, version 2) written directly, with real stat data.

Recording each file's stat lets `git status` trust the work tree without re-reading it,
exactly as after `git add`. Files written in the same clock tick as the index are
"racily clean" to git, which then compares their content instead: still correct.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Mapping
from pathlib import Path

from assay.workspace.objects import Entry

__all__ = ["write_index"]

_MASK = 0xFFFFFFFF
_ENTRY = struct.Struct(">10I20sH")
_NAME_LENGTH_MAX = 0xFFF


def write_index(
    git_dir: Path, snapshot: Mapping[str, Entry], stats: Mapping[str, os.stat_result]
) -> None:
    """Write an index holding `snapshot`, each path with its work-tree stat from `stats`."""
    records = sorted(
        ((os.fsencode(path), entry, stats[path]) for path, entry in snapshot.items()),
        key=lambda record: record[0],
    )
    parts = [b"DIRC", struct.pack(">II", 2, len(records))]
    for name, entry, st in records:
        fixed = _ENTRY.pack(
            (st.st_ctime_ns // 1_000_000_000) & _MASK,
            st.st_ctime_ns % 1_000_000_000,
            (st.st_mtime_ns // 1_000_000_000) & _MASK,
            st.st_mtime_ns % 1_000_000_000,
            st.st_dev & _MASK,
            st.st_ino & _MASK,
            entry.mode,
            st.st_uid & _MASK,
            st.st_gid & _MASK,
            st.st_size & _MASK,
            bytes.fromhex(entry.sha),
            min(len(name), _NAME_LENGTH_MAX),
        )
        # Entries are NUL-padded to a multiple of 8 bytes, with at least one NUL.
        padding = 8 - (len(fixed) + len(name)) % 8
        parts.append(fixed + name + b"\x00" * padding)
    body = b"".join(parts)
    (git_dir / "index").write_bytes(body + hashlib.sha1(body, usedforsecurity=False).digest())
