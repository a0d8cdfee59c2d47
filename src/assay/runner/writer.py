"""The report directory: checked before the run, filled after it.

`report.json` is the contract; summary.md, junit.xml and (for task suites, on request)
agent-eval-report.json are renderings of it. Every file is written to a temporary name and
renamed, so a reader never sees half a report.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.files import CASSANDRA_FILE, JUNIT_FILE, PVYAI_FILE, REPORT_FILE, SUMMARY_FILE
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.report.model import Report
    from assay.suites.case import Case

__all__ = [
    "JUNIT_FILE",
    "PVYAI_FILE",
    "REPORT_FILE",
    "SUMMARY_FILE",
    "prepare_report_dir",
    "write_report_dir",
]

"""PVYai's own name for its benchmark report (`--report-dir` of `pvyai eval bench`)."""


def prepare_report_dir(path: Path) -> Path:
    """Create `path` and prove it is writable now, not after an hour of evals."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".assay-probe-"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(f"cannot write the report directory {path}: {reason}") from None
    return path.resolve()


def write_report_dir(
    report: Report,
    path: Path,
    *,
    cases: Sequence[Case],
    pvyai: bool = False,
    cassandra: bool = False,
) -> list[Path]:
    """Write report.json, summary.md, junit.xml (and agent-eval-report.json,
    cassandra-results.json); return the paths."""
    from assay.report.junit import render_junit
    from assay.report.markdown import render_summary

    written = [
        _write(path / REPORT_FILE, report.model_dump_json(indent=2) + "\n"),
        _write(path / SUMMARY_FILE, render_summary(report)),
        _write(path / JUNIT_FILE, render_junit(report)),
    ]
    if pvyai:
        documents = pvyai_reports(report, cases, report_dir=path)
        if documents:
            body: Any = documents[0] if len(documents) == 1 else documents
            written.append(_write(path / PVYAI_FILE, json.dumps(body, indent=2) + "\n"))
    if cassandra and any(c.kind == "rubric" for c in report.cases):
        from assay.report.cassandra import to_cassandra_results

        names = {c.id: c.name for c in cases if c.kind == "rubric"}
        results = to_cassandra_results(report, names)
        written.append(_write(path / CASSANDRA_FILE, json.dumps(results, indent=2)))
    return written


def pvyai_reports(
    report: Report, cases: Sequence[Case], *, report_dir: Path | None = None
) -> list[dict[str, Any]]:
    """One PVYai benchmark report per task suite that has results, in the order run."""
    from assay.report.pvyai import benchmark_report

    suites = dict.fromkeys(c.suite for c in report.cases if c.kind == "task")
    return [
        benchmark_report(report, cases, suite_id=suite, report_dir=report_dir) for suite in suites
    ]


def _write(target: Path, text: str) -> Path:
    from assay._util.secrets import redact

    text = redact(text)  # the report was redacted already; renderings may add text of their own
    # A plain open (not mkstemp) so the file gets the user's umask, like any report.
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target
