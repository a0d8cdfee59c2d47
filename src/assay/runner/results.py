"""results.jsonl: one CaseResult per line, written and flushed the moment a case finishes.

The stream is what survives a crash: a SIGKILL loses at most the cases still running,
and `--resume DIR` picks up from it. Each line goes out in a single unbuffered write so
a reader never sees two results interleaved; a line cut short by a kill is the only
damage possible, and the reader drops it (and trims it off before appending again).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from pydantic import ValidationError

from assay.errors import ConfigError, Location
from assay.report.model import CaseResult

__all__ = ["RESULTS_FILE", "ResultsStream", "read_results"]

RESULTS_FILE = "results.jsonl"

ResultKey = tuple[str, str | None]


class ResultsStream:
    """Appends results to `path`; `append=False` starts a fresh file."""

    def __init__(self, path: Path, *, append: bool) -> None:
        self.path = path
        self._file: BinaryIO = open(path, "ab" if append else "wb", buffering=0)  # noqa: SIM115

    def write(self, result: CaseResult) -> None:
        # Unbuffered: the bytes reach the kernel now, so a killed process keeps them.
        self._file.write(result.model_dump_json().encode() + b"\n")

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ResultsStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def read_results(
    path: Path, *, keep: Collection[ResultKey] | None = None, repair: bool = False
) -> dict[ResultKey, CaseResult]:
    """The finished results in `path`, keyed by (case id, model); later lines win.

    `keep` limits the answer to the runs still selected. An unreadable LAST line is a
    result cut short by a kill and is dropped (with `repair`, also cut off the file so
    appended lines start clean); an unreadable line before it means the file is not a
    results stream, which is the user's mistake.
    """
    results: dict[ResultKey, CaseResult] = {}
    good_bytes = 0
    pending_error: ConfigError | None = None
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        raise ConfigError(f"nothing to resume: {path} does not exist") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if pending_error is not None:
                raise pending_error
            try:
                result = CaseResult.model_validate_json(raw)
            except ValidationError as exc:
                first = exc.errors()[0]
                pending_error = ConfigError(
                    f"not a results.jsonl line: {first['msg']}", Location(path, number)
                )
                continue
            good_bytes += len(raw)
            key = (result.id, result.model)
            if keep is None or key in keep:
                results[key] = result
    if repair:
        _trim(path, good_bytes)
    return results


def _trim(path: Path, size: int) -> None:
    """Cut `path` to `size` bytes, ending it with a newline so the next line starts clean."""
    with open(path, "r+b") as handle:
        handle.truncate(size)
        if size:
            handle.seek(size - 1)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
