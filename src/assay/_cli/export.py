"""`assay export --inspect REPORT_DIR [-o FILE]`: a finished run in another tool's format.

`--inspect` writes the run as an inspect eval log (report/inspect_log.py), read from the
report directory alone, so any finished run can be exported, one downloaded from CI too.
By default the log is `REPORT_DIR/inspect-log.json`, the file `assay run --inspect-log`
writes; `-o DIR` (an existing directory, or a path ending in `/`) writes it under the name
inspect gives its own logs, which `inspect view --log-dir DIR` lists; `-o -` prints it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from assay._util.secrets import redact_chunks
from assay._util.textout import write_in_slices
from assay.cli import EXIT_PASS
from assay.core.files import INSPECT_LOG_FILE, REPORT_FILE
from assay.errors import ConfigError, output_error
from assay.report.inspect_log import inspect_log_chunks, inspect_log_name
from assay.report.model import Report
from assay.report.read import read_report
from assay.runner.writer import write_rendering

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:

    report_dir = _report_dir(Path(args.report_dir))
    report = read_report(report_dir)
    chunks = inspect_log_chunks(report, report_dir)
    if args.output == "-":
        write_in_slices(sys.stdout, redact_chunks(chunks))
        return EXIT_PASS
    target = _target(args.output, report_dir, report, inspect_log_name(report))

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_rendering(target, chunks)
    except OSError as exc:
        raise output_error(exc, what=str(target)) from None
    print(f"inspect log: {target}")
    if target.name == inspect_log_name(report):
        print(f"open it with: inspect view --log-dir {target.parent}", file=sys.stderr)
    else:  # inspect view lists a .json log only under inspect's own name for it
        print(
            f"for `inspect view`, export it into a directory: assay export --inspect "
            f"{report_dir} -o DIR/, then inspect view --log-dir DIR",
            file=sys.stderr,
        )
    return EXIT_PASS


def _report_dir(given: Path) -> Path:
    """The directory of the run: REPORT_DIR itself, or the one of its report.json."""
    directory = given.parent if given.name == REPORT_FILE and given.is_file() else given
    if not (directory / REPORT_FILE).is_file():
        raise ConfigError(
            f"{directory}: no {REPORT_FILE} here; name the report directory of a finished "
            "run (`assay run --report-dir DIR`, or `assay merge -o DIR`)"
        )
    return directory


def _target(output: str | None, report_dir: Path, report: Report, inspect_name: str) -> Path:
    if output is None:
        return report_dir / INSPECT_LOG_FILE
    path = Path(output)
    if path.is_dir() or output.endswith(("/", os.sep)):
        return path / inspect_name
    return path
