"""Task sandboxes, PVYai's recipe: the workspace fixture copied, a baseline commit on
`main` made right after the copy, HEAD = main. `git status` is then empty and later
shows exactly what the agent changed.
"""

from __future__ import annotations

from pathlib import Path

from assay.sandbox.model import Sandbox
from assay.sandbox.repo import BASE_BRANCH, RepoBuilder
from assay.suites.case import TaskSpec

__all__ = ["build_task_sandbox"]


def build_task_sandbox(spec: TaskSpec, repo: Path) -> Sandbox:
    """Build the task repo in the empty directory `repo`.

    Every file of the fixture is tracked, including ones its `.gitignore` names, so a
    change the agent makes to any of them shows up.
    """
    builder = RepoBuilder(repo, head_branch=BASE_BRANCH)
    snapshot = builder.work.copy_tree(spec.workspace)
    baseline = builder.commit(snapshot, message="assay: baseline")
    builder.check_out({BASE_BRANCH: baseline}, snapshot=snapshot)
    return Sandbox(
        path=repo,
        kind="task",
        base_commit=baseline,
        head_commit=baseline,
        diff="",
        changed_files=(),
        repository=None,
    )
