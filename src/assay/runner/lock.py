"""One run per report directory at a time.

Two runs writing one directory would truncate and interleave results.jsonl, mix their
cases/ artifacts and leave whichever report.json came last. A run therefore holds an
exclusive lock on `<report-dir>/.assay.lock` from before it touches results.jsonl until
its report is written. The kernel releases an flock when its holder exits, however it
exits (crash, SIGKILL), so a stale lock file never blocks the next run; the file keeps
the holder's pid only to name it in the error.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from assay.core.files import LOCK_FILE
from assay.errors import ConfigError

__all__ = ["LOCK_FILE", "report_dir_lock"]


logger = logging.getLogger("assay.runner")

# What flock raises when another holder has the lock (EACCES on some systems).
_HELD = {errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES}


@contextlib.contextmanager
def report_dir_lock(report_dir: Path) -> Iterator[None]:
    """Hold `report_dir` for this process; ConfigError at once when another run has it."""
    try:
        import fcntl  # lazy: optional, may be missing here
    except ImportError:  # Windows: no flock; runs there are not protected from each other
        yield
        return
    path = report_dir / LOCK_FILE
    try:
        # Opened without truncation: the holder's pid must survive until we own the lock.
        # Not inherited by agents (PEP 446), so a lingering agent cannot keep the lock.
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ConfigError(f"cannot lock {path}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in _HELD:
                # A file system without locks (some network mounts): run unprotected.
                logger.warning("cannot lock %s (%s); not guarding it", path, exc.strerror)
            else:
                raise ConfigError(
                    f"another assay run is using {report_dir} ({_holder(descriptor)}); "
                    "wait for it to finish or use another directory"
                ) from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _holder(descriptor: int) -> str:
    """`pid N` from the lock file, as its holder wrote it."""
    try:
        text = os.pread(descriptor, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    return f"pid {text}" if text.isdigit() else "pid unknown"
