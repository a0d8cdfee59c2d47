#!/usr/bin/env python3
"""An EXAMPLE of assay's command-runtime protocol for task cases. It is not an AI.

This script is a scripted "oracle": for a task id it knows, it copies the reference
solution from `examples/solutions/<task_id>/` into the workspace, then runs the task's
tests. It exists so that the task suite in `evals/tasks/` can be run end to end offline,
and to show what assay expects from any agent command:

* It is started as an argv list (no shell) with the workspace as its working directory,
  e.g. `["./examples/reference_agent.py", "{task_id}", "{workspace}"]`. When run without
  arguments it reads the same values from `$ASSAY_TASK_ID` and `$ASSAY_WORKSPACE`.
* It changes files only inside the workspace; assay finds the changed files with
  `git status` against the commit it made before starting the agent.
* It reports what it does as JSON lines on stdout, one event per line, the way a real
  coding agent logs its tool calls: `{"type": "tool", "name": "read_file", "path": ...}`
  before reading a file, `{"type": "tool", "name": "edit_file", "path": ...}` for each
  file it writes, and `{"type": "verify", "name": "test", "exitCode": N}` after running
  the tests itself. assay keys these as `tool:read_file`, `tool:edit_file` and
  `verify:test`; a task's `requiredTraceEvents` lists the keys it expects. Anything
  that is not a JSON line (here: pytest's output, sent to stderr) is ignored.
* It exits 0 when it finished its attempt, whether or not the tests passed: the task's
  verification commands decide the result. An unknown task id or a missing workspace is
  a usage error: a message on stderr and exit status 2.

Only the standard library is used, so it runs with any Python 3.11+.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SOLUTIONS = Path(__file__).resolve().parent / "solutions"
TEST_ARGS = ("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
USAGE = "usage: reference_agent.py TASK_ID WORKSPACE (or set ASSAY_TASK_ID and ASSAY_WORKSPACE)"


def emit(event: dict[str, Any]) -> None:
    """Print one trace event as a JSON line; flush so the harness sees it as it happens."""
    print(json.dumps(event), flush=True)


def known_tasks() -> list[str]:
    return sorted(entry.name for entry in SOLUTIONS.iterdir() if entry.is_dir())


def read_file(workspace: Path, relative: str) -> str:
    emit({"type": "tool", "name": "read_file", "path": relative})
    return (workspace / relative).read_text(encoding="utf-8")


def write_file(workspace: Path, relative: str, content: str) -> None:
    emit({"type": "tool", "name": "edit_file", "path": relative})
    target = workspace / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")


def run_tests(workspace: Path) -> int:
    argv = [sys.executable, *TEST_ARGS]
    emit({"type": "tool", "name": "exec_command", "command": ["python", *TEST_ARGS]})
    completed = subprocess.run(argv, cwd=workspace, capture_output=True, text=True, check=False)
    # stdout carries only trace events; the test output goes to stderr for humans.
    sys.stderr.write(completed.stdout)
    sys.stderr.write(completed.stderr)
    emit({"type": "verify", "name": "test", "exitCode": completed.returncode})
    return completed.returncode


def solve(task_id: str, workspace: Path) -> int:
    """Read the tests and the files to change, write the reference solution, run the tests."""
    solution = SOLUTIONS / task_id
    for test_file in sorted((workspace / "tests").glob("test_*.py")):
        read_file(workspace, test_file.relative_to(workspace).as_posix())

    for source in sorted(path for path in solution.rglob("*") if path.is_file()):
        if "__pycache__" in source.parts:
            continue
        relative = source.relative_to(solution).as_posix()
        if (workspace / relative).exists():
            read_file(workspace, relative)
        write_file(workspace, relative, source.read_text(encoding="utf-8"))

    exit_code = run_tests(workspace)
    verdict = "passed" if exit_code == 0 else f"failed with exit code {exit_code}"
    print(f"reference_agent: {task_id}: tests {verdict}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 2:
        task_id, workspace_arg = argv
    elif not argv and os.environ.get("ASSAY_TASK_ID") and os.environ.get("ASSAY_WORKSPACE"):
        task_id, workspace_arg = os.environ["ASSAY_TASK_ID"], os.environ["ASSAY_WORKSPACE"]
    else:
        print(USAGE, file=sys.stderr)
        return 2

    tasks = known_tasks()
    if task_id not in tasks:
        print(
            f"reference_agent: unknown task id {task_id!r}; it has solutions for: "
            + ", ".join(tasks),
            file=sys.stderr,
        )
        return 2
    workspace = Path(workspace_arg).resolve()
    if not workspace.is_dir():
        print(f"reference_agent: workspace {workspace} is not a directory", file=sys.stderr)
        return 2
    return solve(task_id, workspace)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
