"""The sticky PR comment's Markdown: what this PR changed first, every failing case once.

Order: the verdict line (gate, score, interval, threshold); what changed compared with the
base (newly failing with why, newly passing, significance); the failures not already
listed; the results by suite, collapsed; the run's details and the link to the full report.
A failing case is one collapsed row whose summary line carries its reason, so a reviewer
reads the list at a glance and opens only what they care about. The escaping and the
size-fitting are summary.md's (one implementation).
"""

from __future__ import annotations

from assay.core.counting import count_of
from assay.report.compare import CaseChange, Comparison
from assay.report.explain import reason_with_source
from assay.report.gate.significance import explain
from assay.report.gate.stats import incomplete_reason
from assay.report.gate.why import gate_failed_without_failures
from assay.report.markdown import (
    _STATUS_ICON,
    _code,
    _Entry,
    _facts,
    _fit,
    _fmt_score,
    _html,
    escape_markdown,
    problem_details,
    suite_table,
    suite_table_budget,
)
from assay.report.model import CaseResult, Report

__all__ = ["render_comment"]

_SUMMARY_REASON_CHARS = 160
"""A reason in a row's summary line is cut to this; the row itself has the whole of it."""


def render_comment(
    report: Report,
    *,
    max_bytes: int,
    comparison: Comparison | None = None,
    comparison_title: str = "Compared with the base branch",
    full_report_url: str | None = None,
) -> str:
    """The comment's Markdown (without its marker) in at most `max_bytes` UTF-8 bytes."""
    by_key = {(c.id, c.model): c for c in report.cases}
    listed: set[tuple[str, str | None]] = set()
    head = _verdict(report)
    entries: list[_Entry] = []
    if comparison is not None:
        head += "\n" + _comparison_head(comparison, comparison_title)
        for change in comparison.of("newly_failing", "now_error"):
            case = by_key.get((change.id, change.model))
            if case is not None:
                listed.add((case.id, case.model))
                entries.append(_Entry("### ❌ Newly failing", _row(case, note=_moved(change))))
        for change in comparison.of("newly_passing"):
            entries.append(_Entry("### ✅ Newly passing", _passing_line(change)))
    heading = "### Other failures" if comparison is not None else "### Failures"
    for case in report.cases:
        if case.status in ("fail", "error") and (case.id, case.model) not in listed:
            entries.append(_Entry(heading, _row(case)))
    foot = _foot(report, full_report_url, max_bytes=max_bytes)
    return _fit(head, entries, foot, max_bytes=max_bytes)


def _verdict(report: Report) -> str:
    summary = report.summary
    icon = "✅" if summary.gate == "pass" else "❌"
    interval = (
        f" (95% interval {summary.score_ci[0]:.2f}–{summary.score_ci[1]:.2f})"
        if summary.score_ci
        else ""
    )
    gate = f"gate **{summary.gate}**"
    if summary.gate_reason:
        gate += f": {escape_markdown(summary.gate_reason)}"
    counts = (
        f"{count_of(summary.total, 'case')}: {summary.passed} passed, {summary.failed} "
        f"failed, {count_of(summary.errors, 'error')}, {summary.skipped} skipped"
    ) + _facts(report)
    incomplete = incomplete_reason(report.cases)
    partial = f" ({escape_markdown(incomplete)})" if incomplete is not None else ""
    isolation = report.run.isolation
    warning = (
        f"> [!WARNING]\n> {escape_markdown(isolation.warning)}\n\n"
        if isolation is not None and isolation.warning
        else ""
    )
    warning += "".join(
        f"> [!WARNING]\n> {escape_markdown(text)}\n\n" for text in report.run.warnings
    )
    why = gate_failed_without_failures(report)
    explained = f"\n{escape_markdown(why)}\n" if why else ""
    return (
        f"## {icon} Evaluation Results{partial}\n\n{warning}"
        f"**Score {_fmt_score(summary.score)}**{interval} · threshold "
        f"{report.run.threshold:.2f} · {gate}\n\n{counts}\n{explained}"
    )


def _comparison_head(comparison: Comparison, title: str) -> str:
    base, head = comparison.base.summary, comparison.head.summary
    delta = comparison.delta.score
    change = "–" if delta is None else f"{delta:+.2f}"
    significance = comparison.significance
    newly_failing = len(comparison.of("newly_failing", "now_error"))
    newly_passing = len(comparison.of("newly_passing"))
    return (
        f"### {escape_markdown(title)}\n\n"
        f"Score {_fmt_score(base.score)} → {_fmt_score(head.score)} ({change}) · "
        f"{newly_failing} newly failing · {newly_passing} newly passing · "
        f"**{significance.verdict}** ({escape_markdown(explain(significance))})\n"
    )


def _moved(change: CaseChange) -> str:
    before = _STATUS_ICON.get(change.base_status or "", "∅")
    after = _STATUS_ICON.get(change.head_status or "", "∅")
    return f"{before} → {after}"


def _passing_line(change: CaseChange) -> str:
    label = _code(change.id) + (f" \\[{escape_markdown(change.model)}\\]" if change.model else "")
    return f"- {label}: {_moved(change)}"


def _short_reason(case: CaseResult) -> str:

    lines = reason_with_source(case).strip().splitlines()
    reason = lines[0] if lines else case.status
    if len(reason) > _SUMMARY_REASON_CHARS:
        reason = reason[:_SUMMARY_REASON_CHARS] + "…"
    return reason


def _row(case: CaseResult, *, note: str = "") -> str:
    """One failing case: a collapsed row whose summary line says why."""
    label = f"<code>{_html(case.id)}</code>" + (f" [{_html(case.model)}]" if case.model else "")
    moved = f" {note}" if note else ""
    summary = f"{_STATUS_ICON[case.status]} {label}{moved} — {_html(_short_reason(case))}"
    body = [
        "<details>",
        f"<summary>{summary}</summary>",
        "",
        f"{_code(case.source.path)} line {case.source.line}",
        "",
        *problem_details(case),
        "",
        "</details>",
    ]
    return "\n".join(body)


def _foot(report: Report, full_report_url: str | None, *, max_bytes: int) -> str:
    summary, run = report.summary, report.run
    details = [f"{summary.duration_s:.1f}s"]
    if summary.tokens.input or summary.tokens.output or summary.cost_usd is not None:
        cost = "unknown" if summary.cost_usd is None else f"${summary.cost_usd:.4f}"
        details.append(
            f"tokens {summary.tokens.input:,} in / {summary.tokens.output:,} out · cost {cost}"
        )
    if run.models:
        details.append("models " + ", ".join(_code(m) for m in run.models))
    details.append(f"assay {escape_markdown(run.assay_version)} · run {_code(run.id)}")
    lines = [
        "",
        "<details>",
        "<summary>Results by suite</summary>",
        "",
        suite_table(report.cases, max_bytes=suite_table_budget(max_bytes)),
        "",
        "</details>",
        "",
        "---",
        "",
        " · ".join(details),
    ]
    if full_report_url:
        lines += ["", f"<sub>[Full report: workflow run and job summary]({full_report_url})</sub>"]
    return "\n".join(lines) + "\n"
