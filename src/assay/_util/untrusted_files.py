"""Reading a file that a program assay does not trust may have planted (an agent's answer).

assay reads it as its own user, outside any OS sandbox, after the program wrote where it
liked. So the file is taken only for what it claims to be: a symbolic link is never
followed, neither the file nor the directory holding it (a link to `/dev/zero` would fill
memory, one to a host file the program cannot see would hand it over); only a regular file
is read (a FIFO would block the event loop, and every case with it, past any timeout; a
directory or a socket holds no answer); it is opened non-blocking, so even opening cannot
wait for a writer; and no more than the caller's limit is read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Literal

__all__ = ["UntrustedFileError", "file_kind", "open_untrusted", "read_untrusted"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for a message: `a FIFO (named pipe)`."""
    return next((name for test, name in _KINDS if test(mode)), "not a file")


class UntrustedFileError(Exception):
    """The file is not one assay reads; `problem` says why, as the end of a sentence whose
    subject is the file ("is a symbolic link"), and `reason` which rule it broke."""

    def __init__(self, problem: str, reason: Literal["link", "kind", "size"]) -> None:
        super().__init__(problem)
        self.problem = problem
        self.reason = reason


def open_untrusted(path: Path) -> BinaryIO:
    """The regular file at `path`, opened for reading without following any link.

    Raises FileNotFoundError when there is nothing there, UntrustedFileError when what is
    there is not a regular file (or is reached through a link), OSError otherwise.
    """
    try:
        directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            what = "a symbolic link" if path.parent.is_symlink() else "not a directory"
            raise UntrustedFileError(f"is in {path.parent}, which is {what}", "link") from None
        raise
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        descriptor = os.open(path.name, flags, dir_fd=directory)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UntrustedFileError("is a symbolic link", "link") from None
        if exc.errno == errno.ENXIO:  # what opening a socket says
            raise UntrustedFileError("is a socket, not a regular file", "kind") from None
        raise
    finally:
        os.close(directory)
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise UntrustedFileError(f"is {file_kind(mode)}, not a regular file", "kind")
    return open(descriptor, "rb")


def read_untrusted(path: Path, *, max_bytes: int) -> bytes:
    """The whole regular file at `path` (see `open_untrusted`), refused past `max_bytes`
    (UntrustedFileError) before any of it is read, and read no further if it grows."""
    with open_untrusted(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(max_bytes + 1) if size <= max_bytes else b""
    size = max(size, len(data))
    if size > max_bytes:
        raise UntrustedFileError(f"is {size} bytes, over the {max_bytes} byte limit", "size")
    return data
