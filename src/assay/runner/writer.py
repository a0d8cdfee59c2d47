"""The report directory: checked before the run, filled after it.

`report.json` is the contract; summary.md, junit.xml and (for task suites, on request)
pvyai-report.json are renderings of it. Every file is written to a temporary name and
renamed, so a reader never sees half a report.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

REPORT_FILE = "report.json"
SUMMARY_FILE = "summary.md"
JUNIT_FILE = "junit.xml"
PVYAI_FILE = "pvyai-report.json"


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
    report: Report, path: Path, *, cases: Sequence[Case], pvyai: bool = False
) -> list[Path]:
    """Write report.json, summary.md, junit.xml (and pvyai-report.json); return the paths."""
    from assay.report.junit import render_junit
    from assay.report.markdown import render_summary

    written = [
        _write(path / REPORT_FILE, report.model_dump_json(indent=2) + "\n"),
        _write(path / SUMMARY_FILE, render_summary(report)),
        _write(path / JUNIT_FILE, render_junit(report)),
    ]
    if pvyai:
        documents = pvyai_reports(report, cases)
        if documents:
            body: Any = documents[0] if len(documents) == 1 else documents
            written.append(_write(path / PVYAI_FILE, json.dumps(body, indent=2) + "\n"))
    return written


def pvyai_reports(report: Report, cases: Sequence[Case]) -> list[dict[str, Any]]:
    """One `pvyai.agenteval.report.v1` document per task suite that has results."""
    from assay.report.pvyai import to_pvyai

    suites_with_results = {c.suite for c in report.cases if c.kind == "task"}
    names: dict[str, str] = {}
    for case in cases:
        if case.kind == "task" and case.suite in suites_with_results and case.suite not in names:
            names[case.suite] = _suite_name(case.source_path) or case.suite
    return [to_pvyai(report, suite_id=suite, suite_name=name) for suite, name in names.items()]


def _suite_name(suite_file: Path) -> str | None:
    """The human name a PVYai suite file gives itself (Case keeps only the id)."""
    try:
        data = json.loads(suite_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None


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
