"""A tarball's members read from their headers, as `tarfile` reads them, in bounded memory.

`tarsafe` checks every member of a suite's tarball before `tarfile` extracts it. Read
through `TarFile.next()`, that cost about 12 us a member (seconds at the member limit),
and `tarfile` reads a GNU long name or a PAX header whole, whatever size it declares: a
300 KB gzip declaring a 300 MB name took 630 MB. This module reads the headers itself,
from the decompressed stream in 1 MiB blocks, and gives each member's type, name, link
target and data size exactly as `tarfile` (3.11 and later) gives them:

- a header is `frombuf`'s: the NUL-ended name, a ustar prefix joined to it (not for
  GNU's own types), a v7 name ending in `/` read as a directory, a directory's trailing
  slashes dropped, the size as `nti` reads it (octal, or GNU base-256), the checksum
  checked signed and unsigned;
- GNU long names and links (`L`, `K`) and PAX records (`x`, `X`) apply to the member
  after them; a PAX `path` loses its trailing slashes and a PAX `size` moves the next
  header; a global PAX header (`g`) is allowed with keys that change no member;
- data is skipped for regular files and for types tarfile does not know;
- the archive ends where `TarFile.next()` ends it: at a zero block, at a header too
  short, or at a bad checksum past the first header (those at the first header make it
  unreadable), and data cut short is "unexpected end of data".

Where this reader is stricter, the tarball is refused (`Refused`), never read another
way: a GNU sparse file, a PAX `hdrcharset` or sparse key, a global header that renames
or resizes members, a PAX record that is not `LENGTH KEY=VALUE\\n` exactly (padding
included, since tarfile reads records past the declared size), a negative size, more
than `_MAX_CHAIN` extension headers before one member, one extension of more than
`MAX_EXTENSION_BYTES`, or extensions past `MAX_EXTENSION_TOTAL` in all (names are 4 KB at
most and few: the bound keeps a gzip of long names from costing seconds). Fields that
name no path and size nothing (mode, owner, times, device numbers) are not parsed: where
tarfile would stop at a bad one, this reads on, so the members checked are the members
extraction writes and perhaps more, never fewer or others.
"""

from __future__ import annotations

import gzip
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple, Protocol

__all__ = ["MAX_EXTENSION_BYTES", "MAX_EXTENSION_TOTAL", "Member", "Refused", "read_members"]

MAX_EXTENSION_BYTES = 1024**2
"""One GNU long name or PAX header, in bytes (a name past 4 KB is refused anyway)."""

MAX_EXTENSION_TOTAL = 32 * 1024**2
"""GNU long names and PAX headers in all, in bytes: 100,000 paths of 300 bytes."""

_MAX_CHAIN = 8
"""Extension headers before one member (a long name, a long link, a PAX header, a
global one: a real archive has at most three)."""

_BLOCK = 512
_READ = 1024**2
_ZEROS = bytes(_BLOCK)
_ENCODING, _ERRORS = "utf-8", "surrogateescape"  # TarFile's on Linux

_REGULAR = frozenset(b"07\0")  # tarfile's REGULAR_TYPES but sparse ("S"), refused here
_KNOWN = frozenset(b"0123456\07LKS")  # tarfile's SUPPORTED_TYPES
_GNU_TYPES = frozenset(b"LKS")  # no ustar prefix joined to their names
_DIRECTORY = ord("5")
_PAX_TYPES = frozenset(b"xXg")
_EXTENSIONS = _PAX_TYPES | frozenset(b"LK")
_GLOBAL = ord("g")
_PAX_MEMBER_KEYS = ("path", "linkpath", "size")
"""The PAX keys that change what `tarsafe` checks (others set owners and times)."""


class Refused(Exception):
    """A header this reader does not read: the tarball is refused, for this reason."""


class Member(NamedTuple):
    """One member as `TarFile.next()` gives it: what the safety check needs of it."""

    kind: int  # the type flag byte, tarfile's `type[0]`
    name: str
    linkname: str
    size: int

    def isreg(self) -> bool:
        return self.kind in _REGULAR

    def isdir(self) -> bool:
        return self.kind == _DIRECTORY

    def issym(self) -> bool:
        return self.kind == ord("2")

    def islnk(self) -> bool:
        return self.kind == ord("1")

    def isfifo(self) -> bool:
        return self.kind == ord("6")

    def isdev(self) -> bool:
        return self.kind in b"346"


def read_members(path: Path, *, gzipped: bool) -> Iterator[Member]:
    """The archive's members in order. Raises tarfile.ReadError where `TarFile` fails,
    Refused where this reader does, and the decompressor's errors (OSError, EOFError,
    zlib.error)."""
    opener = gzip.open if gzipped else open
    with opener(path, "rb") as raw:
        yield from _Reader(_Stream(raw)).members()


class _Reader:
    def __init__(self, stream: _Stream) -> None:
        self.stream = stream
        self.offset = 0  # where the next header starts
        self.extension_bytes = 0

    def members(self) -> Iterator[Member]:
        while (header := self._header(self.offset, first=self.offset == 0)) is not None:
            yield self._member(*header, chain=0)

    def _header(self, at: int, *, first: bool) -> tuple[int, bytes, int] | None:
        """The type, block and size of the header at `at`, checked as `frombuf` checks
        it; None where tarfile ends the archive."""
        block = self.stream.ahead(at, _BLOCK)
        if len(block) != _BLOCK:
            if at and not self.stream.has(at):  # the data before it was cut short
                raise tarfile.ReadError("unexpected end of data")
            if first:
                raise tarfile.ReadError("empty file" if not block else "truncated header")
            return None
        if block == _ZEROS:
            return None
        try:  # the usual fields, octal digits then NULs or spaces, read at once
            checksum: int | None = int(block[148:156].rstrip(b" \0") or b"0", 8)
            size: int | None = int(block[124:136].rstrip(b" \0") or b"0", 8)
        except ValueError:
            checksum, size = _number(block[148:156]), _number(block[124:136])
        if checksum is None or size is None or checksum not in _checksums(block):
            if first:
                raise tarfile.ReadError("bad checksum" if size is not None else "invalid header")
            return None
        if size < 0:
            raise Refused(f"has a header with a negative size ({size})")
        return block[156], block, size

    def _member(self, kind: int, block: bytes, size: int, chain: int) -> Member:
        """The member whose header (or first extension header) is `block` at `offset`,
        its extensions applied, moving `offset` past it."""
        data_at = self.offset + _BLOCK
        if kind in _EXTENSIONS:
            return self._extended(kind, size, data_at, chain)
        if kind == ord("S"):
            raise Refused("holds a GNU sparse file, which assay does not extract")
        # `frombuf`'s name: the v7 directory (a directory's type before its data is
        # skipped), the ustar prefix, a directory's slashes dropped before the prefix and
        # again after (`_proc_builtin`).
        name = _nts(block[:100])
        if kind == 0 and name.endswith("/"):
            kind = _DIRECTORY
        self.offset = data_at
        if kind in _REGULAR or kind not in _KNOWN:
            self.offset += _blocks(size)
        if kind == _DIRECTORY:
            name = name.rstrip("/")
        if block[345] and kind not in _GNU_TYPES and (prefix := _nts(block[345:500])):
            name = prefix + "/" + name
            if kind == _DIRECTORY:
                name = name.rstrip("/")
        linkname = _nts(block[157:257]) if block[157] else ""
        return Member(kind, name, linkname, size)

    def _extended(self, kind: int, size: int, data_at: int, chain: int) -> Member:
        """The member after an extension header, with the extension applied (tarfile's
        `_proc_gnulong` and `_proc_pax`)."""
        if chain >= _MAX_CHAIN:
            raise Refused(f"has more than {_MAX_CHAIN} extension headers before one member")
        if size > MAX_EXTENSION_BYTES:
            what = "GNU long name" if kind in b"LK" else "PAX header"
            limit = f"{MAX_EXTENSION_BYTES:,}"
            raise Refused(f"has a {what} of {size:,} bytes, over the limit of {limit}")
        self.extension_bytes += size
        if self.extension_bytes > MAX_EXTENSION_TOTAL:
            limit = f"{MAX_EXTENSION_TOTAL:,}"
            raise Refused(f"has long names and PAX headers of more than {limit} bytes in all")
        blocks = _blocks(size)
        data = self.stream.ahead(data_at, blocks)
        self.offset = data_at + blocks
        records = _pax_records(data, size) if kind in _PAX_TYPES else {}
        if kind == _GLOBAL and any(key in records for key in _PAX_MEMBER_KEYS):
            raise Refused("has a global PAX header that renames or resizes its members")
        following = self._header(self.offset, first=False)
        if following is None:  # tarfile's SubsequentHeaderError
            raise tarfile.ReadError("an extension header with no member after it")
        member = self._member(*following, chain=chain + 1)
        if kind == ord("L"):
            name = _nts(data)
            if member.kind == _DIRECTORY:
                name = name.removesuffix("/")
            return Member(member.kind, name, member.linkname, member.size)
        if kind == ord("K"):
            return Member(member.kind, member.name, _nts(data), member.size)
        return self._with_pax(member, records) if kind != _GLOBAL else member

    def _with_pax(self, member: Member, records: dict[str, str]) -> Member:
        """`member` with a PAX header's `path`, `linkpath` and `size` (`_apply_pax_info`)."""
        name = records["path"].rstrip("/") if "path" in records else member.name
        linkname = records.get("linkpath", member.linkname)
        size = member.size
        if "size" in records:
            try:
                size = int(records["size"])
            except ValueError:
                size = 0
            if size < 0:
                raise Refused(f"has a PAX header with a negative size ({size})")
            # The next header moves with the size, as in tarfile's `_proc_pax`.
            if member.kind in _REGULAR or member.kind not in _KNOWN:
                self.offset += _blocks(size) - _blocks(member.size)
        return Member(member.kind, name, linkname, size)


def _nts(field: bytes) -> str:
    end = field.find(0)
    return (field if end == -1 else field[:end]).decode(_ENCODING, _ERRORS)


def _number(field: bytes) -> int | None:
    """A number field as tarfile's `nti` reads it; None where it raises (a bad header).
    (Where `int` reads a field with its trailing NULs and spaces cut, it reads it as `nti`
    does: digits with a NUL inside or other spaces around come here.)"""
    if field[0] in (0o200, 0o377):
        value = int.from_bytes(field[1:], "big")
        return value - 256 ** (len(field) - 1) if field[0] == 0o377 else value
    end = field.find(0)
    try:
        return int((field if end == -1 else field[:end]).decode("ascii").strip() or "0", 8)
    except ValueError:
        return None


def _checksums(block: bytes) -> tuple[int, ...]:
    """The header's checksum computed unsigned, and signed when that differs (old Sun
    tars), as tarfile accepts either."""
    if block.isascii():
        # Adler-32's low half is 1 + the bytes' sum, mod 65521: exactly the sum here,
        # as 512 ASCII bytes sum to at most 65,024 (and zlib is 30 times faster than `sum`).
        total = ((zlib.adler32(block) & 0xFFFF) - 1) % 65521
        return (total - sum(block[148:156]) + 256,)
    unsigned = sum(block) - sum(block[148:156]) + 256
    signed = unsigned - 256 * sum(1 for byte in block[:148] + block[156:] if byte >= 0x80)
    return (unsigned, signed)


def _pax_records(data: bytes, size: int) -> dict[str, str]:
    """A PAX header's records. Each must be exactly `LENGTH KEY=VALUE\\n` and the block's
    padding all NUL: tarfile's own parser reads on past the declared size, and differs
    between Python releases on malformed records."""
    if b"hdrcharset=" in data:
        raise Refused("has a PAX header with hdrcharset, which assay does not read")
    if data.count(0, size) != len(data) - size:
        raise Refused("has a PAX header with records past its declared size")
    records: dict[str, str] = {}
    pos = 0
    while pos < size:
        space = data.find(b" ", pos, pos + 21)
        digits = data[pos:space]
        if space < 0 or not digits.isdigit():
            raise Refused("has a malformed PAX record")
        end = pos + int(digits)
        record = data[space + 1 : end]
        key, equals, value = record.partition(b"=")
        if end > size or not equals or not record.endswith(b"\n"):
            raise Refused("has a malformed PAX record")
        try:
            keyword = key.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("has a PAX record whose key is not UTF-8") from None
        if keyword.startswith("GNU.sparse."):
            raise Refused("holds a GNU sparse file, which assay does not extract")
        records[keyword] = value[:-1].decode(_ENCODING, _ERRORS)
        pos = end
    return records


def _blocks(size: int) -> int:
    return -(-size // _BLOCK) * _BLOCK


class _Readable(Protocol):
    def read1(self, size: int = -1, /) -> bytes: ...


class _Stream:
    """The decompressed archive read forward in 1 MiB blocks: the bytes at absolute
    offsets, from the header being read on. An error met reading ahead (bytes after the
    gzip stream, where tarfile never reads) is raised only when bytes past it are asked
    for."""

    def __init__(self, raw: _Readable) -> None:
        self.raw = raw
        self.buf = b""
        self.base = 0  # the absolute offset of buf[0]
        self.keep = 0  # what lies before it is done with
        self.ended = False
        self.failed: BaseException | None = None

    def _more(self) -> bytes:
        if self.failed is None and not self.ended:
            try:
                chunk = self.raw.read1(_READ)  # one read: what came before an error is kept
            except (EOFError, OSError, zlib.error) as exc:
                self.failed = exc
            else:
                if chunk:
                    return chunk
        self.ended = True
        return b""

    def _short(self, end: int) -> bool:
        """Whether the archive ends before `end`, raising what ended it early."""
        if self.base + len(self.buf) >= end:
            return False
        if self.failed is not None:
            raise self.failed
        return True

    def has(self, end: int) -> bool:
        """Whether the archive holds the bytes before absolute `end`, read on to it."""
        while self.base + len(self.buf) < end and not self.ended:
            chunk = self._more()
            # One copy per block read: what is done with goes before the append.
            self.buf = self.buf[self.keep - self.base :] + chunk
            self.base = self.keep
        return not self._short(end)

    def ahead(self, start: int, size: int) -> bytes:
        """`get(start, start + size)`, at once when the buffer holds it (most headers)."""
        where = start - self.base
        if where >= 0 and where + size <= len(self.buf):
            self.keep = start
            return self.buf[where : where + size]
        return self.get(start, start + size)

    def get(self, start: int, end: int) -> bytes:
        """The bytes from `start` to `end` (fewer where the archive ends first); what
        lies before `start` is done with. Data skipped is read through a block at a time
        and never kept."""
        while self.base + len(self.buf) < start and not self.ended:
            self.base += len(self.buf)
            self.buf = self._more()
        self.keep = max(self.base, min(start, self.base + len(self.buf)))
        if self.base + len(self.buf) < end:
            self.has(end)
        return self.buf[start - self.base : end - self.base]
