"""What to say of a report directory that holds results but no report.

A run removes the earlier run's reports as it starts (`runner/writer.py:
remove_earlier_reports`), so a directory with a results.jsonl and no report.json is a
run that did not finish: the reader is told so, and how to finish it.
"""

from __future__ import annotations

from pathlib import Path

from assay.core.files import REPORT_FILE, RESULTS_FILE

__all__ = ["unfinished_run_note"]


def unfinished_run_note(directory: Path) -> str:
    """`; it holds ...` when `directory` is a run that stopped before its report, else ''."""
    if (directory / RESULTS_FILE).is_file() and not (directory / REPORT_FILE).exists():
        return (
            f"; it holds the {RESULTS_FILE} of a run that stopped before writing its report: "
            f"finish it with `assay run --resume {directory}`"
        )
    return ""
