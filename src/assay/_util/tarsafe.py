"""Tarballs from suites (Cassandra's `base.tar.gz`) checked before anything is extracted.

A member's name is read as Cassandra's `extractTarGz` reads it: joined to the extraction
directory with Go's `filepath.Join` on Linux, so `sub/../math.go` is `math.go`, `./x` is
`x`, and only `/` separates (`a:b.txt` and `a\\b` are plain names); it must stay inside
that directory, as `util.ValidatePathInRoot` requires. A member is unsafe when its name
is absolute or leads out with `..`, when it is a device or FIFO, or when it is a link
whose target lies outside the extraction directory. A tarball is refused as a whole when
it would expand past a size or member-count limit (a decompression bomb would otherwise
fill the disk once per attempt). The members are read one by one (`tarheaders`, which
reads them as `tarfile` does, a few microseconds each, and refuses headers it would read
another way or that would cost unbounded memory) and the check stops the moment a limit
is passed, keeping nothing of the members it has read but what the link checks need.
Symlinks are followed virtually in archive order, so a chain of individually harmless
links (`a -> .`, then `b -> a/..`) is caught too; like the kernel's path walk, at most 40
links are followed in one name (past that the name is refused, as extraction would fail
on it with ELOOP).

The work per member is linear in its name. A member name or link target is refused past
`MAX_NAME_BYTES` (4096 bytes, Linux's PATH_MAX: no path that long can be opened, so no
real fixture holds one) or `MAX_NAME_DEPTH` (256 components, where a real tree is
rarely 30 deep). What is kept of the names read is a hash per directory (Python's, 64 bits)
and a 16-byte key per link (BLAKE2b of its joined name), never every prefix as a string:
a member whose parent directory is known adds nothing, and each new directory costs its
name's length once.
The directories a tarball makes (its own and those its names imply) are bounded like
its members, by `MAX_MEMBERS`, and the link targets kept in total by
`MAX_LINK_TARGET_BYTES`. A name is walked through the links a component at a time only
when one of its components ends a link's name, and those walks are bounded in all
(`_MAX_LINK_STEPS`, past which the tarball is refused). So a 207-byte gzip holding one
name of 20,000 components is refused at once, in a few MB.

Extraction writes each member under its joined name and leaves hard links out, as
Cassandra's `extractTarGz` does (it writes directories, regular files and symlinks only):
the base has no file where the tarball holds a hard link. Their targets are still
checked, like every member's. A symlink whose name is already taken (by a file, a
directory or another link) fails the extraction as Go's `os.Symlink` does (`file
exists`): that tarball is safe, so the check lets it pass and the case fails as it runs.

The name says the compression: `.tar.gz` / `.tgz` are gzip and nothing else, `.tar` is
uncompressed. A tarball that passed is remembered (by path, size, mtime and inode), so
a case's attempts extract it without walking it again.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from assay._util.display import human_size
from assay._util.fixture_tree import MAX_EXPANDED_BYTES, MAX_MEMBERS
from assay._util.tarheaders import Member, Refused, read_members
from assay.core.paths import PathEscape, safe_relative
from assay.errors import SandboxError

__all__ = [
    "MAX_LINK_TARGET_BYTES",
    "MAX_NAME_BYTES",
    "MAX_NAME_DEPTH",
    "TARBALL_SUFFIXES",
    "check_tarball",
    "extract_tarball",
    "is_tarball",
]

TARBALL_SUFFIXES = (".tar.gz", ".tgz", ".tar")
"""What a base state may be besides a directory."""


def is_tarball(path: Path) -> bool:
    return path.name.lower().endswith(TARBALL_SUFFIXES)


MAX_NAME_BYTES = 4096
"""The longest member name or link target, in bytes (Linux's PATH_MAX)."""

MAX_NAME_DEPTH = 256
"""The most `/`-separated components in a member name or link target."""

MAX_LINK_TARGET_BYTES = 4 * 1024**2
"""The link targets a tarball's symlinks may name, in bytes all together."""

_MAX_LINKS_FOLLOWED = 40
"""Links followed in one name before it counts as a loop (the kernel's MAXSYMLINKS)."""

_MAX_PROBLEMS = 20
"""Problems listed before the check stops (each names a member; a hostile tarball may
have a hundred thousand bad ones)."""

_MAX_LINK_STEPS = 2_000_000
"""Path components walked through the symlinks in all (a name is walked only when one of
its components is the last of a link's name): a tarball whose links make its names cost
more is refused rather than checked for minutes."""


class _Escape(Exception):
    pass


class _TooCostly(Exception):
    """The names walked through the archive's symlinks passed `_MAX_LINK_STEPS`."""


class _Links:
    """The archive's symlinks read so far: each one's target by the key of its name, the
    last components of their names, and the steps walked through them."""

    def __init__(self) -> None:
        self.targets: dict[bytes, str] = {}
        self.leaves: set[str] = set()
        self.steps = 0

    def add(self, joined: str, target: str) -> None:
        self.targets[_key(joined)] = target
        self.leaves.add(joined.rpartition("/")[2])


class _NameTaken(Exception):
    """A symlink member over a name already extracted (Go's `os.Symlink`: file exists)."""


def _mode(path: Path) -> Literal["r:gz", "r:"]:
    return "r:" if path.name.lower().endswith(".tar") else "r:gz"


def _members(path: Path) -> Iterator[Member]:
    """The tarball's members one at a time, as tarfile reads them (`tarheaders`)."""
    return read_members(path, gzipped=_mode(path) == "r:gz")


_passed: set[tuple[str, int, int, int]] = set()
"""Tarballs checked and found safe in this process (path, size, mtime_ns, inode)."""


def _identity(path: Path) -> tuple[str, int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (os.path.realpath(path), info.st_size, info.st_mtime_ns, info.st_ino)


def check_tarball(path: Path) -> list[str]:
    """Every problem that makes the tarball unsafe or unreadable; empty when it is fine.

    Past a limit the check stops at once with that problem alone.
    """
    identity = _identity(path)
    if identity is not None and identity in _passed:
        return []
    problems: list[str] = []
    links = _Links()
    directories = _Directories()
    count = expanded = link_bytes = 0
    try:
        for member in _members(path):
            count += 1
            if count > MAX_MEMBERS:
                return [f"{path.name} has more than {MAX_MEMBERS} members, over the limit"]
            # Declared sizes are what extraction writes: this bounds the disk it takes.
            expanded += member.size if member.isreg() else 0
            if expanded > MAX_EXPANDED_BYTES:
                limit = human_size(MAX_EXPANDED_BYTES)
                return [f"{path.name} expands past the {limit} limit"]
            name = ""  # where extraction writes it, once no problem stands in the way
            problem = _name_problem(member)
            if problem is None:
                problem, name = _member_problem(member, links)
                problem = problem or directories.replaced(member, name)
            if problem:
                problems.append(f"{path.name}: member {_shown(member.name)} {problem}")
                if len(problems) >= _MAX_PROBLEMS:
                    problems.append(f"{path.name}: stopped after {_MAX_PROBLEMS} problems")
                    return problems
            elif member.issym():
                link_bytes += len(member.linkname)
                if link_bytes > MAX_LINK_TARGET_BYTES:
                    limit = human_size(MAX_LINK_TARGET_BYTES)
                    return [f"{path.name}: its symlinks' targets take more than {limit}"]
                links.add(name, member.linkname)
            # Each directory extraction makes is kept (as a key): bound them like members.
            if len(directories) > MAX_MEMBERS:
                return [f"{path.name} makes more than {MAX_MEMBERS} directories, over the limit"]
    except Refused as refused:
        return [f"{path.name} {refused}"]
    except _TooCostly:
        steps = f"{_MAX_LINK_STEPS:,}"
        return [f"{path.name}: its symlinks make its names cost more than {steps} steps to check"]
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        kind = " (a .tar.gz must be gzip)" if _mode(path) == "r:gz" else ""
        return [f"{path.name} is not a readable tarball{kind}: {exc}"]
    if not problems and identity is not None:
        _passed.add(identity)
    return problems


def extract_tarball(path: Path, dest: Path) -> None:
    """Extract into `dest` (created if needed); raises SandboxError for any unsafe member,
    and for a symlink over a name already extracted (`file exists`, as in Cassandra)."""
    problems = check_tarball(path)
    if problems:
        raise SandboxError("refusing to extract an unsafe tarball:\n" + "\n".join(problems))
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(path, _mode(path)) as archive:
            archive.extractall(dest, filter=_as_cassandra_extracts)
    except _NameTaken as exc:
        raise SandboxError(str(exc)) from None
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise SandboxError(f"cannot extract {path.name}: {exc}") from exc


def _as_cassandra_extracts(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """The member under its joined name (`sub/../a` is written as `a`, with no `sub`
    directory made for it). Cassandra's extraction skips hard links, and a symlink over a
    name already on disk fails it; every other member goes through the "data" filter,
    which repeats the checks against the real disk (defence in depth)."""
    if member.islnk():
        return None
    name = _joined(member.name)  # check_tarball refused every name that leaves `dest`
    if not name:
        return None  # the root itself (`.`, `./`): it exists, as Go's MkdirAll leaves it
    target = os.path.join(dest, name)
    if member.issym() and os.path.lexists(target):
        raise _NameTaken(f"symlink {member.linkname} {target}: file exists")
    return tarfile.data_filter(member.replace(name=name, deep=False), dest)


def _shown(name: str) -> str:
    """A member's name in a problem: quoted, and cut when it is over the name limit."""
    if len(name) <= MAX_NAME_BYTES:
        return repr(name)
    return f"{name[:80]!r}... ({len(name)} characters)"


def _name_problem(member: Member) -> str | None:
    """A name or link target past the length or depth limit (checked before any other
    work on it, which is linear in its length)."""
    name, linkname = member.name, member.linkname
    # A character is at most 4 bytes: most names are within the limits without encoding.
    short = _SURELY_SHORT
    if len(name) <= short and len(linkname) <= short:
        if name.count("/") < MAX_NAME_DEPTH and linkname.count("/") < MAX_NAME_DEPTH:
            return None
    for what, text in (("name", name), ("link target", linkname)):
        size = len(text.encode("utf-8", "surrogateescape"))
        if size > MAX_NAME_BYTES:
            return f"has a {what} of {size} bytes, over the limit of {MAX_NAME_BYTES}"
        depth = text.count("/") + 1
        if depth > MAX_NAME_DEPTH:
            return f"has a {what} of {depth} path components, over the limit of {MAX_NAME_DEPTH}"
    return None


_SURELY_SHORT = MAX_NAME_BYTES // 4
"""Characters in a name surely within the byte limit (4 bytes at most a character)."""


def _key(joined: str) -> bytes:
    """The 16-byte key of a joined name ("" is the root): a hash of its bytes, one C call."""
    return hashlib.blake2b(joined.encode("utf-8", "surrogateescape"), digest_size=16).digest()


_ROOT = hashlib.blake2b(digest_size=16)


def _step(state: hashlib.blake2b, part: str, *, first: bool) -> hashlib.blake2b:
    """The hash state of a name one component longer: `_key` of `a/b/c`, a part at a time."""
    state = state.copy()
    encoded = part.encode("utf-8", "surrogateescape")
    state.update(encoded if first else b"/" + encoded)
    return state


class _Directories:
    """The directories extraction makes, each kept as the hash of its joined name. This
    check keeps extraction from failing half-way, not names inside the root (links are
    keyed by BLAKE2b): a collision, with a seed per process, would refuse a tarball or
    leave its failure to extraction. Members come grouped by directory, so the last
    one's parent is remembered."""

    def __init__(self) -> None:
        self.known: set[int] = set()
        self.last_parent = ""

    def replaced(self, member: Member, name: str) -> str | None:
        """A file whose name an earlier member used as a directory (`d/x`, then `d`):
        extraction would fail on it half-way. Records the directories `member` implies:
        when its parent is known, so are all its ancestors (they were recorded with it)
        and nothing is added; else the new ones, deepest first, down to a known one, so
        each directory costs its name's length once. (A symlink there fails as
        Cassandra's does, `file exists`, when the case runs.) `name` is the member's
        joined name."""
        known = self.known
        if member.kind not in _DIRECTORY_OR_LINK and hash(name) in known:
            return "replaces a directory extracted before it"
        parent = name.rpartition("/")[0]
        if parent != self.last_parent:
            self.last_parent = parent
            while parent and (key := hash(parent)) not in known:
                known.add(key)
                parent = parent.rpartition("/")[0]
        if member.isdir():
            known.add(hash(name))
        return None

    def __len__(self) -> int:
        return len(self.known)


_DIRECTORY_OR_LINK = frozenset(b"52")


_EXTRACTABLE = frozenset(b"01257\0")
"""Regular files (plain, contiguous), hard links, symlinks and directories."""
_LINKS = frozenset(b"12")


def _member_problem(member: Member, links: _Links) -> tuple[str | None, str]:
    """What keeps `member` from being extracted safely, and its joined name ("" with a
    problem)."""
    problem = _placement_problem(member)
    if problem is not None:
        return problem, ""
    try:
        name = _joined(member.name)
    except _Escape:
        return "contains '..' that leads outside the extraction directory", ""
    return _link_problem(member, name, links), name


def _placement_problem(member: Member) -> str | None:
    if member.kind not in _EXTRACTABLE:
        kind = (
            "a FIFO"
            if member.isfifo()
            else "a device"
            if member.isdev()
            else "not a regular file, directory or link"
        )
        return f"is {kind}"
    if member.name.startswith("/"):
        return "is absolute; use a path relative to its root"
    return None


def _link_problem(member: Member, name: str, links: _Links) -> str | None:
    """A member named `name` (joined) that is empty, replaces a symlink, or leads out
    through the archive's symlinks or its own link target."""
    if name == "":
        return None if member.isdir() else "has an empty name"
    if not links.targets and member.kind not in _LINKS:
        return None  # no link to walk through, nor a target to check: `name` stays inside
    try:
        resolved_parent = _resolve(name.split("/")[:-1], links)
        if links.targets and _key(name) in links.targets and not member.issym():
            return "replaces a symlink extracted before it"
        if member.issym():
            if member.linkname.startswith("/"):
                return f"is a symlink to the absolute path {member.linkname!r}"
            _resolve(resolved_parent + member.linkname.split("/"), links)
        elif member.islnk():
            _resolve(list(safe_relative(member.linkname).parts), links)
    except (_Escape, PathEscape):
        target = f" (-> {member.linkname!r})" if member.issym() or member.islnk() else ""
        return f"leads outside the extraction directory{target}"
    return None


def _resolve(parts: list[str], links: _Links) -> list[str]:
    """Follow `parts` through the archive's symlinks as the kernel walks a path: a link's
    target takes its place in what is left to walk. Raises _Escape when the walk leaves
    the root or follows more than 40 links. Linear: each component is one hash step.

    A walk looks a link up only at a component it appends, one of `parts` until a link is
    found: parts none of which ends a link's name are joined without a walk."""
    if not links.targets or links.leaves.isdisjoint(parts):
        joined = _joined("/".join(parts))
        return joined.split("/") if joined else []
    todo = parts[::-1]
    resolved: list[str] = []
    states = [_ROOT]  # states[i] is the key state of resolved[:i]
    followed = 0
    while todo:
        part = todo.pop()
        links.steps += 1
        if links.steps > _MAX_LINK_STEPS:
            raise _TooCostly
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                raise _Escape
            resolved.pop()
            states.pop()
            continue
        state = _step(states[-1], part, first=not resolved)
        target = links.targets.get(state.digest())
        if target is None:
            resolved.append(part)
            states.append(state)
            continue
        followed += 1
        if followed > _MAX_LINKS_FOLLOWED or target.startswith("/"):
            raise _Escape
        todo.extend(target.split("/")[::-1])
    return resolved


def _joined(name: str) -> str:
    """Where Go's `filepath.Join(root, name)` puts `name` on Linux, relative to `root`
    ("" for `root` itself): `/` alone separates, empty and `.` parts go, `..` drops the
    part before it. Raises _Escape when `..` leads above `root`."""
    split = name.split("/")
    if "" not in split and "." not in split and ".." not in split:
        return name  # the usual name, already joined (membership tests run in C)
    parts: list[str] = []
    for part in split:
        if part == "..":
            if not parts:
                raise _Escape
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)
