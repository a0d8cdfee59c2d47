"""results.jsonl: one CaseResult per line, written and flushed the moment a case finishes.

The stream is what survives a crash: a SIGKILL loses at most the cases still running,
and `--resume DIR` picks up from it. Each line goes out in a single unbuffered write so
a reader never sees two results interleaved; a line cut short by a kill (it lacks its
newline, the last byte written) is the only damage possible, and the reader drops it
(and trims it off before appending again). One run at a time writes the file: see
`assay.runner.lock`.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO

from pydantic import ValidationError

from assay.errors import ConfigError, Location
from assay.report.model import CaseResult
from assay.report.read import json_path

if TYPE_CHECKING:
    from assay.runner.plan import PlannedRun

__all__ = ["RESULTS_FILE", "ResultsStream", "read_results"]

RESULTS_FILE = "results.jsonl"

ResultKey = tuple[str, str | None]


class ResultsStream:
    """Appends results to `path`; `append=False` starts a fresh file."""

    def __init__(self, path: Path, *, append: bool) -> None:
        self.path = path
        # O_APPEND even for a fresh file: each line then lands at the end as it is now,
        # so a line someone else appended is never overwritten into a garbled one.
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if append else os.O_TRUNC)
        self._file: BinaryIO = open(os.open(path, flags, 0o666), "ab", buffering=0)  # noqa: SIM115

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
    path: Path, *, plan: Collection[PlannedRun] | None = None, repair: bool = False
) -> dict[ResultKey, CaseResult]:
    """The finished results in `path`, keyed by (case id, model).

    `plan` limits the answer to the runs still planned, and a line for one of them must
    describe the same case (suite and kind). An unreadable line that lacks its newline is
    a result cut short by a kill and is dropped (with `repair`, also cut off the file so
    appended lines start clean). Anything else wrong is the user's mistake (ConfigError
    naming the line): a line that does not validate (a NaN or out-of-range score too),
    or a second line for one (case, model). assay writes each case's line exactly once,
    so a second one came from something else - an agent under test can reach the report
    directory - and is refused rather than trusted.
    """
    planned = {run.key: run for run in plan} if plan is not None else None
    results: dict[ResultKey, CaseResult] = {}
    first_line: dict[ResultKey, int] = {}
    good_bytes = 0
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        raise ConfigError(f"nothing to resume: {path} does not exist") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            where = Location(path, number)
            if not raw.strip():
                good_bytes += len(raw)
                continue
            try:
                result = CaseResult.model_validate_json(raw)
            except ValidationError as exc:
                if not raw.endswith(b"\n"):
                    break  # the last line, cut short by a kill
                raise ConfigError(f"not a results.jsonl line: {_first_error(exc)}", where) from None
            good_bytes += len(raw)
            key = (result.id, result.model)
            if key in first_line:
                raise ConfigError(
                    f"{_show(key)} already finished on line {first_line[key]}: assay writes "
                    "each case once, so this line was written by something else; remove the "
                    "line you do not trust and resume again",
                    where,
                )
            first_line[key] = number
            if planned is None:
                results[key] = result
            elif key in planned:
                _check_same_case(result, planned[key], where)
                results[key] = result
    if repair:
        _trim(path, good_bytes)
    return results


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return f"{json_path(first['loc'])}: {first['msg']}" if first["loc"] else first["msg"]


def _check_same_case(result: CaseResult, run: PlannedRun, where: Location) -> None:
    case = run.case
    if (result.suite, result.kind) != (case.suite, case.kind):
        raise ConfigError(
            f"{_show(run.key)} is a {result.kind} case of suite {result.suite} here, but a "
            f"{case.kind} case of suite {case.suite} in this run: resume with the suites "
            "the run was started with",
            where,
        )


def _show(key: ResultKey) -> str:
    case_id, model = key
    return f"{case_id} [{model}]" if model else case_id


def _trim(path: Path, size: int) -> None:
    """Cut `path` to `size` bytes, ending it with a newline so the next line starts clean."""
    with open(path, "r+b") as handle:
        handle.truncate(size)
        if size:
            handle.seek(size - 1)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
