"""Failed and errored cases as annotations on the suite file that defines them.

The same `CaseAnnotation` list feeds the workflow-command annotations (capped: GitHub
shows only a handful per step) and the check run (all of them, 50 per API call).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from assay.action import commands
from assay.report.explain import reason_with_source
from assay.report.model import CaseResult, Report

__all__ = ["CaseAnnotation", "annotate_failures", "case_annotations"]

_MESSAGE_LIMIT = 4000
"""Long reasons are cut: the job summary and report.json hold the full text."""


@dataclass(frozen=True)
class CaseAnnotation:
    case_id: str
    status: str
    file: str | None
    """The suite file relative to the workspace (POSIX); None when it lies outside."""
    line: int | None
    title: str
    message: str


def _workspace_relative(raw: str, workspace: Path) -> str | None:
    path = Path(raw)
    if not path.is_absolute():
        path = Path.cwd() / path
    try:
        relative = Path(os.path.realpath(path)).relative_to(os.path.realpath(workspace))
    except ValueError:
        return None
    return relative.as_posix()


def _message(case: CaseResult) -> str:

    text = reason_with_source(case).strip()
    if not text:
        failing = [c for c in case.checks if c.status in ("fail", "error")]
        text = "; ".join(f"{c.id}: {c.message}" if c.message else c.id for c in failing)
    text = text or ("the case failed" if case.status == "fail" else "the case could not run")
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"


def case_annotations(report: Report, *, workspace: Path) -> list[CaseAnnotation]:
    """One annotation per failed or errored case, in report order."""
    several_models = len({case.model for case in report.cases}) > 1
    annotations = []
    for case in report.cases:
        if case.status not in ("fail", "error"):
            continue
        title = case.id + (f" [{case.model}]" if several_models and case.model else "")
        if case.status == "error":
            title += " (error)"
        annotations.append(
            CaseAnnotation(
                case_id=case.id,
                status=case.status,
                file=_workspace_relative(case.source.path, workspace),
                line=case.source.line or None,
                title=title,
                message=_message(case),
            )
        )
    return annotations


def annotate_failures(annotations: list[CaseAnnotation], *, limit: int) -> None:
    """Print up to `limit` `::error` annotations, then one notice counting the rest."""
    for annotation in annotations[:limit]:
        commands.error(
            annotation.message,
            file=annotation.file,
            line=annotation.line if annotation.file else None,
            title=annotation.title,
        )
    hidden = len(annotations) - limit
    if hidden > 0:
        noun = "failure" if hidden == 1 else "failures"
        commands.notice(f"{hidden} more {noun} not annotated; see the job summary")
