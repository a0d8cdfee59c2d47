"""The confined grader's side: one Python grader of the suite's repository, run in a child.

A grader named by `module:attribute` in `[tool.assay] graders` or a suite is the pull
request's own code, so it never runs in assay's process (which holds the CI job's tokens
and the model key): `confined_graders.py` starts this module inside the OS sandbox of
verification commands, with their scrubbed environment, and talks to it in one JSON
document each way.

    stdin   {"reference": "mod:attr", "project_dir": "...", "sys_path": [...],
             "context": null | <GraderContext as JSON>}
    stdout  {"problem": "..."}            the reference names no usable grader
            {"checks": [<Check>, ...]}    what the grader found (context given)
            {"error": "grader ... raised ..."}

`context: null` only checks the reference (imported, and a grader), as `assay validate`
does. The context is rebuilt into the same typed `GraderContext` an installed grader gets
in-process. The grader's own prints go to stderr, so stdout holds the answer alone; the
parent trusts nothing in it (`confined_graders.py` validates it, bounded).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from assay.errors import JudgeError
from assay.grading.user_graders import GraderContext, run_user_graders
from assay.registry.graders import imported_grader_problem
from assay.subject import AgentOutput
from assay.suites import case as cases
from assay.suites.case import Case
from assay.workspace import Sandbox

__all__ = ["context_from_json", "context_to_json", "main"]

_SPEC_TYPES = ("ReviewSpec", "VerifySpec", "RubricSpec", "TaskSpec")


def context_to_json(ctx: Any) -> dict[str, Any]:
    """A `GraderContext` as plain JSON (its sandbox's in-memory baseline left out)."""

    sandbox = TypeAdapter(Sandbox).dump_python(ctx.sandbox, mode="json", exclude={"baseline"})
    return {
        "case": TypeAdapter(Case).dump_python(ctx.case, mode="json"),
        "spec_type": type(ctx.case.spec).__name__,
        "output": TypeAdapter(AgentOutput).dump_python(ctx.output, mode="json"),
        "sandbox": sandbox,
        "model": ctx.model,
        "attempt": ctx.attempt,
        "artifacts_dir": str(ctx.artifacts_dir),
    }


def context_from_json(data: dict[str, Any]) -> Any:
    """The `GraderContext` `context_to_json` wrote."""

    spec_type = data["spec_type"]
    if spec_type not in _SPEC_TYPES:
        raise ValueError(f"unknown spec type {spec_type!r}")
    # The spec's type is said, not guessed: one spec's fields can validate as another's.
    spec = TypeAdapter(getattr(cases, spec_type)).validate_python(data["case"]["spec"])
    case = TypeAdapter(cases.Case).validate_python({**data["case"], "spec": spec})
    return GraderContext(
        case=case,
        output=TypeAdapter(AgentOutput).validate_python(data["output"]),
        sandbox=TypeAdapter(Sandbox).validate_python(data["sandbox"]),
        model=data["model"],
        attempt=data["attempt"],
        artifacts_dir=Path(data["artifacts_dir"]),
    )


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    for entry in reversed(request["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)

    reference = request["reference"]
    problem = imported_grader_problem(reference, project_dir=Path(request["project_dir"]))
    if problem is not None:
        return {"problem": problem}
    if request["context"] is None:
        return {}
    ctx = context_from_json(request["context"])
    try:
        checks = asyncio.run(run_user_graders([reference], ctx))
    except JudgeError as exc:
        return {"error": str(exc)}
    return {"checks": [check.model_dump(mode="json") for check in checks]}


def main() -> None:
    """Read the request on stdin, answer on stdout (see the module docstring)."""
    answer_to = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the grader's own prints go to stderr, never into the answer
    sys.stdout = sys.stderr
    request = json.load(sys.stdin)
    answer = _answer(request)
    answer_to.write(json.dumps(answer))
    answer_to.close()
    os._exit(0)  # threads or atexit hooks the grader left cannot change the answer


if __name__ == "__main__":
    main()
