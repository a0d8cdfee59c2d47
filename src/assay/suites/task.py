"""Loader for PVYai task suites: PVYai's validation rules, paths against the suite's directory.

PVYai's `Validate`, rule by rule (the models in `wire_task` check types and required
fields): task ids and command ids unique; `expectedChangedFiles` not empty; in every
file list no blank entry, no path PVYai refuses (`pvyai_paths`) and no duplicate after
normalising (`a.txt` and `./a.txt`); in `requiredTraceEvents` no blank entry and no
duplicate after trimming. PVYai accepts, and so does assay: a file both expected and
forbidden, a file both required and forbidden, `d/../a.txt`, blank argv elements beside
a real one, any `difficulty`, `/` in ids.

Stricter than PVYai, for safety, and said so in the error: the workspace fixture must
exist as a directory inside the suite's directory when the suite is validated (PVYai
finds out only when it runs the task), and it may not hold symlinks (PVYai refuses them
only when it copies the fixture).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay._util.fixture_tree import SYMLINK, fixture_entries
from assay.core.paths import is_inside
from assay.errors import SandboxError
from assay.suites.case import Case, ContextChecks, TaskSpec, VerificationCommand
from assay.suites.context import LoadContext
from assay.suites.document import Document
from assay.suites.validation import validate_model, validate_quietly
from assay.suites.wire_task import Task, TaskSuite
from assay.upstream.go.json import go_struct
from assay.upstream.pvyai.paths import (
    BAD_PATH,
    go_trim_space,
    normalize_eval_path,
    normalize_files,
    normalize_strings,
)

__all__ = ["load_task_suite"]

COMMAND_TIMEOUT_S = 600.0
"""PVYai's defaultCommandTimeout: ten minutes per verification command."""

_STRICTER = "assay checks this when it loads the suite; PVYai only when it runs the task"


def load_task_suite(doc: Document, *, ctx: LoadContext) -> tuple[list[Case], list[Path]]:
    """The suite's tasks, and their workspace fixture directories (never scanned for suites)."""
    suite = validate_model(
        TaskSuite,
        doc,
        ctx.problems,
        unknown_keys_are_errors=True,
        unknown_key_hint="PVYai task suites reject unknown fields",
    )
    if suite is not None:
        tasks = list(enumerate(suite.tasks))
    else:  # still check the fixtures of the tasks that are well-formed
        raw = go_struct(doc.data, TaskSuite.model_fields, object_lists=("tasks",))
        raw_tasks = raw.get("tasks") if isinstance(raw, dict) else None
        tasks = [
            (i, t)
            for i, item in enumerate(raw_tasks if isinstance(raw_tasks, list) else [])
            if (t := validate_quietly(Task, item))
        ]
    suite_dir = doc.path.parent
    cases, workspaces = [], []
    seen_ids: dict[str, int] = {}
    for number, task in tasks:
        key_path: tuple[Any, ...] = ("tasks", number)
        if task.id in seen_ids:
            ctx.problems.error(
                f"tasks[{number}] id duplicates tasks[{seen_ids[task.id]}]",
                doc.location(key_path + ("id",)),
            )
        seen_ids.setdefault(task.id, number)
        workspace = _workspace(task, suite_dir, doc, key_path, ctx)
        lists_ok = _check_lists(task, doc, key_path, ctx)
        _check_command_ids(task, doc, key_path, ctx)
        if workspace is None:
            continue
        workspaces.append(workspace)
        if suite is None or not lists_ok:
            continue
        cases.append(_case(suite, task, workspace, doc, key_path))
    return cases, workspaces


def _case(
    suite: TaskSuite, task: Task, workspace: Path, doc: Document, key_path: tuple[Any, ...]
) -> Case:
    checks = task.contextChecks
    spec = TaskSpec(
        prompt=task.prompt,
        workspace=workspace,
        commands=tuple(
            VerificationCommand(
                id=c.id, name=c.name, argv=tuple(c.command), timeout_s=COMMAND_TIMEOUT_S
            )
            for c in task.verificationCommands
        ),
        expected_changed_files=normalize_files(task.expectedChangedFiles),
        forbidden_changed_files=normalize_files(task.forbiddenChangedFiles),
        context=ContextChecks(
            required_files=normalize_files(checks.requiredFiles),
            forbidden_files=normalize_files(checks.forbiddenFiles),
        ),
        required_trace_events=normalize_strings(task.requiredTraceEvents),
        tags=tuple(task.tags),
        difficulty=task.difficulty or None,
        description=task.description,
    )
    return Case(
        id=f"{suite.id}/{task.id}",
        suite=suite.id,
        name=task.name,
        kind="task",
        format="task-suite",
        source_path=doc.path,
        source_line=doc.location(key_path).line,
        spec=spec,
        runtime="command",
        root=doc.path.parent,
    )


def _workspace(
    task: Task, suite_dir: Path, doc: Document, key_path: tuple[Any, ...], ctx: LoadContext
) -> Path | None:
    """The fixture directory, resolved as PVYai resolves it (`..` may be used inside)."""
    where = doc.location(key_path + ("workspaceFixture",))
    fixture = go_trim_space(task.workspaceFixture)
    if fixture.startswith("/"):
        ctx.problems.error("workspace fixture must be relative to suite path", where)
        return None
    real_root = os.path.realpath(suite_dir)
    workspace = Path(os.path.realpath(os.path.join(real_root, fixture)))
    if not is_inside(workspace, real_root, resolved=True):
        ctx.problems.error("workspace fixture must stay within suite directory", where)
        return None
    if str(workspace) == real_root:
        ctx.problems.error(
            "workspace fixture must be a directory below the suite's directory, not the "
            "suite's own directory (assay refuses it for safety)",
            where,
        )
        return None
    if not workspace.is_dir():
        ctx.problems.error(
            f"workspaceFixture {task.workspaceFixture!r} is not a directory under {suite_dir} "
            f"({_STRICTER})",
            where,
        )
        return None
    problem = ctx.fixture_tree_problem(workspace) or _symlink_problem(workspace)
    if problem is not None:
        ctx.problems.error(f"workspaceFixture {task.workspaceFixture!r}: {problem}", where)
        return None
    return workspace


def _symlink_problem(workspace: Path) -> str | None:
    try:
        for kind, _, rel, _ in fixture_entries(workspace):
            if kind == SYMLINK:
                return (
                    f"{rel} is a symlink; PVYai copies only regular files and directories "
                    f"({_STRICTER})"
                )
    except SandboxError as exc:
        return str(exc)
    return None


def _check_lists(task: Task, doc: Document, key_path: tuple[Any, ...], ctx: LoadContext) -> bool:
    """PVYai's rules for the file lists and the trace events; False when one is broken."""
    checks = task.contextChecks
    lists: dict[tuple[str, ...], list[str]] = {
        ("expectedChangedFiles",): task.expectedChangedFiles,
        ("forbiddenChangedFiles",): task.forbiddenChangedFiles,
        ("contextChecks", "requiredFiles"): checks.requiredFiles,
        ("contextChecks", "forbiddenFiles"): checks.forbiddenFiles,
    }
    ok = True
    for field_path, raws in lists.items():
        ok &= _check_list(raws, normalize_eval_path, field_path, doc, key_path, ctx)
    events = task.requiredTraceEvents
    ok &= _check_list(events, go_trim_space, ("requiredTraceEvents",), doc, key_path, ctx)
    return ok


def _check_list(
    raws: list[str],
    normalise: Any,
    field_path: tuple[str, ...],
    doc: Document,
    key_path: tuple[Any, ...],
    ctx: LoadContext,
) -> bool:
    field = ".".join(field_path)
    seen: dict[str, int] = {}
    ok = True
    for number, raw in enumerate(raws):
        where = doc.location(key_path + field_path + (number,))
        value = normalise(raw)
        if value is None:
            ctx.problems.error(f"{field}[{number}] {raw!r} {BAD_PATH}", where)
        elif not value:
            ctx.problems.error(f"{field}[{number}] must not be empty", where)
        elif value in seen:
            ctx.problems.error(
                f"{field}[{number}] {raw!r} duplicates {field}[{seen[value]}] (both are {value!r})",
                where,
            )
        else:
            seen[value] = number
            continue
        ok = False
    return ok


def _check_command_ids(
    task: Task, doc: Document, key_path: tuple[Any, ...], ctx: LoadContext
) -> None:
    seen: dict[str, int] = {}
    for number, command in enumerate(task.verificationCommands):
        if command.id in seen:
            ctx.problems.error(
                f"verificationCommands[{number}] id duplicates "
                f"verificationCommands[{seen[command.id]}]",
                doc.location(key_path + ("verificationCommands", number, "id")),
            )
        seen.setdefault(command.id, number)
