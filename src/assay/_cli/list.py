"""`assay list [PATH...] [-t PATTERN]... [--json]`: the ids of the selected cases."""

from __future__ import annotations

import argparse
import json
import sys

from assay._cli.validate import print_warnings
from assay._util.display import display_path
from assay.core.exit_codes import EXIT_PASS
from assay.report.terminal import printable
from assay.suites.load import SuiteLoadErrors, load_suites
from assay.suites.select import nothing_selected, select_cases

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    try:
        loaded = load_suites(args.paths, strict=args.strict, root=args.root)
    except SuiteLoadErrors as exc:
        print_warnings(exc.warnings)
        raise
    print_warnings(loaded.warnings)
    cases = select_cases(loaded.cases, args.patterns)
    if args.patterns and not cases:  # as `run` says it: a typo must not look like "none"
        raise nothing_selected(args.patterns)
    if args.json:
        listing = [
            {
                "id": case.id,
                "kind": case.kind,
                "format": case.format,
                "source": {"path": display_path(case.source_path), "line": case.source_line},
            }
            for case in cases
        ]
        json.dump(listing, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for case in cases:
            print(printable(case.id))  # a case id may hold `##[`
    return EXIT_PASS
