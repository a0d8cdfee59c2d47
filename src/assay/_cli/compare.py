"""`assay compare BASE HEAD [--json] [--fail-on-regression]`: what changed between two runs.

BASE and HEAD are report.json files or report directories, or runs of the history:
`@last`, `@BRANCH` (that branch's newest run, e.g. `@main`) or a run id. Prints a text table (newly
failing cases first) or, with --json, the Comparison. Exit codes: 0, or 1 with
--fail-on-regression when a case newly fails or nothing can be compared (no case has a
result in both: the gate fails, as a run's does when nothing was scored); 2 when a report
cannot be read. Nothing to compare, or a run compared with itself, is also a warning.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assay.core.exit_codes import EXIT_GATE_FAILED, EXIT_PASS
from assay.errors import ConfigError
from assay.report.compare import CaseChange, Change, Comparison, compare_reports
from assay.report.gate.significance import explain
from assay.report.read import read_reports
from assay.report.terminal import clean

__all__ = ["command", "render_text"]

_UNCHANGED: tuple[Change, ...] = ("still_passing", "still_skipped")
_HEADERS = ("CHANGE", "CASE", "MODEL", "BASE", "HEAD", "SCORE")


def command(args: argparse.Namespace) -> int:
    base, head = read_reports([_report_path(args, args.base), _report_path(args, args.head)])
    comparison = compare_reports(base, head)
    nothing = comparison.nothing_compared() is not None
    warnings = comparison.warnings()
    if nothing and args.fail_on_regression:
        warnings.append(
            "--fail-on-regression: exit 1, since nothing was compared (as a run's "
            "gate fails when nothing was scored)"
        )
    for warning in warnings:
        print(f"warning: {clean(warning)}", file=sys.stderr)
    if args.json:
        sys.stdout.write(comparison.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(render_text(comparison))
    if args.fail_on_regression and (nothing or comparison.of("newly_failing")):
        return EXIT_GATE_FAILED
    return EXIT_PASS


def _report_path(args: argparse.Namespace, ref: str) -> Path:
    """A report file or directory, or a run of the history (`@last`, `@BRANCH`, a run id)."""
    # lazy: start-up (a command loads only what it runs)
    from assay._cli.history import history_dir_of
    from assay.report.history import resolve_ref

    if ref.startswith("@"):
        return resolve_ref(ref, history_dir_of(args))
    path = Path(ref)
    if path.exists():
        return path
    try:
        return resolve_ref(ref, history_dir_of(args))
    except ConfigError:
        return path  # neither a file nor a run id: read_reports says the file is missing


def render_text(comparison: Comparison) -> str:
    """The comparison for a terminal: totals, verdict, then one row per changed case.

    With nothing to compare it says so first, and shows no score change or verdict: the
    two scores are of different cases."""
    base, head, delta = comparison.base.summary, comparison.head.summary, comparison.delta
    nothing = comparison.nothing_compared()
    lines = [f"nothing to compare: {clean(nothing)}"] if nothing else []
    lines += [
        f"base  run {clean(comparison.base.run_id, limit=12)}  score {_score(base.score)}  "
        f"({base.passed}/{base.total} passed)",
        f"head  run {clean(comparison.head.run_id, limit=12)}  score {_score(head.score)}  "
        f"({head.passed}/{head.total} passed)",
    ]
    if not nothing:
        lines += [
            f"score change {_signed(delta.score)}"
            + (
                f" (mean over cases scored in both: {_signed(delta.paired_score)})"
                if delta.paired_score is not None
                else ""
            ),
            f"verdict: {comparison.significance.verdict} - {explain(comparison.significance)}",
        ]
    lines += [
        f"cost {_cost(delta.cost_usd)} · tokens in {delta.input_tokens:+,} / out "
        f"{delta.output_tokens:+,} · duration {delta.duration_s:+.1f}s",
        "",
    ]
    rows = [_row(case) for case in comparison.changes if case.change not in _UNCHANGED]
    if rows:
        widths = [max(len(cell) for cell in column) for column in zip(_HEADERS, *rows, strict=True)]
        for row in [_HEADERS, *rows]:
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
            lines.append("  ".join(cells).rstrip())
    else:
        lines.append("no case changed status")
    unchanged = len(comparison.of(*_UNCHANGED))
    if unchanged:
        lines.append(f"({unchanged} case(s) unchanged)")
    return "\n".join(lines) + "\n"


def _row(case: CaseChange) -> tuple[str, str, str, str, str, str]:
    score = f"{_score(case.base_score)} -> {_score(case.head_score)}"
    if case.score_delta is not None:
        score += f" ({_signed(case.score_delta)})"
    return (
        case.change.replace("_", " "),
        clean(case.id, limit=80),
        clean(case.model, limit=40) if case.model else "-",
        case.base_status or "-",
        case.head_status or "-",
        score,
    )


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:z.2f}"  # z: never -0.00


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+z.2f}"  # +0.00 for a change that rounds to 0


def _cost(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"{'-' if value < 0 else '+'}${abs(value):.4f}"
