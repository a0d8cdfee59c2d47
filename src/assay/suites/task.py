"""Loader for PVYai task suites; paths resolve against the suite file's directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay._util.paths import PathEscape, resolve_inside, safe_relative
from assay.errors import ConfigError
from assay.suites.case import Case, ContextChecks, TaskSpec, VerificationCommand
from assay.suites.context import LoadContext
from assay.suites.document import Document
from assay.suites.validation import validate_model, validate_quietly
from assay.suites.wire_task import Task, TaskSuite

__all__ = ["load_task_suite"]

COMMAND_TIMEOUT_S = 600.0
"""PVYai's defaultCommandTimeout: ten minutes per verification command."""


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
        raw = doc.data.get("tasks") if isinstance(doc.data, dict) else None
        raw_tasks = raw if isinstance(raw, list) else []
        tasks = [(i, t) for i, item in enumerate(raw_tasks) if (t := validate_quietly(Task, item))]
    suite_dir = doc.path.parent
    cases, workspaces = [], []
    for number, task in tasks:
        key_path: tuple[Any, ...] = ("tasks", number)
        workspace = _workspace(task, suite_dir, doc, key_path, ctx)
        files = _repo_paths(task, doc, key_path, ctx)
        _check_command_ids(task, doc, key_path, ctx)
        if workspace is None:
            continue
        workspaces.append(workspace)
        if suite is None or files is None:
            continue
        expected, forbidden, required, absent = files
        spec = TaskSpec(
            prompt=task.prompt,
            workspace=workspace,
            commands=tuple(
                VerificationCommand(
                    id=c.id, name=c.name, argv=tuple(c.command), timeout_s=COMMAND_TIMEOUT_S
                )
                for c in task.verificationCommands
            ),
            expected_changed_files=expected,
            forbidden_changed_files=forbidden,
            context=ContextChecks(required_files=required, forbidden_files=absent),
            required_trace_events=tuple(task.requiredTraceEvents),
            tags=tuple(task.tags),
            difficulty=task.difficulty,
            description=task.description,
        )
        cases.append(
            Case(
                id=f"{suite.id}/{task.id}",
                suite=suite.id,
                name=task.name,
                kind="task",
                format="task-suite",
                source_path=doc.path,
                source_line=doc.location(key_path).line,
                spec=spec,
                runtime="command",
                root=suite_dir,
            )
        )
    return cases, workspaces


def _workspace(
    task: Task, suite_dir: Path, doc: Document, key_path: tuple[Any, ...], ctx: LoadContext
) -> Path | None:
    where = doc.location(key_path + ("workspaceFixture",))
    try:
        workspace = resolve_inside(suite_dir, task.workspaceFixture, location=where)
    except ConfigError as exc:
        ctx.problems.add(exc)
        return None
    if not workspace.is_dir():
        ctx.problems.error(
            f"workspaceFixture {task.workspaceFixture!r} is not a directory under {suite_dir}",
            where,
        )
        return None
    problem = ctx.fixture_tree_problem(workspace)
    if problem is not None:
        ctx.problems.error(f"workspaceFixture {task.workspaceFixture!r}: {problem}", where)
        return None
    return workspace


_FileLists = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _repo_paths(
    task: Task, doc: Document, key_path: tuple[Any, ...], ctx: LoadContext
) -> _FileLists | None:
    """The workspace-relative file lists, normalised; None when one of them is unusable."""
    checks = task.contextChecks
    lists = {
        ("expectedChangedFiles",): task.expectedChangedFiles,
        ("forbiddenChangedFiles",): task.forbiddenChangedFiles,
        ("contextChecks", "requiredFiles"): checks.requiredFiles if checks else [],
        ("contextChecks", "forbiddenFiles"): checks.forbiddenFiles if checks else [],
    }
    normalised: list[tuple[str, ...]] = []
    ok = True
    for field_path, raws in lists.items():
        names = []
        for number, raw in enumerate(raws):
            try:
                names.append(safe_relative(raw).as_posix())
            except PathEscape as exc:
                ctx.problems.error(str(exc), doc.location(key_path + field_path + (number,)))
                ok = False
        normalised.append(tuple(names))
    expected, forbidden, required, absent = normalised
    for clash in sorted(set(expected) & set(forbidden)):
        ctx.problems.error(
            f"{clash!r} is both an expected and a forbidden changed file",
            doc.location(key_path + ("forbiddenChangedFiles",)),
        )
        ok = False
    for clash in sorted(set(required) & set(absent)):
        ctx.problems.error(
            f"{clash!r} is both a required and a forbidden file",
            doc.location(key_path + ("contextChecks",)),
        )
        ok = False
    return (expected, forbidden, required, absent) if ok else None


def _check_command_ids(
    task: Task, doc: Document, key_path: tuple[Any, ...], ctx: LoadContext
) -> None:
    seen: set[str] = set()
    for number, command in enumerate(task.verificationCommands):
        if command.id in seen:
            ctx.problems.error(
                f"duplicate verification command id {command.id!r}",
                doc.location(key_path + ("verificationCommands", number, "id")),
            )
        seen.add(command.id)
