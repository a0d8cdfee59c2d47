"""`assay list [PATH...] [selection] [--json]`: the ids of the cases `assay run` would run
with the same selection options (`-t`, `--affected-by`, `--shard`, `--model`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assay._cli.validate import print_warnings
from assay._util.display import display_path
from assay.core.exit_codes import EXIT_PASS
from assay.options import RunOptions
from assay.report.terminal import printable
from assay.runner.affected import affected_selection
from assay.runner.plan import shard_cases
from assay.runner.settings import resolve_settings
from assay.suites.load import LoadedSuites, SuiteLoadErrors, load_suites
from assay.suites.select import nothing_selected, select_cases

if TYPE_CHECKING:
    from assay.suites.case import Case

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
    cases, models = _as_run_selects(args, cases, loaded)
    if args.json:
        listing = [
            {
                "id": case.id,
                "kind": case.kind,
                "format": case.format,
                "source": {"path": display_path(case.source_path), "line": case.source_line},
                **({"models": list(models)} if models else {}),
            }
            for case in cases
        ]
        json.dump(listing, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for case in cases:
            for model in models or (None,):  # a case id may hold `##[`
                print(printable(case.id if model is None else f"{case.id}  {model}"))
    return EXIT_PASS


def _as_run_selects(
    args: argparse.Namespace, cases: list[Case], loaded: LoadedSuites
) -> tuple[list[Case], tuple[str, ...]]:
    """The rest of `run`'s selection, decided by the runner's own functions as `run`
    decides it: --affected-by (with --affects-all), then --shard; and the --model matrix."""

    options = RunOptions(
        paths=tuple(args.paths),
        root=Path(args.root) if args.root else None,
        models=tuple(args.models),
        affected_by=args.affected_by,
        affects_all=tuple(args.affects_all or ()),
        shard=args.shard or None,
    )
    settings = resolve_settings(options, config=loaded.config)
    if settings.affected_by:
        cases = list(affected_selection(settings, cases, loaded.config).cases)
    return shard_cases(cases, settings.shard), tuple(args.models and settings.models)
