"""`assay merge REPORT... -o OUT [--threshold X] [--max-errors N] [--history DIR]`: shards
-> one gated report.

REPORT is a report.json file or a directory searched for them (downloaded CI artifacts).
OUT is written as the merged report.json, with every renderer's file (summary.md,
junit.xml, a plugin's) beside it, and
the per-case artifacts the reports point at (transcripts, tracebacks) are copied beside
it too, so the merged report directory stands on its own. The merged report is the run
the history records (a shard run records nothing): `--history DIR`, else `ASSAY_HISTORY`,
else `.assay-history` beside OUT's directory. Exit codes: 0 gate passed,
1 gate failed, 2 unreadable or unmergeable reports, or ones no run wrote as they are (a
case whose status contradicts its score: report/merge_consistency.py); each a
ConfigError, printed by assay.cli.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from assay._util.display import display_path
from assay._util.paths import resolve_inside
from assay.core.exit_codes import EXIT_GATE_FAILED, EXIT_PASS
from assay.errors import ConfigError, output_error
from assay.report.history import usable_history_dir
from assay.report.merge import merge_reports
from assay.report.model import Report
from assay.report.read import find_reports, read_reports
from assay.runner.attempt import artifacts_dir
from assay.runner.lock import report_dir_lock
from assay.runner.writer import REPORT_FILE, refuse_foreign_files, write_report_dir

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    output = _output_file(args.output)
    paths = find_reports([Path(p) for p in args.reports], exclude=output)
    reports = read_reports(paths)
    labels = [display_path(p) for p in paths]
    merged = merge_reports(
        reports,
        threshold=args.threshold,
        max_errors=args.max_errors,
        labels=labels,
        on_warning=lambda message: print(f"warning: {message}", file=sys.stderr),
    )
    _write_merged_report(merged, output, history=args.history)
    _copy_case_artifacts(merged, sources=list(zip(paths, reports, strict=True)), output=output)

    # lazy: start-up (a command loads only what it runs)
    from assay.report.terminal import print_summary

    print(f"merged {len(reports)} report(s): {', '.join(labels)}")
    print_summary(merged, report_dir=display_path(output), stream=sys.stdout)
    return EXIT_PASS if merged.summary.gate == "pass" else EXIT_GATE_FAILED


def _output_file(given: str) -> Path:
    """`-o DIR` means DIR/report.json: a directory that exists, a path ending in `/`, or a
    new path without a suffix (`-o merged`, not a file named `merged` with the other
    renderings strewn beside it)."""
    raw = Path(given)
    is_dir = raw.is_dir() or given.endswith(("/", os.sep)) or not (raw.exists() or raw.suffix)
    return raw / REPORT_FILE if is_dir else raw


def _write_merged_report(report: Report, output: Path, *, history: str | None) -> None:
    """`output` gets the report JSON; every other rendering goes beside it.

    The runner's writer renders them all into a private directory next to `output`; they
    are then renamed into place, so every file appears whole (whatever `output` is named).
    """
    directory = output.parent
    refuse_foreign_files(directory, option="-o", also=[output.name])
    try:
        directory.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".assay-merge-", dir=directory))
    except OSError as exc:
        raise ConfigError(f"cannot write {output}: {exc.strerror or exc}") from None
    try:
        # Held while writing, as a run holds its report directory; its file marks the
        # directory as assay's for the next merge into it.
        with report_dir_lock(directory):
            history_dir, why_not = usable_history_dir(directory, Path(history) if history else None)
            if why_not:
                print(f"warning: {why_not}", file=sys.stderr)
            written = write_report_dir(report, staging, cases=(), history_dir=history_dir)
            # Every rendering the run would write (a plugin's included), not a fixed list.
            for file in written:
                os.replace(file, output if file.name == REPORT_FILE else directory / file.name)
    except OSError as exc:
        raise output_error(exc, what=str(output)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _copy_case_artifacts(
    merged: Report, *, sources: Sequence[tuple[Path, Report]], output: Path
) -> None:
    """Copy each merged case's artifact directory from its report's directory to the output's.

    Report paths such as `attempts[].transcript` are relative to the report directory, so
    this keeps them valid. Symlinks are not followed: an artifact downloaded from elsewhere
    must not pull files from outside it into the merged report.
    """

    target_root = Path(os.path.realpath(output.parent))
    origin: dict[tuple[str, str | None], Path] = {}
    for path, report in sources:  # a later report wins, as in merge_reports
        for case in report.cases:
            origin[(case.id, case.model)] = Path(os.path.realpath(path.parent))
    for case in merged.cases:
        source_root = origin[(case.id, case.model)]
        if source_root == target_root:
            continue
        relative = artifacts_dir(Path(), case.id, case.model, 0).parent
        try:
            source = resolve_inside(source_root, relative.as_posix())
        except ConfigError:
            continue  # a symlink on the way leads out of the report directory
        if source.is_dir():
            try:
                shutil.copytree(
                    source, target_root / relative, ignore=_symlinks, dirs_exist_ok=True
                )
            except OSError as exc:  # shutil.Error included
                raise output_error(exc, what=str(target_root / relative)) from None


def _symlinks(directory: str, names: list[str]) -> list[str]:
    return [name for name in names if os.path.islink(os.path.join(directory, name))]
