"""The tarball check's time and memory at its limits (issue 34), one gzip per case:

- 100,000 empty members with short names (the member limit);
- 100,000 members each with a PAX header naming a 300-byte path (the extension budget);
- 4 KB names (PAX) up to the extension budget;
- one member of 1 GiB of zeros (the expansion limit);
- a GNU long name declaring 300 MB, in a 300 KB gzip (refused).

    python bench/bench_tarsafe.py [--repeats 3]

Prints each case's gzip size, the check's best wall and CPU time (`tarsafe.check_tarball`,
the remembered pass forgotten between repeats), its peak traced memory (a separate run)
and its problems, if any.
"""

from __future__ import annotations

import argparse
import gzip
import io
import tarfile
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from assay._util import tarsafe
from assay._util.fixture_tree import MAX_EXPANDED_BYTES, MAX_MEMBERS
from assay._util.tarheaders import MAX_EXTENSION_TOTAL


def _empty_members(path: Path, names: list[str], fmt: int) -> None:
    with tarfile.open(path, "w:gz", format=fmt, compresslevel=1) as archive:
        for name in names:
            archive.addfile(tarfile.TarInfo(name))


def short_names(path: Path) -> None:
    _empty_members(path, [f"d{i % 100}/f{i}" for i in range(MAX_MEMBERS)], tarfile.USTAR_FORMAT)


def pax_per_member(path: Path) -> None:
    # A path of 300 bytes needs a PAX record (ustar holds 255): about 310 bytes each.
    stem = ("p" * 60 + "/") * 4
    names = [f"{stem}d{i % 100}/{i:0>{300 - len(stem) - 4}}" for i in range(MAX_MEMBERS)]
    _empty_members(path, names, tarfile.PAX_FORMAT)


def long_names(path: Path) -> None:
    stem = ("x" * 200 + "/") * 19  # about 3.8 KB, under the 4 KB name limit
    count = MAX_EXTENSION_TOTAL // (len(stem) + 40)
    _empty_members(path, [f"{stem}d{i % 100}/f{i}" for i in range(count)], tarfile.PAX_FORMAT)


def one_gib_of_zeros(path: Path) -> None:
    info = tarfile.TarInfo("zeros.bin")
    info.size = MAX_EXPANDED_BYTES - 1024**2

    class Zeros(io.RawIOBase):
        left = info.size

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
            count = min(len(buffer), self.left)
            buffer[:count] = bytes(count)
            self.left -= count
            return count

    with tarfile.open(path, "w:gz", compresslevel=1) as archive:
        archive.addfile(info, io.BufferedReader(Zeros(), 1024**2))


def declared_huge_name(path: Path) -> None:
    size = 300 * 1024**2
    long_link = tarfile.TarInfo("././@LongLink")
    long_link.type, long_link.size = tarfile.GNUTYPE_LONGNAME, size
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(long_link.tobuf(tarfile.GNU_FORMAT))
        for _ in range(size // 1024**2):
            out.write(b"a" * 1024**2)
        out.write(tarfile.TarInfo("x").tobuf(tarfile.GNU_FORMAT) + bytes(1024))


CASES: dict[str, Callable[[Path], None]] = {
    "100,000 members, short names": short_names,
    "100,000 members, a PAX path of 300 bytes each": pax_per_member,
    "4 KB names up to the extension budget": long_names,
    "one member of 1 GiB of zeros": one_gib_of_zeros,
    "a GNU long name declaring 300 MB (refused)": declared_huge_name,
}


def measure(path: Path, repeats: int) -> tuple[float, float, float, list[str]]:
    wall = cpu = float("inf")
    for _ in range(repeats):
        tarsafe._passed.clear()
        started, started_cpu = time.perf_counter(), time.process_time()
        problems = tarsafe.check_tarball(path)
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    tarsafe._passed.clear()
    tracemalloc.start()
    tarsafe.check_tarball(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return wall, cpu, peak / 1024**2, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for number, (label, build) in enumerate(CASES.items()):
            path = Path(tmp) / f"case{number}.tar.gz"
            build(path)
            wall, cpu, peak, problems = measure(path, args.repeats)
            size = path.stat().st_size / 1024
            print(
                f"{label}: {size:,.0f} KB gzip, {wall:.2f} s wall, {cpu:.2f} s CPU, "
                f"peak {peak:.1f} MiB traced; {problems or 'passes'}"
            )
            path.unlink()


if __name__ == "__main__":
    main()
