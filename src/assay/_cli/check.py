"""`assay check`: one line per case (`ok`, `cannot pass`, `cannot fail`, `no reference`,
`error`, `skipped`), then the totals and what the judge calls cost; `--json` prints
`assay.check.v1` on stdout instead. Exit 0 when no case is broken, 1 when one is (or
could not be checked: `error`), 2 for a usage or configuration error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from assay._util.secrets import redact, redact_json
from assay.cli import EXIT_GATE_FAILED, EXIT_PASS
from assay.core.text import defuse_workflow_commands
from assay.options import RunOptions
from assay.runner.check import check
from assay.runner.check_report import CheckReport, report_lines

__all__ = ["command", "print_check"]


def command(args: argparse.Namespace) -> int:

    options = RunOptions(
        paths=tuple(args.paths),
        root=Path(args.root) if args.root else None,
        patterns=tuple(args.patterns),
        affected_by=args.affected_by,
        affects_all=tuple(args.affects_all or ()),
        shard=args.shard or None,
        judge_model=args.judge_model,
        cache_dir=Path(args.cache) if args.cache else None,
        offline=args.offline or None,
        concurrency=args.concurrency,
        timeout_s=args.timeout,
    )
    report = check(options)
    out = sys.stderr if args.json else sys.stdout
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print_check(report, stream=out)
    if args.json:
        sys.stdout.write(redact_json(report.model_dump_json(indent=2)) + "\n")
        sys.stdout.flush()
    return EXIT_GATE_FAILED if report.failed else EXIT_PASS


def print_check(report: CheckReport, *, stream: TextIO) -> None:
    """One line per case, then the totals and the cost."""

    for line in report_lines(report):
        stream.write(defuse_workflow_commands(redact(line)) + "\n")
    stream.flush()
