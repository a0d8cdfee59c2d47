"""summary.md with a baseline (and the Action's job summary): what changed leads, as in the
PR comment, and every failing case appears once.

Order: the verdict line (gate, score, threshold, counts); the comparison's headline (score
change, significance, totals side by side); the newly failing cases, each with why; newly
passing, other status changes, score changes; then the full summary (results by suite,
flaky cases, the failures and errors not listed yet, skips) and the run's details. The
pieces, the escaping and the size-fitting are summary.md's and the comparison's own.
"""

from __future__ import annotations

from assay.report.compare import CaseChange, Change, Comparison
from assay.report.compare_markdown import _case_line, _score_changes
from assay.report.compare_markdown import _foot as _comparison_foot
from assay.report.compare_markdown import _head as _comparison_head
from assay.report.markdown import (
    _STATUS_ICON,
    _Entry,
    _fit,
    _flaky,
    _foot,
    _problem_block,
    _skipped,
    suite_table,
    suite_table_budget,
    verdict_head,
)
from assay.report.model import Report

__all__ = ["render_compared_summary"]

_OTHER_CHANGES: tuple[Change, ...] = (
    "no_longer_error",
    "now_skipped",
    "no_longer_skipped",
    "added",
    "removed",
)


def render_compared_summary(
    report: Report,
    comparison: Comparison,
    *,
    max_bytes: int = 900_000,
    title: str = "Evaluation Results",
    comparison_title: str = "Compared with baseline",
) -> str:
    """The report led by its comparison with a baseline, in at most `max_bytes` UTF-8 bytes."""
    by_key = {(c.id, c.model): c for c in report.cases}
    listed: set[tuple[str, str | None]] = set()
    entries: list[_Entry] = []
    for change in comparison.of("newly_failing", "now_error"):
        case = by_key.get((change.id, change.model))
        if case is not None:
            listed.add((case.id, case.model))
            entries.append(
                _Entry("### ❌ Newly failing", _problem_block(case, note=_moved(change)))
            )
    entries += [
        _Entry("### ✅ Newly passing", _case_line(c)) for c in comparison.of("newly_passing")
    ]
    entries += [
        _Entry("### Other status changes", _case_line(c)) for c in comparison.of(*_OTHER_CHANGES)
    ]
    entries += [_Entry("### Score changes", _case_line(c)) for c in _score_changes(comparison)]
    table = suite_table(report.cases, max_bytes=suite_table_budget(max_bytes))
    entries.append(_Entry("### Results by suite", table))
    entries += _flaky(report.cases)
    rest = [c for c in report.cases if (c.id, c.model) not in listed]
    entries += [
        _Entry(
            "### Other failures" if c.status == "fail" else "### Other errors", _problem_block(c)
        )
        for status in ("fail", "error")
        for c in rest
        if c.status == status
    ]
    entries += _skipped(report.cases)
    head = verdict_head(report, title) + "\n" + _comparison_head(comparison, comparison_title)
    foot = _foot(report) + _comparison_foot(comparison).replace("\n---\n", "", 1)
    return _fit(head, entries, foot, max_bytes=max_bytes)


def _moved(change: CaseChange) -> str:
    before = _STATUS_ICON.get(change.base_status or "", "∅")
    after = _STATUS_ICON.get(change.head_status or "", "∅")
    return f"{before} → {after}"
