"""Tarballs from suites (Cassandra's `base.tar.gz`) checked before anything is extracted.

A member is unsafe when its name is absolute or climbs out with `..`, when it is a
device or FIFO, or when it is a link whose target lies outside the extraction directory.
A tarball is refused as a whole when it would expand past a size or member-count limit
(a decompression bomb would otherwise fill the disk once per attempt).
Symlinks are followed virtually in archive order, so a chain of individually harmless
links (`a -> .`, then `b -> a/..`) is caught too.
"""

from __future__ import annotations

import tarfile
import zlib
from pathlib import Path, PurePosixPath

from assay._util.display import human_size
from assay._util.paths import PathEscape, safe_relative
from assay.errors import SandboxError

__all__ = ["TARBALL_SUFFIXES", "check_tarball", "extract_tarball", "is_tarball"]

TARBALL_SUFFIXES = (".tar.gz", ".tgz", ".tar")
"""What a base state may be besides a directory (extraction reads any tar compression)."""


def is_tarball(path: Path) -> bool:
    return path.name.lower().endswith(TARBALL_SUFFIXES)


_MAX_LINK_DEPTH = 40
MAX_EXPANDED_BYTES = 1024**3
"""A base state larger than 1 GiB is not a code-review fixture."""
MAX_MEMBERS = 100_000


class _Escape(Exception):
    pass


def check_tarball(path: Path) -> list[str]:
    """Every problem that makes the tarball unsafe or unreadable; empty when it is fine."""
    try:
        with tarfile.open(path, "r:*") as archive:
            members = archive.getmembers()
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        return [f"{path.name} is not a readable tarball: {exc}"]
    problems: list[str] = []
    if len(members) > MAX_MEMBERS:
        problems.append(f"{path.name} has {len(members)} members, over the {MAX_MEMBERS} limit")
    # Declared sizes are what extraction writes, so this bounds the disk it can take.
    expanded = sum(member.size for member in members if member.isreg())
    if expanded > MAX_EXPANDED_BYTES:
        problems.append(
            f"{path.name} expands to {human_size(expanded)}, over the "
            f"{human_size(MAX_EXPANDED_BYTES)} limit"
        )
    links: dict[str, str] = {}
    directories: set[str] = set()
    for member in members:
        problem = _member_problem(member, links) or _replaces_directory(member, directories)
        if problem:
            # PathEscape's messages name the path themselves.
            name = "" if problem.startswith(repr(member.name)) else f"{member.name!r} "
            problems.append(f"{path.name}: member {name}{problem}")
        elif member.issym():
            links[_normal(member.name)] = member.linkname
    return problems


def extract_tarball(path: Path, dest: Path) -> None:
    """Extract into `dest` (created if needed); raises SandboxError for any unsafe member."""
    problems = check_tarball(path)
    if problems:
        raise SandboxError("refusing to extract an unsafe tarball:\n" + "\n".join(problems))
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(path, "r:*") as archive:
            # The "data" filter repeats the checks against the real disk (defence in depth).
            archive.extractall(dest, filter="data")
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise SandboxError(f"cannot extract {path.name}: {exc}") from exc


def _replaces_directory(member: tarfile.TarInfo, directories: set[str]) -> str | None:
    """A file or link whose name an earlier member used as a directory (`d/x`, then `d`):
    extraction would fail on it half-way. Records the directories `member` implies."""
    name = _normal(member.name)
    if not member.isdir() and name in directories:
        return "replaces a directory extracted before it"
    parts = name.split("/")
    directories.update("/".join(parts[:end]) for end in range(1, len(parts)))
    if member.isdir():
        directories.add(name)
    return None


def _member_problem(member: tarfile.TarInfo, links: dict[str, str]) -> str | None:
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        kind = (
            "a FIFO"
            if member.isfifo()
            else "a device"
            if member.isdev()
            else "not a regular file, directory or link"
        )
        return f"is {kind}"
    if _normal(member.name) == "":
        return None if member.isdir() else "has an empty name"
    try:
        relative = safe_relative(member.name)
    except PathEscape as exc:
        return str(exc)
    parent = list(relative.parts[:-1])
    try:
        resolved_parent = _resolve(parent, links, 0)
        if relative.as_posix() in links and not member.issym():
            return "replaces a symlink extracted before it"
        if member.issym():
            if member.linkname.startswith("/"):
                return f"is a symlink to the absolute path {member.linkname!r}"
            _resolve(resolved_parent + member.linkname.split("/"), links, 0)
        elif member.islnk():
            _resolve(safe_relative(member.linkname).parts, links, 0)
    except (_Escape, PathEscape):
        target = f" (-> {member.linkname!r})" if member.issym() or member.islnk() else ""
        return f"leads outside the extraction directory{target}"
    return None


def _resolve(parts: list[str] | tuple[str, ...], links: dict[str, str], depth: int) -> list[str]:
    """Follow `parts` through the archive's symlinks; raise _Escape when they leave the root."""
    if depth > _MAX_LINK_DEPTH:
        raise _Escape
    resolved: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                raise _Escape
            resolved.pop()
            continue
        resolved.append(part)
        target = links.get("/".join(resolved))
        if target is not None:
            if target.startswith("/"):
                raise _Escape
            resolved = _resolve(resolved[:-1] + target.split("/"), links, depth + 1)
    return resolved


def _normal(name: str) -> str:
    return "/".join(p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", "."))
