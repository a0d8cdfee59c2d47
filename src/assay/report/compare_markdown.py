"""A comparison as GitHub-flavoured Markdown, for the job summary and the sticky PR comment.

The headline (score change, verdict, totals table) always stays; the case lists after it
are cut, whole entries at a time, to fit `max_bytes`. Case ids, models and reasons come
from suites and agents, so they go through the same escaping as summary.md (inline
Markdown, code spans, neutralised @mentions).
"""

from __future__ import annotations

from assay.report.compare import CaseChange, Change, Comparison
from assay.report.gate.significance import explain

# The escaping and size-fitting helpers of summary.md: one implementation for both.
from assay.report.markdown import _code, _Entry, _fit, escape_markdown

__all__ = ["render_comparison"]

_REASON_CHARS = 200
"""A reason in a list item is cut to this: the head report has the full text."""
_VERDICT_ICON = {
    "significantly worse": "📉",
    "significantly better": "📈",
    "no significant change": "➖",
    "no cases scored in both": "➖",
}
_STATUS_ICON = {"pass": "✅", "fail": "❌", "error": "⚠️", "skipped": "⏭️", None: "∅"}
_SECTIONS: tuple[tuple[str, tuple[Change, ...]], ...] = (
    ("### ❌ Newly failing", ("newly_failing",)),
    ("### ✅ Newly passing", ("newly_passing",)),
    (
        "### Other status changes",
        ("now_error", "no_longer_error", "now_skipped", "no_longer_skipped", "added", "removed"),
    ),
)
_CHANGE_LABEL: dict[Change, str] = {
    "newly_failing": "newly failing",
    "newly_passing": "newly passing",
    "still_failing": "still failing",
    "now_error": "now an error",
    "no_longer_error": "no longer an error",
    "now_skipped": "now skipped",
    "no_longer_skipped": "no longer skipped",
    "added": "added",
    "removed": "removed",
    "still_passing": "still passing",
    "still_skipped": "still skipped",
}


def render_comparison(
    comparison: Comparison, *, max_bytes: int, title: str = "Compared with base"
) -> str:
    """The comparison as Markdown of at most `max_bytes` UTF-8 bytes."""
    entries = [
        _Entry(heading, _case_line(case))
        for heading, changes in _SECTIONS
        for case in comparison.of(*changes)
    ]
    entries += [
        _Entry("### Score changes", _case_line(case)) for case in _score_changes(comparison)
    ]
    entries += [
        _Entry("### Still failing", _case_line(case)) for case in comparison.of("still_failing")
    ]
    return _fit(_head(comparison, title), entries, _foot(comparison), max_bytes=max_bytes)


def _head(comparison: Comparison, title: str) -> str:
    base, head, delta = comparison.base.summary, comparison.head.summary, comparison.delta
    significance = comparison.significance
    nothing = comparison.nothing_compared()
    # With nothing to compare the two scores are of different cases: no change is shown.
    score_change = "–" if nothing else _signed(delta.score)
    if nothing:
        headline = f"## ➖ {escape_markdown(title)}: nothing to compare"
        verdict = f"**Nothing to compare** · {escape_markdown(nothing)}"
    else:
        headline = (
            f"## {_VERDICT_ICON[significance.verdict]} {escape_markdown(title)}: "
            f"score {_score(base.score)} → {_score(head.score)} ({score_change})"
        )
        verdict = (
            f"**{significance.verdict.capitalize()}** · {escape_markdown(explain(significance))}"
        )
    lines = [
        headline,
        "",
        verdict,
        "",
        "| | Base | Head | Change |",
        "|---|---:|---:|---:|",
        f"| Score | {_score(base.score)} | {_score(head.score)} | {score_change} |",
    ]
    for label, before, after in (
        ("Passed", base.passed, head.passed),
        ("Failed", base.failed, head.failed),
        ("Errors", base.errors, head.errors),
        ("Skipped", base.skipped, head.skipped),
        ("Cases", base.total, head.total),
    ):
        lines.append(f"| {label} | {before} | {after} | {after - before:+d} |")
    lines += [
        f"| Cost | {_cost(base.cost_usd)} | {_cost(head.cost_usd)} | "
        f"{_cost(delta.cost_usd, sign=True)} |",
        f"| Tokens in / out | {base.tokens.input:,} / {base.tokens.output:,} | "
        f"{head.tokens.input:,} / {head.tokens.output:,} | "
        f"{delta.input_tokens:+,} / {delta.output_tokens:+,} |",
        f"| Duration | {base.duration_s:.1f}s | {head.duration_s:.1f}s | "
        f"{delta.duration_s:+.1f}s |",
    ]
    if delta.paired_score is not None:
        lines += [
            "",
            f"Mean score change over the cases scored in both: {_signed(delta.paired_score)}",
        ]
    counted = [f"{n} {_CHANGE_LABEL[change]}" for change, n in comparison.counts.items()]
    if counted:
        lines += ["", " · ".join(counted)]
    return "\n".join(lines) + "\n"


def _score_changes(comparison: Comparison) -> list[CaseChange]:
    """Cases that kept their status but not their score (repeats, graded scores), worst first."""
    changed = [
        c
        for c in comparison.of("still_passing", "still_failing")
        if c.score_delta is not None and abs(c.score_delta) >= 0.005
    ]
    return sorted(changed, key=lambda c: (c.score_delta or 0.0, c.id))


def _case_line(case: CaseChange) -> str:
    label = _code(case.id) + (f" \\[{escape_markdown(case.model)}\\]" if case.model else "")
    statuses = f"{_STATUS_ICON[case.base_status]} → {_STATUS_ICON[case.head_status]}"
    line = f"- {label}: {statuses} {_CHANGE_LABEL[case.change]}"
    if case.base_score is not None or case.head_score is not None:
        line += f" · score {_score(case.base_score)} → {_score(case.head_score)}"
    reason = case.reason.strip().splitlines()[0] if case.reason.strip() else ""
    if reason and case.change not in ("newly_passing", "still_passing"):
        shortened = reason[:_REASON_CHARS] + ("…" if len(reason) > _REASON_CHARS else "")
        line += f" — {escape_markdown(shortened)}"
    return line


def _foot(comparison: Comparison) -> str:
    sides = []
    for name, side in (("base", comparison.base), ("head", comparison.head)):
        text = f"{name} run {_code(side.run_id)}"
        if side.git_sha:
            text += f" at {_code(side.git_sha[:12])}"
        sides.append(text)
    return "\n---\n\n" + " · ".join(sides) + "\n"


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.2f}"


def _cost(value: float | None, *, sign: bool = False) -> str:
    if value is None:
        return "unknown"
    return f"{'+' if sign and value >= 0 else '-' if value < 0 else ''}${abs(value):.4f}"
