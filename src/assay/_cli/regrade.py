"""`assay regrade REPORT_DIR [PATH...]`: grade a run's saved answers again, no agent run.

Prints the summary as `assay run` does (with --json, report.json on stdout and the
summary on stderr). Exit codes: 0 gate passed, 1 gate failed, 2 usage/config error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assay._util.textout import write_in_slices
from assay.cli import EXIT_GATE_FAILED, EXIT_PASS
from assay.options import RunOptions
from assay.report.json_stream import report_json_chunks
from assay.report.terminal import print_summary
from assay.runner.regrade import output_dir, regrade

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:

    options = RunOptions(
        paths=tuple(args.paths),
        root=Path(args.root) if args.root else None,
        patterns=tuple(args.patterns),
        judge_model=args.judge_model,
        judge_prompt=args.judge_prompt,
        report_dir=Path(args.report_dir) if args.report_dir else None,
        threshold=args.threshold,
        cache_dir=Path(args.cache) if args.cache else None,
        offline=True if args.offline else None,
        json_output=True if args.json else None,
    )
    report = regrade(args.source, options)
    out = sys.stderr if args.json else sys.stdout
    report_dir = str(output_dir(args.source, args.report_dir))
    print(f"re-graded run {report.run.regraded_from} as run {report.run.id}", file=out)
    print_summary(report, report_dir=report_dir, stream=out)
    if args.json:
        write_in_slices(sys.stdout, report_json_chunks(report, indent=2))
        sys.stdout.write("\n")
        sys.stdout.flush()
    return EXIT_PASS if report.summary.gate == "pass" else EXIT_GATE_FAILED
