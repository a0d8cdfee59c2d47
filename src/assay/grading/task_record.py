"""What a task attempt keeps for PVYai's benchmark report, beside its transcripts.

report.json has no place for PVYai's `agent` and `workspacePath` fields, so each task
attempt writes `agent-result.json` in its artifacts directory, and `report/pvyai.py`
reads it back:

- as soon as the sandbox exists, the workspace it ran in (PVYai sets `workspacePath` when
  setup succeeds, before the agent runs: an agent that timed out or could not start
  still ran somewhere);
- when it could not be built, why, in PVYai's words where assay knows them
  (`WorkspaceSetupError.harness_error`): the `error` of PVYai's errorReport;
- once the agent finished, its exit code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util import json_text
from assay._util.secrets import redact_json
from assay.errors import SandboxError

if TYPE_CHECKING:
    from assay.workspace import Sandbox

__all__ = [
    "AGENT_RESULT_FILE",
    "TaskRecord",
    "read_task_record",
    "record_agent_exit",
    "record_setup",
]

AGENT_RESULT_FILE = "agent-result.json"


@dataclass(frozen=True)
class TaskRecord:
    """What `agent-result.json` says; every field empty when the attempt wrote none."""

    exit_code: int | None = None
    workspace_path: str = ""
    setup_error: str = ""
    """Why the workspace could not be set up (none when it was)."""


def record_setup(artifacts: Path, outcome: Sandbox | SandboxError) -> None:
    """Record a task attempt's sandbox as soon as it exists, or why it could not be built."""
    if isinstance(outcome, SandboxError):
        _write(artifacts, {"setupError": getattr(outcome, "harness_error", "") or str(outcome)})
    else:
        _write(artifacts, {"workspacePath": str(outcome.path)})


def record_agent_exit(artifacts: Path, exit_code: int | None, *, workspace: Path) -> None:
    """Add the agent's exit code to what the attempt recorded (and the workspace it ran in)."""
    record = _read(artifacts / AGENT_RESULT_FILE)
    _write(artifacts, {**record, "workspacePath": str(workspace), "exitCode": exit_code})


def read_task_record(artifacts: Path) -> TaskRecord:
    record = _read(artifacts / AGENT_RESULT_FILE)
    exit_code = record.get("exitCode")
    workspace = record.get("workspacePath")
    error = record.get("setupError")
    return TaskRecord(
        exit_code=exit_code if isinstance(exit_code, int) else None,
        workspace_path=workspace if isinstance(workspace, str) else "",
        setup_error=error if isinstance(error, str) else "",
    )


def _write(artifacts: Path, record: Mapping[str, Any]) -> None:
    artifacts.mkdir(parents=True, exist_ok=True)
    text = redact_json(json.dumps(record))  # a report-dir file: its setup error may quote a key
    (artifacts / AGENT_RESULT_FILE).write_text(text, encoding="utf-8")


def _read(path: Path) -> dict[str, Any]:
    try:
        value = json_text.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
