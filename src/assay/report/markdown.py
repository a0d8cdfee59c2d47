"""summary.md: the run as GitHub-flavoured Markdown (job summary and sticky PR comment).

Everything that came from outside assay (case names, reasons, model output, command
output) is untrusted: it is escaped for the context it lands in (HTML, inline Markdown,
table cells, code spans, fenced blocks), and @mentions and issue references (`#12`,
`owner/repo#12`, `GH-12`) are neutralised with a zero-width joiner, so a report never pings
anyone nor adds a "mentioned this" event to another issue or repository. The text is cut to
`max_bytes` by leaving out whole entries that no longer fit, with an explicit note; the
headline always stays, and the suite table, its names cut short, takes at most a share of
the budget.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from assay.core.counting import count_of
from assay.core.text import strip_control
from assay.report.explain import (
    FINDINGS_SHOWN,
    CheckExplanation,
    failing_checks,
    finding_marks,
    unexplained_reason,
)
from assay.report.gate.policy import case_interval_note, gate_facts_note
from assay.report.gate.stats import incomplete_reason
from assay.report.gate.why import gate_failed_without_failures
from assay.report.model import CaseResult, Report

__all__ = [
    "escape_markdown",
    "neutralise_mentions",
    "problem_details",
    "render_summary",
    "suite_table",
    "suite_table_budget",
    "verdict_head",
]

MAX_TEXT_CHARS = 2000
"""One reason or output tail longer than this is shortened: no single case may crowd
every other out of the size budget."""
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")
_REFERENCE = re.compile(r"(#|\bGH-)(?=\d)", re.IGNORECASE)
"""Where GitHub would read an issue or pull request number: `#12` (`owner/repo#12` and
`owner#12` included) and `GH-12`."""
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_BLOCK_START = re.compile(r"^(?:([#+=-])|(\d+)([.)]))")
"""What would turn a line into a heading, quote, list or setext underline."""
_BACKTICK_RUN = re.compile(r"`+")
_SUITE_NAME_CHARS = 100
"""A suite's name in the suite table is cut to this; report.json has it whole."""
_STATUS_ICON = {"pass": "✅", "fail": "❌", "error": "⚠️", "skipped": "⏭️"}


def neutralise_mentions(text: str) -> str:
    """`@name` -> `@\u200dname` and `#12` -> `#\u200d12`: still readable, never a
    notification nor a cross-reference."""
    return _REFERENCE.sub("\\1\u200d", _MENTION.sub("@\u200d", text))


def _clean(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    text = strip_control(text)
    if len(text) > limit:
        text = text[:limit] + " […]"
    return neutralise_mentions(text)


def escape_markdown(text: str) -> str:
    """Untrusted text as one line of inline Markdown (safe in table cells too)."""
    one_line = html.escape(" ".join(_clean(text).split()), quote=False)
    return _INLINE_SPECIAL.sub(r"\\\1", one_line)


def _paragraph(text: str) -> str:
    """Untrusted text as a line of its own: it must not start a heading, list or quote."""
    return _BLOCK_START.sub(_escape_block_start, escape_markdown(text))


def _escape_block_start(match: re.Match[str]) -> str:
    marker, number, delimiter = match.groups()
    return f"\\{marker}" if marker else f"{number}\\{delimiter}"


def _html(text: str) -> str:
    """Untrusted text inside an HTML element (where Markdown escapes would show)."""
    return html.escape(" ".join(_clean(text).split()))


def _code(text: str, *, in_table: bool = False, limit: int = MAX_TEXT_CHARS) -> str:
    """Untrusted text as an inline code span whatever backticks it holds."""
    body = " ".join(_clean(text, limit).split())
    fence = "`" * (max((len(run) for run in _BACKTICK_RUN.findall(body)), default=0) + 1)
    if body.startswith("`") or body.endswith("`"):
        body = f" {body} "
    span = f"{fence}{body}{fence}"
    # GFM splits table rows on pipes before it sees code spans.
    return span.replace("|", "\\|") if in_table else span


def _fenced(text: str) -> str:
    """Untrusted multi-line text as a fenced block no line of it can close."""
    body = _clean(text).rstrip("\n")
    longest = max((len(run) for run in _BACKTICK_RUN.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


def _fmt_score(score: float | None) -> str:
    return "–" if score is None else f"{score:.2f}"


def _label(case: CaseResult, *, in_html: bool) -> str:
    if in_html:
        label = f"<code>{_html(case.id)}</code>"
        return label + (f" [{_html(case.model)}]" if case.model else "")
    return _code(case.id) + (f" \\[{escape_markdown(case.model)}\\]" if case.model else "")


@dataclass(frozen=True)
class _Entry:
    """One droppable piece of the report, under a section heading."""

    section: str
    text: str


def render_summary(
    report: Report, *, max_bytes: int = 900_000, title: str = "Evaluation Results"
) -> str:
    """The report as Markdown of at most `max_bytes` UTF-8 bytes."""
    head = _head(report, title, max_bytes=max_bytes)
    foot = _foot(report)
    entries = [*_flaky(report.cases), *_problems(report.cases), *_skipped(report.cases)]
    return _fit(head, entries, foot, max_bytes=max_bytes)


def _head(report: Report, title: str, *, max_bytes: int) -> str:
    table = suite_table(report.cases, max_bytes=suite_table_budget(max_bytes))
    return verdict_head(report, title) + "\n" + table + "\n"


def verdict_head(report: Report, title: str = "Evaluation Results") -> str:
    """The headline, the score against the threshold with the gate, and the counts."""
    summary = report.summary
    icon = "✅" if summary.gate == "pass" else "❌"
    gate = f"gate **{summary.gate}**"
    if summary.gate_reason:
        gate += f": {escape_markdown(summary.gate_reason)}"
    counts = (
        f"{count_of(summary.total, 'case')}: {summary.passed} passed, {summary.failed} "
        f"failed, {count_of(summary.errors, 'error')}, {summary.skipped} skipped"
    )
    if summary.score_ci:
        counts += f" · 95% interval {summary.score_ci[0]:.2f}–{summary.score_ci[1]:.2f}"
    counts += _facts(report)
    headline = f"## {icon} {escape_markdown(title)}"
    incomplete = incomplete_reason(report.cases)
    if incomplete is not None:  # said first: a partial report must not read as a result
        headline += f" ({escape_markdown(incomplete)})"
    isolation = report.run.isolation
    warning = (
        [f"> [!WARNING]\n> {escape_markdown(isolation.warning)}", ""]
        if (isolation is not None and isolation.warning)
        else []
    )
    warning += [f"> [!WARNING]\n> {escape_markdown(text)}\n" for text in report.run.warnings]
    notes = [f"> [!NOTE]\n> {escape_markdown(note)}\n" for note in report.run.notes]
    lines = [
        headline,
        "",
        *warning,
        *notes,
        f"**Score {_fmt_score(summary.score)}** (threshold {report.run.threshold:.2f}) · {gate}",
        "",
        counts,
    ]
    why = gate_failed_without_failures(report)
    if why:
        lines += ["", escape_markdown(why)]
    return "\n".join(lines) + "\n"


def suite_table_budget(max_bytes: int) -> int:
    """The share of a document of `max_bytes` the suite table may take: the failures need
    the rest, and a run of a thousand suites must not push out its own verdict."""
    return max_bytes // 4


def suite_table(cases: Iterable[CaseResult], *, max_bytes: int) -> str:
    """The per-suite tally as a Markdown table of at most `max_bytes` UTF-8 bytes; the
    suites past that are counted in a line under it."""
    by_suite: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        by_suite[case.suite].append(case)
    text = (
        "| Suite | Cases | Passed | Failed | Errors | Skipped | Score |\n"
        "|---|---:|---:|---:|---:|---:|---:|"
    )
    budget = max_bytes - _size(_more_suites(len(by_suite)))
    used = _size(text)
    rows = sorted(by_suite.items())
    for shown, (suite, members) in enumerate(rows):
        row = "\n" + _suite_row(suite, members)
        if used + _size(row) > budget:
            return text + _more_suites(len(rows) - shown)
        text += row
        used += _size(row)
    return text


def _suite_row(suite: str, members: list[CaseResult]) -> str:
    tally = {status: sum(1 for c in members if c.status == status) for status in _STATUS_ICON}
    scores = [c.score for c in members if c.status in ("pass", "fail") and c.score is not None]
    score = sum(scores) / len(scores) if scores else None
    return (
        f"| {_code(suite, in_table=True, limit=_SUITE_NAME_CHARS)} | {len(members)} | "
        f"{tally['pass']} | {tally['fail']} | {tally['error']} | {tally['skipped']} | "
        f"{_fmt_score(score)} |"
    )


def _more_suites(count: int) -> str:
    # The blank line ends the table: a line right under it would be read as one more row.
    more = count_of(count, "more suite")
    return f"\n\n{more} {'is' if count == 1 else 'are'} not shown here; report.json has every one."


def _flaky(cases: Iterable[CaseResult]) -> list[_Entry]:
    entries = []
    for case in cases:
        if case.flaky:
            outcomes = " ".join(_STATUS_ICON[a.status] for a in case.attempts)
            entries.append(
                _Entry(
                    "### Flaky cases",
                    f"- {_label(case, in_html=False)}: {outcomes}{case_interval_note(case)}",
                )
            )
    return entries


def _problems(cases: Iterable[CaseResult]) -> list[_Entry]:
    failures: list[str] = []
    errors: list[str] = []
    for case in cases:
        if case.status in ("fail", "error"):
            target = failures if case.status == "fail" else errors
            target.append(_problem_block(case))
    return [_Entry("### Failures", text) for text in failures] + [
        _Entry("### Errors", text) for text in errors
    ]


def _problem_block(case: CaseResult, *, note: str = "") -> str:
    score = f" · score {_fmt_score(case.score)}" if case.score is not None else ""
    label = _label(case, in_html=True) + (f" {note}" if note else "")
    parts = [
        "<details>",
        f"<summary>{_STATUS_ICON[case.status]} {label}{score}</summary>",
        "",
        f"{_code(case.source.path)} line {case.source.line}",
        "",
    ]
    parts += problem_details(case)
    parts += ["", "</details>\n"]
    return "\n".join(parts)


def problem_details(case: CaseResult) -> list[str]:
    """Why a failed case failed, each fact once: its checks (expected, the agent's finding,
    the judge's reasoning), or its reason when no check says it, then the agent's findings."""
    parts: list[str] = []
    reason = unexplained_reason(case).strip()
    if reason:
        parts += [_fenced(reason) if "\n" in reason else _paragraph(reason), ""]
    for explanation in failing_checks(case):
        parts += _check_lines(explanation)
    marks = finding_marks(case) if case.kind == "review" else []
    if marks:
        shown = marks[:FINDINGS_SHOWN]
        parts += ["", "Agent's findings:", ""]
        parts += [f"- {mark.mark}: {escape_markdown(mark.label)}" for mark in shown]
        if len(marks) > len(shown):
            parts.append(f"- … and {len(marks) - len(shown)} more (report.json has them all)")
    return parts


def _check_lines(explanation: CheckExplanation) -> list[str]:
    check = explanation.check
    icon = _STATUS_ICON.get(check.status, "⛔")  # a task check can be `blocked`
    lines = [f"- {icon} {_code(check.id)} ({escape_markdown(check.kind)})"]
    if explanation.expected:
        lines.append(f"  - expected: {escape_markdown(explanation.expected)}")
    if explanation.finding:
        lines.append(f"  - agent's finding: {escape_markdown(explanation.finding)}")
    lines.append(f"  - {explanation.reason_label}: {escape_markdown(explanation.reason)}")
    if explanation.output_tail:
        lines += ["", _fenced(explanation.output_tail[-MAX_TEXT_CHARS:]), ""]
    return lines


def _skipped(cases: Iterable[CaseResult]) -> list[_Entry]:
    by_reason: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        if case.status == "skipped":
            by_reason[case.reason or "no reason given"].append(case.id)
    entries = []
    for reason, ids in sorted(by_reason.items(), key=lambda item: -len(item[1])):
        shown = ", ".join(_code(i) for i in ids[:3]) + (", …" if len(ids) > 3 else "")
        entries.append(
            _Entry(
                "### Skipped",
                f"- {escape_markdown(reason)}: {count_of(len(ids), 'case')} ({shown})",
            )
        )
    return entries


def _foot(report: Report) -> str:
    summary, run = report.summary, report.run
    parts = []
    if summary.tokens.input or summary.tokens.output or summary.cost_usd is not None:
        cost = "unknown" if summary.cost_usd is None else f"${summary.cost_usd:.4f}"
        tokens = f"{summary.tokens.input:,} in / {summary.tokens.output:,} out"
        parts.append(f"tokens {tokens} · cost {cost}")
    parts.append(f"{summary.duration_s:.1f}s")
    if run.models:
        parts.append("models " + ", ".join(_code(m) for m in run.models))
    parts.append(f"assay {escape_markdown(run.assay_version)} · run {_code(run.id)}")
    return "\n---\n\n" + " · ".join(parts) + "\n"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _truncation_note(omitted: int) -> str:
    return (
        f"\n> [!NOTE]\n> Truncated: {omitted} more entries omitted to stay under the size "
        "limit; report.json has every case.\n"
    )


def _fit(head: str, entries: list[_Entry], foot: str, *, max_bytes: int) -> str:
    """Head, then each entry, in order, that still fits, then the foot; a note counts the
    entries left out.

    The head (the verdict) has first call on the budget, then the foot; either is cut at a
    line only when it alone is too large. An entry too large for what is left is skipped,
    not the end: one case with a thousand findings must not hide every other failure.
    """
    reserve = _size(_truncation_note(len(entries)))
    head = _cut_at_line(head, max_bytes - reserve)
    foot = _cut_at_line(foot, max_bytes - reserve - _size(head))
    budget = max_bytes - reserve - _size(foot)
    parts = [head]
    used = _size(head)
    section = None
    kept = 0
    for entry in entries:
        text = entry.text + "\n"
        if entry.section != section:
            text = f"\n{entry.section}\n\n{text}"
        if used + _size(text) > budget:
            continue
        parts.append(text)
        used += _size(text)
        section = entry.section
        kept += 1
    omitted = len(entries) - kept
    if omitted:
        parts.append(_truncation_note(omitted))
    parts.append(foot)
    return "".join(parts)


def _cut_at_line(text: str, max_bytes: int) -> str:
    """`text`, or as many of its first lines as fit in `max_bytes` UTF-8 bytes."""
    if _size(text) <= max_bytes:
        return text
    cut = text.encode("utf-8")[: max(max_bytes, 0)].decode("utf-8", errors="ignore")
    return cut[: cut.rfind("\n") + 1]


def _facts(report: Report) -> str:
    """The gate's facts for the counts line, still set off by a space once escaped."""
    note = gate_facts_note(report)
    return " " + escape_markdown(note) if note else ""
