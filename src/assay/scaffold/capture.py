"""Capturing one side of a change: which files can become fixtures, and why others cannot."""

from __future__ import annotations

from dataclasses import dataclass

from assay.scaffold.change import Change, ChangeSource, Side, SkippedFile, Unavailable

__all__ = ["BINARY_REASON", "CapturedFile", "SideCapture", "capture_side", "is_binary"]

BINARY_REASON = "binary content (a NUL byte, or not valid UTF-8)"


@dataclass(frozen=True)
class CapturedFile:
    source_path: str
    """The path in the repository at the captured ref."""
    content: bytes


@dataclass(frozen=True)
class SideCapture:
    side: Side
    ref: str
    """The full SHA the files were read at."""
    files: tuple[CapturedFile, ...]
    skipped: tuple[SkippedFile, ...]
    absent: frozenset[str]
    """Paths (head-side names) of files the change adds or removes, so not on this side."""


def is_binary(content: bytes) -> bool:
    """What git and reviewers treat as not-text: a NUL byte, or bytes that are not UTF-8."""
    if b"\x00" in content:
        return True
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def capture_side(
    source: ChangeSource, change: Change, *, side: Side, max_file_size: int
) -> SideCapture:
    """Read every changed file on `side`; files that cannot be fixtures are skipped with a reason.

    Skipped: files the change adds (base side) or removes (head side), binary files,
    files over `max_file_size` bytes, and files whose content the source cannot give.
    """
    ref = change.sha(side)
    files: list[CapturedFile] = []
    skipped: list[SkippedFile] = []
    absent: set[str] = set()
    for changed in change.files:
        path = changed.path_on(side)
        if path is None:
            absent.add(changed.path)
            skipped.append(SkippedFile(changed.path, changed.absence(side)))
            continue
        content = source.read(path, ref=ref, max_bytes=max_file_size)
        if isinstance(content, Unavailable):
            skipped.append(SkippedFile(path, content.reason))
        elif is_binary(content):
            skipped.append(SkippedFile(path, BINARY_REASON))
        else:
            files.append(CapturedFile(path, content))
    return SideCapture(side, ref, tuple(files), tuple(skipped), frozenset(absent))
