"""Task results in PVYai's `pvyai.agenteval.report.v1` contract, for tools that read it.

PVYai statuses: `pass`, `fail`, `blocked` (the harness could not run the task or collect
its inputs) and `error` (the suite, task id or command could not be interpreted). In
assay the latter are configuration errors that stop the run before any report exists,
so an assay `error` (sandbox, agent infrastructure) maps to `blocked`, and so does a
`skipped` case, with its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.report.model import CaseResult, Check, Report

__all__ = ["PVYAI_CONTRACT", "to_pvyai"]

PVYAI_CONTRACT = "pvyai.agenteval.report.v1"

_STATUS = {"pass": "pass", "fail": "fail", "error": "blocked", "skipped": "blocked"}


def to_pvyai(
    report: Report,
    *,
    suite_id: str,
    suite_name: str,
    task_names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The task cases of suite `suite_id` as one PVYai report.

    `task_names` maps task ids to their human-readable names (PVYai's `name`); a task
    without one is named by its id. In a model matrix each (task, model) is one result
    carrying a `model` key, as PVYai's matrix results do.
    """
    cases = [c for c in report.cases if c.kind == "task" and c.suite == suite_id]
    results = [_result(case, suite_id, task_names or {}) for case in cases]
    statuses = [result["status"] for result in results]
    return {
        "contract": PVYAI_CONTRACT,
        "suite": {"id": suite_id, "name": suite_name},
        "summary": {
            "total": len(results),
            "passed": statuses.count("pass"),
            "failed": statuses.count("fail"),
            "blocked": statuses.count("blocked"),
            "errors": statuses.count("error"),
        },
        "results": results,
    }


def _task_id(case: CaseResult, suite_id: str) -> str:
    prefix = f"{suite_id}/"
    return case.id[len(prefix) :] if case.id.startswith(prefix) else case.id


def _check(check: Check) -> dict[str, Any]:
    fields = check.model_dump(mode="json")
    return {"id": fields.pop("id"), "name": fields.pop("name", check.id), **fields}


def _result(case: CaseResult, suite_id: str, names: Mapping[str, str]) -> dict[str, Any]:
    task_id = _task_id(case, suite_id)
    result: dict[str, Any] = {
        "id": task_id,
        "name": names.get(task_id, task_id),
        "status": _STATUS[case.status],
        "checks": [_check(check) for check in case.checks],
    }
    if case.model:
        result["model"] = case.model
    if case.status in ("error", "skipped") or (case.status == "fail" and case.reason):
        result["message"] = case.reason
    result["durationS"] = round(case.duration_s, 3)
    return result
