"""PVYai's task results: the shape of a check, a blocked task's checks, the task status.

Shared by the checks that produce them (`task_checks`), the runner that blocks a task
whose agent never finished, and PVYai's report (`report/pvyai.py`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any, Literal

from assay.core.checks import Check, check_summary
from assay.suites.case import TaskSpec
from assay.upstream.pvyai.paths import normalize_files, normalize_strings

__all__ = [
    "PvyaiStatus",
    "blocked_checks",
    "check_summary",
    "go_exit_code",
    "pvyai_status",
    "task_check",
]

PvyaiStatus = Literal["pass", "fail", "blocked", "error"]


def task_check(
    check_id: str, name: str, kind: str, status: str, message: str = "", **fields: Any
) -> Check:
    """One check with PVYai's result fields (`expectedFiles`, `exitCode`, ...) beside it, and
    what it expected in a reviewer's words."""
    return Check.model_validate(
        {
            "id": check_id,
            "name": name,
            "kind": kind,
            "status": status,
            "message": message,
            "expected": _expected(check_id, fields),
            **fields,
        }
    )


def _expected(check_id: str, fields: dict[str, Any]) -> str | None:
    """The expectation a task check holds the workspace to, from PVYai's own fields."""
    if "command" in fields:
        return f"`{shlex.join(fields['command'])}` exits 0"
    if "expectedEvents" in fields:
        return "trace events: " + ", ".join(fields["expectedEvents"])
    files = ", ".join(fields.get("expectedFiles", [])) or "(none)"
    if check_id == "forbidden_changed_files":
        return f"unchanged: {files}"
    if check_id == "context_checks":
        return f"present: {files}"
    if "expectedFiles" in fields:
        return f"changed, and nothing else: {files}"
    return None


def pvyai_status(checks: Sequence[Check]) -> PvyaiStatus:
    """PVYai's task status from its checks (its `finishSummary`)."""
    statuses = {check.status for check in checks}
    for status in ("blocked", "error", "fail"):
        if status in statuses:
            return status  # type: ignore[return-value]
    return "pass"


def go_exit_code(code: object) -> int:
    """An exit code as Go reports it: -1 for a process a signal ended (assay: -signal) or
    that never ran."""
    return code if isinstance(code, int) and code >= 0 else -1


def blocked_checks(spec: TaskSpec, reason: str) -> list[Check]:
    """Every check of `spec`, `blocked` because the agent did not finish: nothing is
    scored, and no trace is read (PVYai's blocked `trace_events` has no `actualEvents`)."""
    message = f"run blocked: {reason}" if reason else "run blocked"
    checks = [
        task_check(c.id, c.name, "command", "blocked", message, command=list(c.argv))
        for c in spec.commands
    ]
    checks.append(
        task_check(
            "changed_files",
            "Expected changed files",
            "changed_files",
            "blocked",
            message,
            expectedFiles=list(normalize_files(spec.expected_changed_files)),
        )
    )
    if spec.forbidden_changed_files:
        checks.append(
            task_check(
                "forbidden_changed_files",
                "Forbidden changed files",
                "changed_files",
                "blocked",
                message,
                expectedFiles=list(normalize_files(spec.forbidden_changed_files)),
            )
        )
    if spec.context.required_files or spec.context.forbidden_files:
        checks.append(
            task_check(
                "context_checks",
                "Context quality checks",
                "context",
                "blocked",
                message,
                expectedFiles=list(normalize_files(spec.context.required_files)),
            )
        )
    if spec.required_trace_events:
        checks.append(
            task_check(
                "trace_events",
                "Required agent trace events",
                "trace",
                "blocked",
                message,
                expectedEvents=list(normalize_strings(spec.required_trace_events)),
            )
        )
    return checks
