"""results.jsonl: one CaseResult per line, written and flushed the moment a case finishes.

The stream is what survives a crash: a SIGKILL loses at most the cases still running,
and `--resume DIR` picks up from it. Each line goes out in a single unbuffered write so
a reader never sees two results interleaved; a line cut short by a kill (it lacks its
newline, the last byte written) is the only damage possible, and the reader drops it
(and trims it off before appending again). One run at a time writes the file: see
`assay.runner.lock`.

Each line is a CaseResult plus two keys of its own: `fingerprint` (of the case and the
settings that shaped its result, `assay.runner.fingerprint`) and `signature`, an HMAC
under the report directory's key (`assay.runner.signing`). On `--resume` a line whose
signature does not verify was not written by assay (an agent appended it, or the key is
gone) and a line whose fingerprint differs describes another case or other settings:
either way the case runs again, and assay says so.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO

from pydantic import ValidationError

from assay._util import json_text
from assay._util.secrets import redact_json
from assay.core.files import RESULTS_FILE
from assay.errors import ConfigError, SourcePosition
from assay.report.model import CaseResult
from assay.report.read import json_path

if TYPE_CHECKING:
    from assay.runner.plan import PlannedRun

__all__ = ["RESULTS_FILE", "ResultsStream", "parse_result_line", "read_results", "sign_line"]

_FINGERPRINT, _SIGNATURE = "fingerprint", "signature"

ResultKey = tuple[str, str | None]


def sign_line(key: bytes, fingerprint: str, result_json: str) -> str:
    """The HMAC-SHA256 of one line's fingerprint and result, as hex."""
    message = fingerprint.encode() + b"\n" + result_json.encode()
    return hmac.new(key, message, "sha256").hexdigest()


class ResultsStream:
    """Appends signed results to `path`; `append=False` starts a fresh file.

    `fingerprints` maps each (case id, model) to its fingerprint; `key` signs the lines.
    """

    def __init__(
        self,
        path: Path,
        *,
        append: bool,
        key: bytes = b"",
        fingerprints: Mapping[ResultKey, str] | None = None,
    ) -> None:
        self.path = path
        self._key = key
        self._fingerprints = fingerprints or {}
        # O_APPEND even for a fresh file: each line then lands at the end as it is now,
        # so a line someone else appended is never overwritten into a garbled one.
        flags = (
            os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | (0 if append else os.O_TRUNC)
        )
        self._file: BinaryIO = open(os.open(path, flags, 0o666), "ab", buffering=0)  # noqa: SIM115

    def write(self, result: CaseResult) -> None:
        # Redacted before it is signed: the line must verify as it is on disk.
        raw = result.model_dump_json()
        text = redact_json(raw)
        if text is not raw:
            result = CaseResult.model_validate_json(text)
            text = result.model_dump_json()
        fingerprint = self._fingerprints.get((result.id, result.model), "")
        signature = sign_line(self._key, fingerprint, text)
        extra = json.dumps({_FINGERPRINT: fingerprint, _SIGNATURE: signature})
        line = text[:-1] + "," + extra[1:] if text != "{}" else extra
        # Unbuffered: the bytes reach the kernel now, so a killed process keeps them.
        self._file.write(line.encode() + b"\n")

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
    path: Path,
    *,
    plan: Collection[PlannedRun] | None = None,
    repair: bool = False,
    verify: bool = False,
    key: bytes | None = None,
    fingerprints: Mapping[ResultKey, str] | None = None,
    notice: Callable[[str], None] | None = None,
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

    With `verify`, a line counts only when its signature verifies under `key` (None: the
    key is gone, so nothing verifies) and, for planned runs, its fingerprint equals
    `fingerprints`; other lines are left out (that case runs again) and `notice` is told
    why. Results of suites the plan does not hold stay in the file, out of the answer,
    with a notice.
    """
    tell = notice or (lambda _message: None)
    planned = {run.key: run for run in plan} if plan is not None else None
    results: dict[ResultKey, CaseResult] = {}
    first_line: dict[ResultKey, int] = {}
    foreign: dict[str, int] = {}
    unsigned = 0
    good_bytes = 0
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        raise ConfigError(f"nothing to resume: {path} does not exist") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            where = SourcePosition(path, number)
            if not raw.strip():
                good_bytes += len(raw)
                continue
            try:
                result, fingerprint, signature = _parse_line(raw)
            except (ValidationError, ValueError) as exc:
                if not raw.endswith(b"\n"):
                    break  # the last line, cut short by a kill
                raise ConfigError(f"not a results.jsonl line: {_problem(exc)}", where) from None
            good_bytes += len(raw)
            key_of_line = (result.id, result.model)
            if planned is not None and key_of_line not in planned:
                if result.suite not in {run.case.suite for run in planned.values()}:
                    foreign[result.suite] = foreign.get(result.suite, 0) + 1
                continue
            if verify:
                expected = sign_line(key, fingerprint, result.model_dump_json()) if key else ""
                if not expected or not hmac.compare_digest(expected, signature):
                    if key:
                        tell(
                            f"{where}: {_show(key_of_line)}: the line's signature does not "
                            "verify (assay did not write it): refused, the case runs again"
                        )
                    unsigned += 1
                    continue
                wanted = (fingerprints or {}).get(key_of_line)
                if planned is not None and wanted is not None and wanted != fingerprint:
                    tell(
                        f"{_show(key_of_line)}: the case or the settings that shape it changed "
                        "since it ran: it runs again"
                    )
                    continue
            if key_of_line in first_line:
                raise ConfigError(
                    f"{_show(key_of_line)} already finished on line {first_line[key_of_line]}: "
                    "assay writes each case once, so this line was written by something else; "
                    "remove the line you do not trust and resume again",
                    where,
                )
            first_line[key_of_line] = number
            if planned is not None:
                _check_same_case(result, planned[key_of_line], where)
            results[key_of_line] = result
    if verify and not key and unsigned:
        tell(
            f"{path}: no signing key for this report directory (it was made elsewhere, or "
            f"by an older assay): its {unsigned} result(s) cannot be verified and run again"
        )
    if foreign:
        suites = ", ".join(sorted(foreign))
        tell(
            f"{path} holds {sum(foreign.values())} result(s) of suites not in this run "
            f"({suites}): kept in the file, left out of the report"
        )
    if repair:
        _trim(path, good_bytes)
    return results


def _parse_line(raw: bytes) -> tuple[CaseResult, str, str]:
    """A line's CaseResult, fingerprint and signature (empty when it has none)."""
    data: Any = json_text.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    fingerprint = data.pop(_FINGERPRINT, "")
    signature = data.pop(_SIGNATURE, "")
    if not isinstance(fingerprint, str) or not isinstance(signature, str):
        raise ValueError(f"{_FINGERPRINT} and {_SIGNATURE} must be strings")
    return CaseResult.model_validate(data), fingerprint, signature


def parse_result_line(raw: bytes | str) -> CaseResult:
    """The CaseResult one results.jsonl line holds (its fingerprint and signature aside)."""
    return _parse_line(raw.encode() if isinstance(raw, str) else raw)[0]


def _problem(exc: Exception) -> str:
    return _first_error(exc) if isinstance(exc, ValidationError) else str(exc)


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return f"{json_path(first['loc'])}: {first['msg']}" if first["loc"] else first["msg"]


def _check_same_case(result: CaseResult, run: PlannedRun, where: SourcePosition) -> None:
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
