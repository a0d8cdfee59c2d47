"""Publish a finished report: job summary, annotations, outputs, PR comment, check run.

With a baseline (input `baseline-report`), the job summary and the PR comment lead with the
verdict and what changed compared with it, each failing case listed once, and output
`regressions` counts the newly failing cases. The score trend of the run history follows
the job summary.

Each destination is independent: the job summary and annotations need no token, and a
comment or check run GitHub refuses (missing permission, fork, network) becomes a
`::warning::` while the rest is still published. A job summary or outputs file the
runner's environment does not let us write becomes an `::error::` (the caller exits 2),
and the rest is still published too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.secrets import redact
from assay.action import commands
from assay.action.annotations import annotate_failures, case_annotations
from assay.action.check_run import publish_check_run
from assay.action.comment import comment_body, comment_marker, upsert_comment
from assay.action.environment import RunnerEnvironment
from assay.action.event import PullRequestRef
from assay.action.github_api import describe_error, is_permission_error
from assay.action.inputs import ActionInputs
from assay.action.outputs import (
    SUMMARY_LIMIT_BYTES,
    RunnerFileError,
    append_step_summary,
    report_and_continue,
    step_summary_size,
    write_outputs,
)
from assay.core.files import REPORT_FILE, SUMMARY_FILE
from assay.errors import ConfigError
from assay.report.model import Report
from assay.report.redacted import redacted_report

if TYPE_CHECKING:
    from github import Github

    from assay.action.baseline_report import BaselineReport
    from assay.report.compare import Comparison

__all__ = ["PublishTarget", "publish_report", "report_outputs"]

_SUMMARY_MARGIN_BYTES = 4 * 1024
_TREND_BYTES = 8 * 1024
"""Kept for the score trend after the summary (20 runs take about 1 KiB)."""


@dataclass(frozen=True)
class PublishTarget:
    env: RunnerEnvironment
    inputs: ActionInputs
    pull_request: PullRequestRef | None
    client: Github | None
    """None without a github-token: comment and check run are then skipped with a warning."""


def report_outputs(report: Report, report_path: Path) -> dict[str, str]:
    summary = report.summary
    return {
        "score": "" if summary.score is None else f"{summary.score:.4f}",
        "passed": str(summary.passed),
        "total": str(summary.total),
        "failed": str(summary.failed),
        "errors": str(summary.errors),
        "verdict": summary.verdict or summary.gate,
        "report-path": str(report_path),
    }


def _summary_markdown(report: Report, report_dir: Path) -> str:
    written = report_dir / SUMMARY_FILE
    try:
        return written.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        # lazy: start-up (not loaded with this module)
        from assay.report.markdown import render_summary

        return render_summary(report)


@dataclass(frozen=True)
class _Compared:
    comparison: Comparison
    title: str


def publish_report(
    report: Report,
    *,
    report_dir: Path,
    target: PublishTarget,
    baseline: BaselineReport | None = None,
) -> list[RunnerFileError]:
    """Publish everywhere; returns the runner files that could not be written (each
    already reported as an error annotation)."""
    env, inputs = target.env, target.inputs
    # Rendering escapes text (`_` becomes `\\_` in Markdown), after which a secret is no
    # longer itself: the report is redacted before it is rendered, and each destination
    # masks what it is sent again (renderings add text of their own).
    report = redacted_report(report)
    compared = _compare(baseline, report) if baseline is not None else None
    broken: list[RunnerFileError] = []
    with report_and_continue(broken):
        _write_step_summary(report, report_dir, env.step_summary, compared)
    annotations = case_annotations(report, workspace=env.workspace)
    annotate_failures(annotations, limit=inputs.max_annotations)
    outputs = report_outputs(report, report_dir.resolve() / REPORT_FILE)
    if compared is not None:
        outputs["regressions"] = str(len(compared.comparison.of("newly_failing")))
    with report_and_continue(broken):
        write_outputs(env.output, outputs)

    pull = target.pull_request
    if inputs.comment and pull is not None:
        _publish_comment(report, target, pull, compared)
    if inputs.check_run:
        head_sha = pull.head_sha if pull is not None else env.sha
        _publish_check(report, target, annotations=annotations, head_sha=head_sha)
    return broken


def _write_step_summary(
    report: Report, report_dir: Path, path: Path | None, compared: _Compared | None
) -> None:
    if compared is None:
        text = _summary_markdown(report, report_dir)
    else:
        # What changed leads, as in the PR comment; summary.md's own comparison is titled
        # against a file, this one against the branch.
        # lazy: start-up (not loaded with this module)
        from assay.report.summary_compared import render_compared_summary

        room = SUMMARY_LIMIT_BYTES - step_summary_size(path) if path is not None else 0
        text = render_compared_summary(
            report,
            compared.comparison,
            max_bytes=max(room - _SUMMARY_MARGIN_BYTES - _TREND_BYTES, _SUMMARY_MARGIN_BYTES),
            comparison_title=compared.title,
        )
    append_step_summary(path, text)  # redacted there: the baseline's text may not be
    _append_trend(path, report_dir)


def _append_trend(path: Path | None, report_dir: Path) -> None:
    """The score trend of the run history this run was recorded in, when it has one."""
    # lazy: start-up (not loaded with this module)
    from assay.report.history import history_dir_for, read_history, trend_mermaid

    try:
        trend = trend_mermaid(read_history(history_dir_for(report_dir)))
    except ConfigError as exc:  # a broken index costs the trend, not the summary
        commands.warning(f"no score trend: {exc}")
        return
    if trend is not None:
        append_step_summary(path, trend)


def _compare(baseline: BaselineReport, report: Report) -> _Compared:
    from assay.report.compare import compare_reports  # lazy: start-up (not loaded with this module)

    comparison = compare_reports(baseline.report, report)
    counts = comparison.counts
    commands.log(
        f"assay: compared with {baseline.label}: {counts.get('newly_failing', 0)} newly failing, "
        f"{counts.get('newly_passing', 0)} newly passing ({comparison.significance.verdict})"
    )
    return _Compared(comparison, f"Compared with {baseline.label}")


def _refused(what: str, exc: BaseException, permission_hint: str) -> None:
    hint = f"; {permission_hint}" if is_permission_error(exc) else ""
    commands.warning(
        f"could not {what} ({describe_error(exc)}){hint}; the job summary has the results"
    )


def _publish_comment(
    report: Report, target: PublishTarget, pull: PullRequestRef, compared: _Compared | None
) -> None:
    if target.client is None:
        commands.warning("no github-token: skipping the PR comment")
        return
    marker = comment_marker(workflow=target.env.workflow, job=target.env.job)
    run_url = target.env.run_url
    if compared is None:
        body = comment_body(report, marker=marker, run_url=run_url)
    else:
        body = comment_body(
            report,
            marker=marker,
            run_url=run_url,
            comparison=compared.comparison,
            comparison_title=compared.title,
        )
    try:
        outcome = upsert_comment(
            target.client,
            repository=target.env.repository,
            number=pull.number,
            marker=marker,
            body=redact(body),  # the report is redacted; the comparison's baseline may not be
        )
    except Exception as exc:  # best effort: GitHub's errors and any odd answer alike
        _refused(
            f"comment on PR #{pull.number}",
            exc,
            "the job needs `permissions: pull-requests: write` (fork PRs never get it)",
        )
        return
    commands.log(f"assay: {outcome.action} the results comment: {outcome.url}")
    if outcome.unchecked is not None:
        commands.warning(
            f"created the results comment ({outcome.url}) but could not check the PR for a "
            f"second copy from a concurrent run of this job: asking GitHub whom the token "
            f"acts as failed ({describe_error(outcome.unchecked)}); if two copies show, "
            "delete the newer"
        )


def _publish_check(
    report: Report, target: PublishTarget, *, annotations: list, head_sha: str
) -> None:
    if target.client is None:
        commands.warning("no github-token: skipping the check run")
        return
    if not head_sha:
        commands.warning("no commit to attach the check run to (GITHUB_SHA is unset)")
        return
    try:
        url = publish_check_run(
            target.client,
            repository=target.env.repository,
            head_sha=head_sha,
            report=report,
            annotations=annotations,
            details_url=target.env.run_url,
        )
    except Exception as exc:  # best effort: GitHub's errors and any odd answer alike
        _refused("create the check run", exc, "the job needs `permissions: checks: write`")
        return
    commands.log(f"assay: published the {report.summary.gate} check run: {url}")
