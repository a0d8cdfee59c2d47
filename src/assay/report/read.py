"""Reading report.json files: validated against the contract, errors pointing into the file."""

from __future__ import annotations

import json
import os
from collections.abc import Hashable, Iterator, Sequence
from pathlib import Path

from pydantic import ValidationError

from assay._util import json_text
from assay._util.arguments import as_path
from assay._util.display import display_path
from assay._util.textpos import json_positions
from assay._util.untrusted_files import UntrustedFileError, read_untrusted
from assay.core.files import REPORT_FILE
from assay.errors import ConfigError, ConfigErrors, SourcePosition
from assay.report.model import Report
from assay.report.unfinished import unfinished_run_note

__all__ = ["MAX_REPORT_BYTES", "find_reports", "json_path", "read_report", "read_reports"]

_MAX_SHOWN_ERRORS = 20
"""A file that is not a report at all would list an error per field; the first ones say enough."""

MAX_REPORT_BYTES = 512 * 1024 * 1024
"""The largest report.json read. A case weighs about 4 KiB in report.json (a review case with
a few findings, indented), so 100,000 cases are about 400 MiB; and validating one takes
about 8 times its JSON in memory, so a larger file would not fit a CI runner anyway."""


def read_reports(paths: Sequence[Path]) -> list[Report]:
    """Every report (a directory stands for the one report it holds), or every problem
    with every unreadable one at once (ConfigErrors)."""
    reports: list[Report] = []
    problems: list[ConfigError] = []
    for path in paths:
        try:
            reports.append(read_report(path))
        except ConfigErrors as exc:
            problems += exc.errors
        except ConfigError as exc:
            problems.append(exc)
    if problems:
        raise ConfigErrors(problems)
    return reports


def _single_report(path: Path) -> Path:
    """A report file, or the one report a directory holds."""
    if not path.is_dir():
        return path
    found = find_reports([path])
    if len(found) > 1:
        raise ConfigError(
            f"holds {len(found)} reports ({', '.join(str(p) for p in found[:3])}, ...); "
            "name one file, or merge them first with `assay merge`",
            SourcePosition(path),
        )
    return found[0]


def read_report(path: str | os.PathLike[str]) -> Report:
    """`path` (a report.json, or a directory holding one) as an assay.report.v1 report.

    Raises ConfigError (ConfigErrors for several validation errors) naming the file, the
    line and column, and the JSON path of each problem.
    """
    path = _single_report(as_path("path", path))
    shown = display_path(path)
    try:
        text = _report_bytes(path).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError("no such file", SourcePosition(shown)) from None
    except UnicodeDecodeError:
        raise ConfigError(
            "not a report: the file is not UTF-8 text", SourcePosition(shown)
        ) from None
    except UntrustedFileError as exc:
        raise ConfigError(f"not a report: the file {exc.problem}", SourcePosition(shown)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", SourcePosition(shown)) from None
    try:
        # One pass through pydantic's own JSON parser, the common case: a valid report.
        return Report.model_validate_json(text)
    except ValidationError:
        pass  # read again below, to say where in the file each problem is
    try:
        data = json_text.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"not a report: invalid JSON: {exc.msg}", SourcePosition(shown, exc.lineno, exc.colno)
        ) from None
    except ValueError as exc:  # nested too deeply
        raise ConfigError(f"not a report: {exc}", SourcePosition(shown)) from None
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        positions = json_positions(text)
        problems = [
            ConfigError(
                f"{json_path(error['loc'])}: {error['msg']}",
                SourcePosition(shown, *positions.locate(error["loc"])),
            )
            for error in exc.errors()[:_MAX_SHOWN_ERRORS]
        ]
        raise ConfigErrors(problems) from None


def _report_bytes(path: Path) -> bytes:
    """The file's bytes, read safely: a report named on the command line may be the user's
    own link, so it is followed, but only to a regular file (a FIFO would hang the read,
    `/dev/zero` fill memory), opened non-blocking, and no larger than MAX_REPORT_BYTES."""
    try:
        return read_untrusted(Path(os.path.realpath(path)), max_bytes=MAX_REPORT_BYTES)
    except UntrustedFileError as exc:
        if exc.reason != "size":
            raise
        raise UntrustedFileError(
            f"{exc.problem} of a report ({MAX_REPORT_BYTES >> 20} MiB, room for about "
            "100,000 cases); not read",
            "size",
        ) from None


def json_path(loc: Sequence[Hashable]) -> str:
    """`("cases", 3, "status")` -> `cases[3].status` (`$` for the document itself)."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".") or "$"


def find_reports(paths: Sequence[Path], *, exclude: Path | None = None) -> list[Path]:
    """The report files `paths` name: files as given, every report.json under a directory.

    Directories are searched recursively in sorted order (downloaded CI artifacts hold
    one report directory per shard), skipping hidden ones. `exclude` (the merge's own
    output) is never included, so merging into the searched directory can be repeated;
    but a path that names nothing else - the output file itself, or a directory whose
    only report it is - is a ConfigError: the merge would overwrite its own input. So
    is a path naming nothing, or a directory without any report.
    """

    excluded = Path(os.path.realpath(exclude)) if exclude is not None else None
    found: dict[Path, Path] = {}
    for path in paths:
        if path.is_dir():
            everything = list(_walk(path, REPORT_FILE))
            candidates = [p for p in everything if Path(os.path.realpath(p)) != excluded]
            if everything and not candidates:
                raise _overwrites_input(f"the only {REPORT_FILE} under this directory", path)
            if not candidates:
                raise ConfigError(
                    f"no {REPORT_FILE} found under this directory{unfinished_run_note(path)}",
                    SourcePosition(path),
                )
        elif path.exists():
            if Path(os.path.realpath(path)) == excluded:
                raise _overwrites_input("this report", path)
            candidates = [path]
        else:
            raise ConfigError("no such file or directory", SourcePosition(path))
        for candidate in candidates:
            # The same file reached twice (a directory and a file in it) is merged once.
            found.setdefault(Path(os.path.realpath(candidate)), candidate)
    return list(found.values())


def _overwrites_input(what: str, path: Path) -> ConfigError:
    return ConfigError(
        f"{what} is also the output, which the merge would overwrite; write the merged "
        "report somewhere else (-o)",
        SourcePosition(path),
    )


def _walk(top: Path, name: str) -> Iterator[Path]:
    for directory, subdirectories, files in os.walk(top):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        if name in files:
            yield Path(directory) / name
