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
that has no checks is `error` (its sandbox could not be built: PVYai's failed
materialisation), or `blocked` when it was skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay._util import json_text
from assay.core.files import PVYAI_FILE, artifacts_dir
from assay.grading.task_checks import AGENT_RESULT_FILE
from assay.grading.task_results import blocked_checks, go_exit_code, pvyai_status
from assay.report.model import CaseResult, Check, Report
from assay.subject import read_agent_stream
from assay.suites.case import Case, TaskSpec

__all__ = ["PVYAI_CONTRACT", "PVYAI_REPORT_FILE", "benchmark_report", "task_report"]

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


def task_report(
    suite_id: str, task_id: str, checks: Sequence[Check], *, error: str = ""
) -> dict[str, Any]:
    """PVYai's report of one task from its checks; `error` when the task could not run."""
    results = [_result(check) for check in checks]
    statuses = [check.status for check in checks]
    summary = {
        "total": len(results),
        "passed": statuses.count("pass"),
        "failed": statuses.count("fail"),
        "blocked": statuses.count("blocked"),
        "errors": statuses.count("error"),
    }
    status = pvyai_status(checks) if checks else "error" if error else "pass"
    changed = next(
        (c for c in checks if c.id == "changed_files" and c.kind == "changed_files"), None
    )
    actual = (changed.model_extra or {}).get("actualFiles", []) if changed else []
    report: dict[str, Any] = {
        "contract": PVYAI_CONTRACT,
        "suiteId": suite_id,
        "taskId": task_id,
        "status": status,
        "ok": status == "pass",
        "summary": summary,
        "changedFiles": list(actual) if changed and changed.status != "blocked" else [],
        "results": results,
    }
    if error:
        report["error"] = error
    return report


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
    error = ""
    if not checks and case is not None and isinstance(case.spec, TaskSpec):
        if result.status == "skipped":
            checks = blocked_checks(case.spec, result.reason)
        elif result.status == "error":
            error = result.reason or "the task could not run"
    agent, workspace = _agent(result, report_dir)
    entry: dict[str, Any] = {"taskId": task_id}
    if result.model:
        entry["model"] = result.model
    entry["workspacePath"] = result.workspace or workspace
    entry["fixturePath"] = (
        str(case.spec.workspace) if case and isinstance(case.spec, TaskSpec) else ""
    )
    entry["agent"] = agent
    entry["report"] = task_report(suite_id, task_id, checks, error=error)
    return entry


def _agent(result: CaseResult, report_dir: Path | None) -> tuple[dict[str, Any], str]:
    """PVYai's `agent` object from what the attempt kept, and the workspace it ran in."""
    shown = _shown_attempt(result)
    record: Mapping[str, Any] = {}
    streams = {"stdout": "", "stderr": ""}
    truncated = False
    if report_dir is not None and shown is not None:
        directory = artifacts_dir(report_dir, result.id, result.model, shown)
        record = _read_json(directory / AGENT_RESULT_FILE)
        for stream in streams:
            streams[stream], cut = _read_capped(directory / f"agent.{stream}")
            truncated = truncated or cut
    exit_code = record.get("exitCode")
    agent: dict[str, Any] = {"exitCode": go_exit_code(exit_code)}
    agent.update({name: text for name, text in streams.items() if text})
    if not isinstance(exit_code, int) and result.status in ("error", "skipped") and result.reason:
        agent["error"] = result.reason
    if truncated:
        agent["truncated"] = True
    workspace = record.get("workspacePath")
    return agent, workspace if isinstance(workspace, str) else ""


def _shown_attempt(result: CaseResult) -> int | None:
    """The index of the attempt whose checks the case shows (the last scored one)."""
    if not result.attempts:
        return None
    scored = [i for i, a in enumerate(result.attempts) if a.status in ("pass", "fail")]
    return scored[-1] if scored else len(result.attempts) - 1


def _read_json(path: Path) -> Mapping[str, Any]:
    try:
        value = json_text.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


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
