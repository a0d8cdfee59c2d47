"""`assay history [--flaky] [--json] [--history DIR]`: the runs kept in the run history."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from assay.core.exit_codes import EXIT_PASS
from assay.options import DEFAULT_REPORT_DIR
from assay.report.history import (
    flaky_cases,
    history_dir_for,
    quarantine_snippet,
    read_history,
)
from assay.report.terminal import clean

__all__ = ["command", "history_dir_of"]


def history_dir_of(args: argparse.Namespace) -> Path:
    explicit = Path(args.history) if getattr(args, "history", None) else None
    return history_dir_for(DEFAULT_REPORT_DIR, explicit)


def command(args: argparse.Namespace) -> int:
    where = history_dir_of(args)
    if args.flaky:
        flaky = flaky_cases(where)
        if args.json:
            rows = [{"case": key, "statuses": statuses} for key, statuses in flaky]
            sys.stdout.write(json.dumps(rows, indent=2) + "\n")
            return EXIT_PASS
        if not flaky:
            print(f"no case flipped between pass and fail in the history at {where}")
        for key, statuses in flaky:
            print(f"{clean(key, limit=100)}  {' '.join(clean(str(s), limit=10) for s in statuses)}")
        if flaky:  # what keeps them out of the gate while they still run and are reported
            print("\nto quarantine them, add to [tool.assay] in pyproject.toml (or assay.toml):")
            # json.dumps escapes every control and non-ASCII character of the ids.
            print(quarantine_snippet(flaky), end="")
        return EXIT_PASS
    runs = read_history(where)
    if args.json:
        sys.stdout.write(json.dumps([e.model_dump() for e in runs], indent=2) + "\n")
        return EXIT_PASS
    if not runs:
        print(f"no runs in the history at {where} yet")
        return EXIT_PASS
    print("RUN           TIME                  BRANCH        SHA           SCORE  GATE  P/F/E/S")
    for entry in reversed(runs):  # newest first, as people look for the last run
        # The index and its reports are files anyone may have edited: every text is cleaned.
        score = "–" if entry.score is None else f"{entry.score:z.2f}"
        counts = f"{entry.passed}/{entry.failed}/{entry.errors}/{entry.skipped}"
        print(
            f"{clean(entry.run_id, limit=12):<13} {clean(entry.time, limit=20):<21} "
            f"{clean(entry.branch or '-', limit=12):<13} {clean((entry.git_sha or '-')[:12]):<13} "
            f"{score:<6} {clean(entry.gate, limit=5):<5} {counts}"
        )
    return EXIT_PASS
