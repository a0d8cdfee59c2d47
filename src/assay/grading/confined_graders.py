"""Grading a case with one of the project's own Python graders, confined.

The grader (a `module:attribute` the project's configuration or a suite named: a file a
pull request can change) runs in a child (`registry/project_graders.py` starts it,
`grader_child.py` is its side) inside the OS sandbox of the case's verification commands:
their scrubbed environment, the workspace writable as for them, and besides it only
`<attempt dir>/grader/`, which the grader gets as `ctx.artifacts_dir` (a directory of
its own, so nothing it leaves there is a file assay writes later). Within the case's
timeout. A crash, a timeout, an answer that is not JSON or names no valid Check is the
case's `error`, naming the grader: never a pass.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.secrets import scrubbed_environ
from assay.errors import JudgeError
from assay.grading.grader_child import context_to_json
from assay.registry.project_graders import child_argv, run_grader_child

if TYPE_CHECKING:
    from assay.core.checks import Check
    from assay.grading.user_graders import GraderContext
    from assay.isolation.bwrap import Sandboxing

__all__ = ["GRADER_FILES_DIR", "grade_confined"]

GRADER_FILES_DIR = "grader"
"""The confined grader's own directory in its attempt's (its `ctx.artifacts_dir`)."""


async def grade_confined(
    reference: str,
    project_dir: Path,
    ctx: GraderContext,
    *,
    sandboxing: Sandboxing,
    timeout_s: float,
    pass_env: Sequence[str] = (),
) -> list[Check]:
    """The checks of the project's grader `reference` on `ctx`, from its confined child.
    JudgeError (the case's `error`, naming the grader) when it gives none."""

    workspace = ctx.sandbox.path
    own_files = ctx.artifacts_dir / GRADER_FILES_DIR
    own_files.mkdir(parents=True, exist_ok=True)
    context = context_to_json(dataclasses.replace(ctx, artifacts_dir=own_files))
    confinement = sandboxing.for_command(workspace, child_argv())
    if confinement is None:  # the caller runs it in-process when there is no sandbox
        raise JudgeError(f"grader {reference!r}: no OS sandbox to run it in")
    writable = (*confinement.writable, Path(os.path.realpath(own_files)))
    try:
        outcome = await run_grader_child(
            reference,
            project_dir,
            context,
            cwd=workspace,
            confinement=dataclasses.replace(confinement, writable=writable),
            exposure=sandboxing.shown,
            timeout_s=timeout_s,
            env=scrubbed_environ(pass_names=pass_env),
        )
    finally:
        with contextlib.suppress(OSError):  # left empty: no clutter in the report dir
            own_files.rmdir()
    answer = outcome.answer
    if answer is None:
        raise JudgeError(f"grader {reference!r} (confined) {outcome.failure}")
    if answer.problem is not None:
        raise JudgeError(answer.problem)
    if answer.error is not None:
        raise JudgeError(answer.error)
    if answer.checks is None:
        raise JudgeError(f"grader {reference!r} (confined) gave no checks")
    return answer.checks
