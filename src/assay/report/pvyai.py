"""Task results in PVYai's `pvyai.agenteval.report.v1` contract, laid out as PVYai lays them.

Two documents, as PVYai's agenteval package builds them:
- the per-task report (`task_report`; what `assay score --json` prints, as PVYai's
  `Runner.Run` returns it): `contract, suiteId, taskId, status, ok, summary{total,
  passed, failed, blocked, errors}, changedFiles, results[]`, each result with PVYai's
  check ids (`<command id>`, `changed_files`, `forbidden_changed_files`,
  `context_checks`, `trace_events`), kinds and fields, empty fields left out as Go's
  `omitempty` leaves them out;
- the benchmark report (`benchmark_report`, `--pvyai-report`'s `agent-eval-report.json`):
  `contract, suiteId, ok, summary{totalTasks, passedTasks, failedTasks, blockedTasks,
  errorTasks}, tasks[]{taskId, model, workspacePath, fixturePath, agent{exitCode,
  stdout, stderr, error, truncated}, report}` (PVYai's CLI nests this under its own
  summary's `benchmark` key; docs/pvyai.md).
A task's status is PVYai's (`blocked` > `error` > `fail` > `pass` over its checks). A case
that errored with no checks is PVYai's errorReport (`harness_error_report`: one `error`
result, `benchmark`, and no changed files): its sandbox could not be built, PVYai's failed
materialisation, whose error the attempt recorded (`grading/task_record.py`). A skipped
case has every check `blocked` with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.core.files import PVYAI_FILE, artifacts_dir
from assay.grading.task_record import TaskRecord, read_task_record
from assay.grading.task_results import blocked_checks, go_exit_code, pvyai_status
from assay.report.model import CaseResult, Check, Report
from assay.subject import read_agent_stream
from assay.suites.case import Case, TaskSpec

__all__ = [
    "PVYAI_CONTRACT",
    "PVYAI_REPORT_FILE",
    "benchmark_report",
    "harness_error_report",
    "task_report",
]

PVYAI_CONTRACT = "pvyai.agenteval.report.v1"
PVYAI_REPORT_FILE = PVYAI_FILE

_RESULT_FIELDS = (
    "command",
    "exitCode",
    "stdout",
    "stderr",
    "message",
    "expectedFiles",
    "actualFiles",
    "missingFiles",
    "unexpectedFiles",
    "expectedEvents",
    "actualEvents",
    "missingEvents",
)
"""The optional fields of a PVYai result, in its order; each is left out when empty."""


def task_report(suite_id: str, task_id: str, checks: Sequence[Check]) -> dict[str, Any]:
    """PVYai's report of one task from its checks."""
    results = [_result(check) for check in checks]
    statuses = [check.status for check in checks]
    summary = {
        "total": len(results),
        "passed": statuses.count("pass"),
        "failed": statuses.count("fail"),
        "blocked": statuses.count("blocked"),
        "errors": statuses.count("error"),
    }
    status = pvyai_status(checks)
    changed = next(
        (c for c in checks if c.id == "changed_files" and c.kind == "changed_files"), None
    )
    actual = (changed.model_extra or {}).get("actualFiles", []) if changed else []
    return {
        "contract": PVYAI_CONTRACT,
        "suiteId": suite_id,
        "taskId": task_id,
        "status": status,
        "ok": status == "pass",
        "summary": summary,
        "changedFiles": list(actual) if changed and changed.status != "blocked" else [],
        "results": results,
    }


def harness_error_report(suite_id: str, task_id: str, message: str) -> dict[str, Any]:
    """PVYai's errorReport (`benchmark.go`): the task could not be run at all, its one
    result the harness's `error`, and no changed files (Go's nil list)."""
    return {
        "contract": PVYAI_CONTRACT,
        "suiteId": suite_id,
        "taskId": task_id,
        "status": "error",
        "ok": False,
        "summary": {"total": 1, "passed": 0, "failed": 0, "blocked": 0, "errors": 1},
        "changedFiles": None,
        "results": [
            {
                "id": "benchmark",
                "name": "Benchmark harness",
                "kind": "changed_files",
                "status": "error",
                "message": message,
            }
        ],
        "error": message,
    }


def benchmark_report(
    report: Report, cases: Sequence[Case], *, suite_id: str, report_dir: Path | None = None
) -> dict[str, Any]:
    """The task cases of suite `suite_id` as PVYai's benchmark report.

    `cases` are the loaded cases (for the fixtures and, for a skipped task, its checks);
    `report_dir` is where each attempt's agent output was kept.
    """
    specs = {case.id: case for case in cases if case.kind == "task"}
    results = [c for c in report.cases if c.kind == "task" and c.suite == suite_id]
    tasks = [_task(result, specs.get(result.id), suite_id, report_dir) for result in results]
    statuses = [task["report"]["status"] for task in tasks]
    return {
        "contract": PVYAI_CONTRACT,
        "suiteId": suite_id,
        "ok": all(status == "pass" for status in statuses),
        "summary": {
            "totalTasks": len(tasks),
            "passedTasks": statuses.count("pass"),
            "failedTasks": statuses.count("fail"),
            "blockedTasks": statuses.count("blocked"),
            "errorTasks": statuses.count("error"),
        },
        "tasks": tasks,
    }


def _task(
    result: CaseResult, case: Case | None, suite_id: str, report_dir: Path | None
) -> dict[str, Any]:
    task_id = _task_id(result.id, suite_id)
    checks = list(result.checks)
    spec = case.spec if case is not None and isinstance(case.spec, TaskSpec) else None
    if not checks and spec is not None and result.status == "skipped":
        checks = blocked_checks(spec, result.reason)
    record, agent = _agent(result, report_dir)
    entry: dict[str, Any] = {"taskId": task_id}
    if result.model:
        entry["model"] = result.model
    if not checks and result.status == "error":
        return {**entry, **_harness_error(result, record, agent, suite_id, task_id, spec)}
    entry["workspacePath"] = result.workspace or record.workspace_path
    entry["fixturePath"] = str(spec.workspace) if spec is not None else ""
    entry["agent"] = agent
    entry["report"] = task_report(suite_id, task_id, checks)
    return entry


def _harness_error(
    result: CaseResult,
    record: TaskRecord,
    agent: dict[str, Any],
    suite_id: str,
    task_id: str,
    spec: TaskSpec | None,
) -> dict[str, Any]:
    """A task that errored with no checks, as PVYai's errorReport. Its sandbox could not be
    built (PVYai: `workspace materialization failed`: no workspace, no fixture path, the
    agent never ran), unless the attempt recorded a workspace: then something else broke
    after the setup (an internal error), which PVYai has no word for."""
    reason = result.reason or "the task could not run"
    if record.setup_error or not record.workspace_path:
        error = record.setup_error or reason
        return {
            "workspacePath": "",
            "fixturePath": "",
            "agent": {"exitCode": -1, "error": error},
            "report": harness_error_report(
                suite_id, task_id, f"workspace materialization failed: {error}"
            ),
        }
    return {
        "workspacePath": result.workspace or record.workspace_path,
        "fixturePath": str(spec.workspace) if spec is not None else "",
        "agent": _with_error(agent, agent.get("error") or reason),
        "report": harness_error_report(suite_id, task_id, reason),
    }


def _agent(result: CaseResult, report_dir: Path | None) -> tuple[TaskRecord, dict[str, Any]]:
    """What the shown attempt recorded, and PVYai's `agent` object from it."""
    shown = _shown_attempt(result)
    record = TaskRecord()
    streams = {"stdout": "", "stderr": ""}
    truncated = False
    if report_dir is not None and shown is not None:
        directory = artifacts_dir(report_dir, result.id, result.model, shown)
        record = read_task_record(directory)
        for stream in streams:
            streams[stream], cut = _read_capped(directory / f"agent.{stream}")
            truncated = truncated or cut
    agent: dict[str, Any] = {"exitCode": go_exit_code(record.exit_code)}
    agent.update({name: text for name, text in streams.items() if text})
    if record.exit_code is None and result.status in ("error", "skipped") and result.reason:
        agent["error"] = result.reason
    if truncated:
        agent["truncated"] = True
    return record, agent


def _with_error(agent: dict[str, Any], error: str) -> dict[str, Any]:
    """`agent` with its `error`, in PVYai's field order (`truncated` last)."""
    fields = {key: value for key, value in agent.items() if key != "truncated"}
    fields["error"] = error
    return fields | ({"truncated": True} if agent.get("truncated") else {})


def _shown_attempt(result: CaseResult) -> int | None:
    """The index of the attempt whose checks the case shows (the last scored one)."""
    if not result.attempts:
        return None
    scored = [i for i, a in enumerate(result.attempts) if a.status in ("pass", "fail")]
    return scored[-1] if scored else len(result.attempts) - 1


def _read_capped(path: Path) -> tuple[str, bool]:
    try:
        return read_agent_stream(path)
    except OSError:
        return "", False


def _task_id(case_id: str, suite_id: str) -> str:
    prefix = f"{suite_id}/"
    return case_id[len(prefix) :] if case_id.startswith(prefix) else case_id


def _result(check: Check) -> dict[str, Any]:
    fields = check.model_extra or {}
    result: dict[str, Any] = {
        "id": check.id,
        "name": fields.get("name", check.id),
        "kind": check.kind,
        "status": check.status,
    }
    values = {**fields, "message": check.message}
    for key in _RESULT_FIELDS:
        value = values.get(key)
        if key == "exitCode" and isinstance(value, int):
            result[key] = go_exit_code(value)
        elif value:
            result[key] = value
    return result
