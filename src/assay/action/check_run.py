"""The optional "Evaluation Results" check run: conclusion, summary and one annotation per failure.

The checks API takes at most 50 annotations per request, so the run is created with
the first 50 and each further 50 are added with an update call (GitHub appends them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assay._util.secrets import redact
from assay.action.annotations import CaseAnnotation
from assay.report.model import Report

if TYPE_CHECKING:
    from github import Github

__all__ = ["ANNOTATIONS_PER_CALL", "CHECK_NAME", "publish_check_run"]

CHECK_NAME = "Evaluation Results"
ANNOTATIONS_PER_CALL = 50
_SUMMARY_BUDGET_BYTES = 60_000
"""The checks API caps `output.summary` at 65,535 characters."""
_TITLE_LIMIT = 255


def check_title(report: Report) -> str:
    summary = report.summary
    score = "no score" if summary.score is None else f"score {summary.score:.2f}"
    verdict = "passed" if summary.gate == "pass" else "failed"
    return f"{score} (threshold {report.run.threshold:.2f}): gate {verdict}"


def _api_annotation(annotation: CaseAnnotation) -> dict[str, Any]:
    line = annotation.line or 1
    return {
        "path": annotation.file,
        "start_line": line,
        "end_line": line,
        "annotation_level": "failure",
        "title": redact(annotation.title)[:_TITLE_LIMIT],
        "message": redact(annotation.message),
    }


def _batches(items: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [
        list(items[i : i + ANNOTATIONS_PER_CALL])
        for i in range(0, len(items), ANNOTATIONS_PER_CALL)
    ]


def publish_check_run(
    client: Github,
    *,
    repository: str,
    head_sha: str,
    report: Report,
    annotations: Sequence[CaseAnnotation],
    details_url: str | None,
) -> str:
    """Create the completed check run; returns its URL. GitHub errors propagate."""
    from assay.report.markdown import render_summary  # lazy: start-up (not loaded with this module)

    # Every text GitHub is sent goes through `redact` (annotations in `_api_annotation`).
    summary = render_summary(report, max_bytes=_SUMMARY_BUDGET_BYTES, title=CHECK_NAME)
    output: dict[str, Any] = {
        "title": redact(check_title(report))[:_TITLE_LIMIT],
        "summary": redact(summary),
    }
    # The checks API needs a path for every annotation; a case outside the repo has none.
    batches = _batches([_api_annotation(a) for a in annotations if a.file])
    extra: dict[str, Any] = {"details_url": details_url} if details_url else {}
    check = client.get_repo(repository).create_check_run(
        name=CHECK_NAME,
        head_sha=head_sha,
        status="completed",
        conclusion="success" if report.summary.gate == "pass" else "failure",
        output={**output, "annotations": batches[0]} if batches else output,
        **extra,
    )
    for batch in batches[1:]:
        check.edit(output={**output, "annotations": batch})
    return check.html_url
