"""The names of the files a run writes into its report directory: one spelling each."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Final

__all__ = [
    "ATTEMPT_ANSWER_FILE",
    "AGENT_TRANSCRIPT_FILE",
    "ATTEMPT_DIFF_FILE",
    "ATTEMPT_PROMPT_FILE",
    "CASES_DIR",
    "CASSANDRA_FILE",
    "HTML_FILE",
    "INSPECT_LOG_FILE",
    "JUNIT_FILE",
    "LOCK_FILE",
    "MODEL_CALLS_FILE",
    "PVYAI_FILE",
    "REPORT_FILE",
    "RESULTS_FILE",
    "SUMMARY_FILE",
    "artifacts_dir",
    "safe_segment",
]

REPORT_FILE: Final = "report.json"
"""The whole report (`assay.report.v1`)."""
RESULTS_FILE: Final = "results.jsonl"
"""One line per finished case, flushed as it finishes (what `--resume` reads)."""
SUMMARY_FILE: Final = "summary.md"
JUNIT_FILE: Final = "junit.xml"
PVYAI_FILE: Final = "agent-eval-report.json"
"""PVYai's own report (`--pvyai-report`)."""
CASSANDRA_FILE: Final = "cassandra-results.json"
"""Cassandra's results JSON (`--cassandra-report`)."""
INSPECT_LOG_FILE: Final = "inspect-log.json"
"""The run as an inspect eval log (`--inspect-log`, report/inspect_log.py)."""
HTML_FILE: Final = "report.html"
"""The single-file viewer of the report (report/html.py)."""
ATTEMPT_DIFF_FILE: Final = "diff.patch"
"""In an attempt's artifacts: the diff the agent reviewed, for the viewer."""
ATTEMPT_ANSWER_FILE: Final = "answer.json"
"""In an attempt's artifacts: the agent's answer as the grader read it (`assay regrade`)."""
AGENT_TRANSCRIPT_FILE: Final = "agent-transcript.json"
"""In an attempt's artifacts: what a command agent or preset CLI did (its tool calls,
messages, turns, usage, final message), in the builtin agent's transcript format."""
ATTEMPT_PROMPT_FILE: Final = "prompt.txt"
"""In an attempt's artifacts: what a command agent or an agent CLI preset was asked (the
builtin agent's transcript holds its own), for the inspect log's sample input."""
MODEL_CALLS_FILE: Final = "model-calls.jsonl"
"""In an attempt's artifacts: an agent CLI's model calls through the bridge (assay.bridge)."""
CASES_DIR: Final = "cases"
"""Each case's artifacts (diffs, transcripts), under `artifacts_dir`."""
LOCK_FILE: Final = ".assay.lock"
"""Held (flock) for the whole run, so a second run of the same directory stops at once."""

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")
_NAME_MAX: Final = 255
"""The longest file name, in bytes, that Linux and macOS file systems allow."""
_HASH_CHARS: Final = 8


def safe_segment(text: str) -> str:
    """A directory name for `text`: unchanged when already safe, else cleaned plus a hash
    of the original (so two ids that clean to the same name still get their own dirs).

    A name too long for a file system is cut and hashed the same way: a case named with a
    whole sentence must not stop the run when its artifacts are written.
    """
    cleaned = _UNSAFE.sub("_", text).strip("._") or "_"
    if cleaned == text and len(text) <= _NAME_MAX:
        return text
    digest = hashlib.sha1(text.encode()).hexdigest()[:_HASH_CHARS]
    return f"{cleaned[: _NAME_MAX - _HASH_CHARS - 1]}-{digest}"


def artifacts_dir(report_dir: Path, case_id: str, model: str | None, index: int) -> Path:
    """`<report-dir>/cases/<case id>[/<model>]/attempt-<n>/` (n counts from 1)."""
    path = report_dir / CASES_DIR
    for part in case_id.split("/"):
        path /= safe_segment(part)
    if model is not None:
        path /= safe_segment(model)
    return path / f"attempt-{index + 1}"
