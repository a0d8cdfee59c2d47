"""What `assay run` shows while it works and when it is done.

On a TTY a rich live display (overall bar, counts, the cases running now); elsewhere,
CI logs above all, one plain line per finished case. rich is imported only for the live
display. Text from agents and suites goes through `clean`: cut to one line, stripped of
control characters and its workflow commands defused, so it can neither redraw the terminal
nor start a workflow command in a CI log (`assay run` and `assay merge` print outside the
guard `assay ci` puts on its output).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from assay._util.secrets import redact
from assay.core.counting import count_of
from assay.core.text import defuse_workflow_commands, one_line
from assay.report.explain import reason_with_source
from assay.report.gate.why import gate_failed_without_failures

if TYPE_CHECKING:
    from assay.report.model import CaseResult, Report

__all__ = [
    "LiveProgress",
    "PlainProgress",
    "case_line",
    "clean",
    "failure_lines",
    "make_listener",
    "print_summary",
    "printable",
    "summary_table",
]

_LABELS = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "skipped": "SKIP"}
_MAX_REASON = 300


def printable(text: str) -> str:
    """All of `text` as one line safe to print: each run of control characters (line breaks
    included) becomes a space and workflow commands are defused (a leading `::`, any `##[`),
    so it cannot start one behind an indent or a label either."""
    return defuse_workflow_commands(one_line(text, collapse=True))


def clean(text: str, *, limit: int = _MAX_REASON) -> str:
    """The first line of `text`, `printable`, cut to `limit` characters."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    first = printable(first)
    # Cutting the end cannot make a command again: it can only lose the `::` or `[`.
    return first if len(first) <= limit else first[: limit - 3] + "..."


def _label(result: CaseResult) -> str:
    return f"{result.id} [{result.model}]" if result.model else result.id


def case_line(result: CaseResult, *, reason: bool = True) -> str:
    """`PASS  suite/case [model]  1.00  3.2s`, with the reason for anything but a pass."""
    parts = [f"{_LABELS[result.status]:<5} {clean(_label(result))}"]
    if result.status != "skipped":
        if result.score is not None:
            parts.append(f"{result.score:.2f}")
        if result.attempts_total:  # with repeats, and something scored
            parts.append(f"{result.attempts_passed}/{result.attempts_total} passed")
        parts.append(f"{result.duration_s:.1f}s")
    if reason and result.status != "pass" and result.reason:
        # Masked before it is cut to its first line: a key with a CR inside was cut in two,
        # and its first half shown.

        parts.append(clean(redact(reason_with_source(result))))
    if result.flaky:
        parts.append("(flaky)")
    # Printed as the case finishes, before the report is redacted: a judge or agent may
    # have quoted a key in its reason.
    return redact("  ".join(parts))


class PlainProgress:
    """One line per finished case, for logs."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._skip_reasons: set[str] = set()

    def run_started(self, total: int) -> None:
        self._stream.write(f"running {count_of(total, 'case')}\n")
        self._stream.flush()

    def case_started(self, case_id: str, model: str | None) -> None:
        pass

    def case_finished(self, result: CaseResult) -> None:
        line = case_line(result)
        if result.status == "skipped":
            # Thirty cases skipped for want of one key are one reason, said once here and
            # counted in the gate line, not thirty copies of it.
            if result.reason in self._skip_reasons:
                line = case_line(result, reason=False) + "  (same reason)"
            self._skip_reasons.add(result.reason)
        self._stream.write(line + "\n")
        self._stream.flush()

    def run_finished(self) -> None:
        self._stream.flush()


class LiveProgress:
    """A rich live display: a bar over all cases, the counts, and what is running now."""

    _SHOWN_RUNNING = 4

    def __init__(self, stream: TextIO, *, width: int | None = None) -> None:
        from rich.console import Console  # lazy: start-up (rich only when used)

        self._console = Console(file=stream, width=width, highlight=False)
        self._counts: Counter[str] = Counter()
        self._running: dict[str, None] = {}
        self._live: Any = None
        self._bar: Any = None
        self._task: Any = None

    def run_started(self, total: int) -> None:
        # lazy: start-up (rich only when used)
        from rich.live import Live
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self._console,
        )
        self._task = self._bar.add_task("assay", total=total)
        self._live = Live(self._render(), console=self._console, refresh_per_second=8)
        self._live.start()

    def case_started(self, case_id: str, model: str | None) -> None:
        self._running[f"{case_id} [{model}]" if model else case_id] = None
        self._refresh()

    def case_finished(self, result: CaseResult) -> None:
        self._running.pop(_label(result), None)
        self._counts[result.status] += 1
        if self._bar is not None:
            self._bar.advance(self._task)
        if result.status in ("fail", "error") and self._live is not None:
            # One screen line each: a wrapped line is a broken table to the eye.
            self._live.console.print(
                _styled_line(case_line(result)), no_wrap=True, overflow="ellipsis"
            )
        self._refresh()

    def run_finished(self) -> None:
        if self._live is not None:
            self._refresh()
            self._live.stop()
            self._live = None

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._render())

    def _render(self) -> Any:
        # lazy: start-up (rich only when used)
        from rich.console import Group
        from rich.text import Text

        counts = "  ".join(
            f"{name} {self._counts[status]}"
            for status, name in (
                ("pass", "passed"),
                ("fail", "failed"),
                ("error", "errors"),
                ("skipped", "skipped"),
            )
        )
        running = list(self._running)
        shown = ", ".join(clean(r, limit=60) for r in running[: self._SHOWN_RUNNING])
        more = len(running) - self._SHOWN_RUNNING
        if more > 0:
            shown += f" (+{more})"
        lines = [self._bar, Text(counts, no_wrap=True, overflow="ellipsis")]
        if running:
            lines.append(Text(f"running: {shown}", style="dim", no_wrap=True, overflow="ellipsis"))
        return Group(*lines)


def make_listener(stream: TextIO, *, live: bool | None = None) -> PlainProgress | LiveProgress:
    """The live display when `stream` is a terminal (or `live`), plain lines otherwise."""
    is_tty = stream.isatty() if live is None else live
    return LiveProgress(stream) if is_tty else PlainProgress(stream)


def summary_table(cases: Iterable[CaseResult]) -> str:
    """Per suite: cases, passed, failed, errors, skipped and mean score, plus a total row."""
    rows: dict[str, list[CaseResult]] = {}
    for case in cases:
        rows.setdefault(case.suite, []).append(case)
    everything = [c for group in rows.values() for c in group]
    table = [["suite", "cases", "passed", "failed", "errors", "skipped", "score"]]
    for name, group in [*rows.items(), *([("total", everything)] if len(rows) > 1 else [])]:
        counts = Counter(c.status for c in group)
        scores = [c.score for c in group if c.status in ("pass", "fail") and c.score is not None]
        table.append(
            [
                clean(name, limit=60),
                str(len(group)),
                str(counts["pass"]),
                str(counts["fail"]),
                str(counts["error"]),
                str(counts["skipped"]),
                f"{sum(scores) / len(scores):.2f}" if scores else "-",
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in table
    )


_STYLES = {"PASS": "bold green", "FAIL": "bold red", "ERROR": "bold yellow", "SKIP": "dim"}
_LEADING_LABEL = re.compile(r"^(?:gate: )?(PASS|FAIL|ERROR|SKIP)\b")


def _styled_line(line: str) -> Any:
    """`line` as rich Text with its PASS/FAIL/ERROR/SKIP label coloured (no markup read)."""
    from rich.text import Text  # lazy: start-up (rich only when used)

    text = Text(line, no_wrap=True, overflow="ellipsis")
    match = _LEADING_LABEL.match(line)
    if match:
        text.stylize(_STYLES[match[1]], match.start(1), match.end(1))
    return text


def failure_lines(report: Report, *, limit: int = 20) -> list[str]:
    """Why each failed case failed (expected, the agent's finding, the judge's reasoning),
    for the first `limit` of them; report.json has the rest."""
    # lazy: start-up (not loaded with this module)
    from assay.report.explain import FINDINGS_SHOWN, explain_lines, failing_checks, finding_marks

    failed = [c for c in report.cases if c.status == "fail"]
    lines: list[str] = []
    for case in failed[:limit]:
        explanations = failing_checks(case)
        if not explanations:
            continue  # its progress line already gave the reason
        lines.append(f"FAIL  {clean(_label(case))}")
        lines += ["  " + clean(line, limit=300) for e in explanations for line in explain_lines(e)]
        marks = finding_marks(case) if case.kind == "review" else []
        if marks:
            lines.append("  agent's findings:")
            shown = marks[:FINDINGS_SHOWN]
            lines += [f"    {m.mark}: {clean(m.label, limit=200)}" for m in shown]
            if len(marks) > len(shown):
                lines.append(f"    ... and {len(marks) - len(shown)} more (see report.json)")
    if len(failed) > limit:
        more = count_of(len(failed) - limit, "more failed case")
        lines.append(f"... and {more} (see report.json)")
    return lines


def print_summary(
    report: Report, *, report_dir: str, stream: TextIO, colour: bool | None = None
) -> None:
    """The table, flaky cases, the gate line and where the reports are.

    On a terminal (or with `colour`) the gate verdict is coloured through rich, which
    honours NO_COLOR; elsewhere the text is plain, as CI logs and pipes want it.
    """
    summary = report.summary
    lines = ["", summary_table(report.cases), *failure_lines(report)]
    flaky = [_label(c) for c in report.cases if c.flaky]
    if flaky:
        lines.append(f"flaky ({len(flaky)}): " + ", ".join(clean(f, limit=80) for f in flaky))
    if report.run.interrupted:
        lines.append("interrupted: the report covers the cases that finished")
    if report.run.isolation is not None and report.run.isolation.warning:
        lines.append(f"WARNING: {clean(report.run.isolation.warning)}")
    lines += [f"WARNING: {clean(warning)}" for warning in report.run.warnings]
    lines += [f"note: {clean(note)}" for note in report.run.notes]
    from assay.report.gate.pass_k import pass_rates_note  # lazy: start-up (the models)

    if rates := pass_rates_note(report):
        lines.append(f"repeats: {rates}")
    lines.append(f"gate: {summary.gate.upper()}  {clean(summary.gate_reason)}")
    why = gate_failed_without_failures(report)
    lines += [clean(why)] if why else []
    lines.append(f"report: {report_dir}")
    lines = redact("\n".join(lines)).split("\n")  # the terminal takes text through the one door
    if not (stream.isatty() if colour is None else colour):
        stream.write("\n".join(lines) + "\n")
        stream.flush()
        return
    # lazy: start-up (rich only when used)
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, force_terminal=True, highlight=False, soft_wrap=True)
    for line in lines:
        styled = _styled_line(line) if line.startswith("gate: ") else Text(line)
        styled.no_wrap = False  # the summary may wrap; only progress lines must not
        console.print(styled)
    stream.flush()
