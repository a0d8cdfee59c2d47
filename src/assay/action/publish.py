"""Publish a finished report: job summary, annotations, outputs, PR comment, check run.

Each destination is independent: the job summary and annotations need no token, and a
comment or check run GitHub refuses (missing permission, fork, network) becomes a
`::warning::` while the rest is still published.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.action import commands
from assay.action.annotations import annotate_failures, case_annotations
from assay.action.check_run import publish_check_run
from assay.action.comment import comment_body, comment_marker, upsert_comment
from assay.action.environment import RunnerEnvironment
from assay.action.event import PullRequestRef
from assay.action.github_api import describe_error, github_errors, is_permission_error
from assay.action.inputs import ActionInputs
from assay.action.outputs import append_step_summary, write_outputs
from assay.report.model import Report

if TYPE_CHECKING:
    from github import Github

__all__ = ["PublishTarget", "publish_report", "report_outputs"]


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
        "report-path": str(report_path),
    }


def _summary_markdown(report: Report, report_dir: Path) -> str:
    written = report_dir / "summary.md"
    try:
        return written.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        from assay.report.markdown import render_summary

        return render_summary(report)


def publish_report(report: Report, *, report_dir: Path, target: PublishTarget) -> None:
    env, inputs = target.env, target.inputs
    append_step_summary(env.step_summary, _summary_markdown(report, report_dir))
    annotations = case_annotations(report, workspace=env.workspace)
    annotate_failures(annotations, limit=inputs.max_annotations)
    write_outputs(env.output, report_outputs(report, report_dir.resolve() / "report.json"))

    pull = target.pull_request
    if inputs.comment and pull is not None:
        _publish_comment(report, target, pull)
    if inputs.check_run:
        head_sha = pull.head_sha if pull is not None else env.sha
        _publish_check(report, target, annotations=annotations, head_sha=head_sha)


def _refused(what: str, exc: BaseException, permission_hint: str) -> None:
    hint = f"; {permission_hint}" if is_permission_error(exc) else ""
    commands.warning(
        f"could not {what} ({describe_error(exc)}){hint}; the job summary has the results"
    )


def _publish_comment(report: Report, target: PublishTarget, pull: PullRequestRef) -> None:
    if target.client is None:
        commands.warning("no github-token: skipping the PR comment")
        return
    marker = comment_marker(workflow=target.env.workflow, job=target.env.job)
    body = comment_body(report, marker=marker, run_url=target.env.run_url)
    try:
        outcome = upsert_comment(
            target.client,
            repository=target.env.repository,
            number=pull.number,
            marker=marker,
            body=body,
        )
    except github_errors() as exc:
        _refused(
            f"comment on PR #{pull.number}",
            exc,
            "the job needs `permissions: pull-requests: write` (fork PRs never get it)",
        )
        return
    commands.log(f"assay: {outcome.action} the results comment: {outcome.url}")


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
    except github_errors() as exc:
        _refused("create the check run", exc, "the job needs `permissions: checks: write`")
        return
    commands.log(f"assay: published the {report.summary.gate} check run: {url}")
