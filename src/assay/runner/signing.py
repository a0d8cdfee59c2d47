"""The key that signs a report directory's results.jsonl, and where it is kept.

An agent under test may reach the report directory (always without a sandbox): a line
it appends must not count on `--resume`. Each line therefore carries an HMAC under a
random key made when the run starts. The run keeps the key in memory; for `--resume`
it is also written, mode 0600, under the user's state directory
(`$XDG_STATE_HOME/assay/keys/`, default `~/.local/state`), named by a hash of the report
directory's real path. The report directory, which is uploaded and shared, never holds
it, and inside the sandbox `HOME` is an empty tmpfs, so the agent cannot read it. With
`--isolation none` an agent running as the same user could: the sandbox is what makes
the signature hold against a hostile agent, the key file only what lets a resume check it.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

__all__ = ["key_file", "load_key", "new_key"]

_KEY_BYTES = 32


def _state_dir() -> Path:
    configured = os.environ.get("XDG_STATE_HOME")
    if configured and os.path.isabs(configured):
        return Path(configured)
    return Path.home() / ".local" / "state"


def key_file(report_dir: Path) -> Path:
    """Where the key of `report_dir` lives."""
    name = hashlib.sha256(os.path.realpath(report_dir).encode()).hexdigest()[:32]
    return _state_dir() / "assay" / "keys" / f"{name}.key"


def new_key(report_dir: Path) -> bytes:
    """A fresh key for `report_dir`, saved for `--resume` when the state dir is writable."""
    key = secrets.token_bytes(_KEY_BYTES)
    path = key_file(report_dir)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.unlink(missing_ok=True)  # a file someone else made (other mode, a link) goes
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with open(descriptor, "wb") as out:
            out.write(key)
    except OSError:
        pass  # the run still signs; a resume of it will say the key is missing
    return key


def load_key(report_dir: Path) -> bytes | None:
    """The saved key of `report_dir`; None when there is none (or it is not ours alone)."""
    path = key_file(report_dir)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with open(descriptor, "rb") as stream:
        info = os.fstat(stream.fileno())
        if info.st_mode & 0o077 or info.st_uid != os.getuid():
            return None
        key = stream.read(_KEY_BYTES + 1)
    return key if len(key) == _KEY_BYTES else None
