"""The tarball header reader: the members `tarfile` gives, in bounded memory and time."""

from __future__ import annotations

import gzip
import io
import os
import random
import shutil
import subprocess
import tarfile
import tracemalloc
from pathlib import Path

import pytest

from assay._util import tarheaders
from assay._util.tarheaders import Member, Refused, read_members
from assay._util.tarsafe import check_tarball

Seen = list[tuple[int, str, str, int]]


def by_tarfile(path: Path) -> Seen:
    """What `TarFile.next()` gives, member by member, as extraction reads the archive."""
    seen: Seen = []
    with tarfile.open(path, "r:*") as archive:
        while (info := archive.next()) is not None:
            seen.append((info.type[0], info.name, info.linkname, info.size))
    return seen


def by_reader(path: Path) -> Seen:
    gzipped = path.name.endswith(".gz")
    return [tuple(member) for member in read_members(path, gzipped=gzipped)]  # type: ignore[misc]


def header(name: str, kind: bytes, size: int = 0, fmt: int = tarfile.GNU_FORMAT) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(fmt)


def pax(records: bytes, kind: bytes = tarfile.XHDTYPE) -> bytes:
    padding = bytes(-len(records) % 512)
    return header("PaxHeader", kind, len(records)) + records + padding


def record(key: str, value: str) -> bytes:
    body = f" {key}={value}\n".encode()
    length = len(body) + 1
    length += len(str(length + len(str(length)))) - 1
    return str(length).encode() + body


def archive_of(*names: tuple[str, bytes, str, bytes], fmt: int) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as archive:
        for name, kind, link, data in names:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.size = kind, link, len(data)
            archive.addfile(info, io.BytesIO(data) if data else None)
    return out.getvalue()


LONG = "d" * 120 + "/" + "e" * 120 + "/" + "f" * 140  # past ustar's 100 and 155 + 100
MEMBERS = [
    ("./", tarfile.DIRTYPE, "", b""),
    ("src/", tarfile.DIRTYPE, "", b""),
    ("src/main.go", tarfile.REGTYPE, "", b"package main\n" * 50),
    ("p" * 90 + "/" + "q" * 90, tarfile.REGTYPE, "", b"x"),  # a ustar prefix
    (LONG, tarfile.REGTYPE, "", b"y" * 700),
    ("link", tarfile.SYMTYPE, "src/main.go", b""),
    ("longlink", tarfile.SYMTYPE, LONG, b""),
    ("hard", tarfile.LNKTYPE, "src/main.go", b""),
    ("caf\u00e9/\u00fc.txt", tarfile.REGTYPE, "", b"z"),
    ("g" * 120, tarfile.DIRTYPE, "", b""),  # a long name ending in `/`
    ("odd", b"Z", "", b"q" * 700),  # a type tarfile does not know: its data is skipped
    ("empty", tarfile.REGTYPE, "", b""),
]


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_members_are_read_as_tarfile_reads_them(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "base.tar"
    path.write_bytes(archive_of(*MEMBERS, fmt=fmt))
    assert by_reader(path) == by_tarfile(path)
    assert len(by_reader(path)) == len(MEMBERS)
    compressed = tmp_path / "base.tar.gz"
    compressed.write_bytes(gzip.compress(path.read_bytes()))
    assert by_reader(compressed) == by_tarfile(path)


@pytest.mark.skipif(shutil.which("tar") is None, reason="needs GNU tar")
@pytest.mark.parametrize("fmt", ["gnu", "oldgnu", "posix", "ustar", "v7"])
def test_archives_from_gnu_tar_read_alike(tmp_path: Path, fmt: int) -> None:
    tree = tmp_path / "tree"
    (tree / "src" / ("n" * 60)).mkdir(parents=True)
    (tree / "src" / "main.go").write_text("package main\n")
    (tree / "src" / ("n" * 60) / ("m" * 60)).write_text("deep\n")
    os.symlink("src/main.go", tree / "link")
    os.link(tree / "src" / "main.go", tree / "hard")
    path = tmp_path / f"{fmt}.tar"
    name_limit = ["--exclude", "n" * 60] if fmt == "v7" else []
    subprocess.run(
        ["tar", f"--format={fmt}", *name_limit, "-cf", str(path), "-C", str(tree), "."],
        check=True,
    )
    assert by_reader(path) == by_tarfile(path)
    assert len(by_reader(path)) >= 5


def test_git_archive_with_its_global_header_reads_alike(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    path = tmp_path / "base.tar.gz"
    subprocess.run([*git, "archive", "--format=tar.gz", "-o", str(path), "HEAD"], check=True)
    assert by_reader(path) == by_tarfile(path) == [(ord("0"), "a.txt", "", 2)]
    assert check_tarball(path) == []


def test_old_headers_read_alike(tmp_path: Path) -> None:
    # A base-256 size, a signed checksum (a high byte in the name), a v7 directory (a
    # regular file whose name ends in /), and bytes after the end-of-archive blocks.
    big = bytearray(header("big.bin", tarfile.REGTYPE, 3))
    big[124:136] = bytes([0o200]) + (3).to_bytes(11, "big")
    signed = bytearray(header("\u00e9t\u00e9.txt", tarfile.REGTYPE))
    # The v7 directory declares 512 bytes: as a directory it has no data, so tarfile reads
    # the next block as a header (here a real one).
    v7dir = bytearray(header("olddir/", tarfile.AREGTYPE, 512))
    for block in (big, signed, v7dir):
        block[148:156] = b"        "
    big[148:156] = b"%06o\0 " % (sum(big))
    signed_sum = sum(byte - 256 if byte > 127 else byte for byte in signed)
    signed[148:156] = b"%06o\0 " % signed_sum
    v7dir[148:156] = b"%06o\0 " % sum(v7dir)
    after = header("after-the-directory.txt", tarfile.REGTYPE)
    data = bytes(big) + b"abc" + bytes(509) + bytes(signed) + bytes(v7dir) + after
    path = tmp_path / "old.tar"
    path.write_bytes(data + bytes(1024) + b"garbage after the end" * 40)
    seen = by_reader(path)
    assert seen == by_tarfile(path)
    names = ["big.bin", "\u00e9t\u00e9.txt", "olddir", "after-the-directory.txt"]
    assert [entry[1] for entry in seen] == names
    assert seen[2][0] == ord("5") and seen[0][3] == 3


def test_mutated_archives_never_show_fewer_or_other_members_than_tarfile(
    tmp_path: Path,
) -> None:
    # Whatever the bytes, the reader either refuses the archive or reads every member
    # tarfile reads, the same, in the same order (it may read on where tarfile stops).
    pristine = archive_of(*MEMBERS, fmt=tarfile.PAX_FORMAT)
    pristine += archive_of(*MEMBERS[2:5], fmt=tarfile.GNU_FORMAT)[:-1024]
    shuffle = random.Random(34)
    path = tmp_path / "m.tar"
    compared = 0
    for _ in range(400):
        data = bytearray(pristine)
        for _ in range(shuffle.randint(1, 4)):
            at = shuffle.randrange(len(data))
            data[at] = shuffle.choice([0, 0x20, 0x2F, 0x30, 0x37, 0x35, 0x78, 0x4C, 0xFF])
        path.write_bytes(bytes(data))
        try:
            ours = by_reader(path)
        except (Refused, tarfile.ReadError, OSError, EOFError):
            continue
        try:
            theirs = by_tarfile(path)
        except Exception:  # noqa: BLE001 - tarfile cannot read it: extraction fails too
            continue
        assert ours[: len(theirs)] == theirs
        compared += 1
    assert compared > 100


def _peak(check):  # type: ignore[no-untyped-def]
    tracemalloc.start()
    try:
        result = check()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_name_declaring_300_mb_is_refused_unread(tmp_path: Path) -> None:
    # 300 KB of gzip: tarfile read the whole name into memory (630 MB).
    path = tmp_path / "base.tar.gz"
    size = 300 * 1024**2
    with gzip.open(path, "wb") as out:
        out.write(header("././@LongLink", tarfile.GNUTYPE_LONGNAME, size))
        for _ in range(size // 1024**2):
            out.write(b"a" * 1024**2)
        out.write(header("x", tarfile.REGTYPE) + bytes(1024))
    problems, peak = _peak(lambda: check_tarball(path))
    assert problems == [
        "base.tar.gz has a GNU long name of 314,572,800 bytes, over the limit of 1,048,576"
    ]
    assert peak < 8 * 1024**2


@pytest.mark.parametrize(
    ("blocks", "refusal"),
    [
        (pax(record("comment", "x" * 2_000_000)), "has a PAX header of 2,000,0"),
        (pax(record("comment", "x")) * 5000, "more than 8 extension headers before one"),
        (pax(record("hdrcharset", "BINARY")), "hdrcharset"),
        (pax(record("GNU.sparse.map", "0,1")), "GNU sparse file"),
        (header("s", tarfile.GNUTYPE_SPARSE), "GNU sparse file"),
        (pax(record("path", "evil"), tarfile.XGLTYPE), "global PAX header that renames"),
        (pax(record("size", "-5")), "negative size"),
        (pax(b"9 a=bcd\n"), "malformed PAX record"),
        (pax(b"6 a=b\n")[:-512] + (b"6 a=b\n8 path=x\n" + bytes(497)), "past its declared"),
    ],
    ids=["huge", "chain", "hdrcharset", "pax-sparse", "gnu-sparse", "global"]
    + ["negative", "malformed", "padding"],
)
def test_headers_read_another_way_or_unbounded_are_refused(
    tmp_path: Path, blocks: bytes, refusal: str
) -> None:
    path = tmp_path / "base.tar"
    path.write_bytes(blocks + header("file", tarfile.REGTYPE) + bytes(1024))
    problems = check_tarball(path)
    assert len(problems) == 1 and refusal in problems[0], problems


def test_long_names_past_the_budget_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tarheaders, "MAX_EXTENSION_TOTAL", 100_000)
    names = [(f"{'x' * 3000}/{n}", tarfile.REGTYPE, "", b"") for n in range(40)]
    path = tmp_path / "base.tar"
    path.write_bytes(archive_of(*names, fmt=tarfile.PAX_FORMAT))
    assert check_tarball(path) == [
        "base.tar has long names and PAX headers of more than 100,000 bytes in all"
    ]
    path.write_bytes(archive_of(*names[:30], fmt=tarfile.PAX_FORMAT))
    assert check_tarball(path) == []


def test_a_member_is_what_tarfile_calls_it() -> None:
    kinds = {
        tarfile.REGTYPE: "isreg",
        tarfile.AREGTYPE: "isreg",
        tarfile.CONTTYPE: "isreg",
        tarfile.DIRTYPE: "isdir",
        tarfile.SYMTYPE: "issym",
        tarfile.LNKTYPE: "islnk",
        tarfile.FIFOTYPE: "isfifo",
        tarfile.CHRTYPE: "isdev",
        tarfile.BLKTYPE: "isdev",
    }
    for kind in kinds:
        info, member = tarfile.TarInfo("x"), Member(kind[0], "x", "", 0)
        info.type = kind
        for test in ("isreg", "isdir", "issym", "islnk", "isfifo", "isdev"):
            assert getattr(member, test)() == getattr(info, test)(), (kind, test)
