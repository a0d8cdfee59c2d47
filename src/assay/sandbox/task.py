"""Task sandboxes, PVYai's recipe: the workspace fixture copied, a baseline commit on
`main` made right after the copy, HEAD = main. `git status` is then empty, as the agent
expects. What the agent changed is judged against the `Baseline` kept beside it in
memory, never against that repository, which the agent controls (see `baseline`).
"""

from __future__ import annotations

from pathlib import Path

from assay.sandbox.baseline import capture_baseline
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
    work = builder.work
    snapshot = work.copy_tree(spec.workspace)
    commit = builder.commit(snapshot, message="assay: baseline")
    builder.check_out({BASE_BRANCH: commit}, snapshot=snapshot)
    return Sandbox(
        path=repo,
        kind="task",
        base_commit=commit,
        head_commit=commit,
        diff="",
        changed_files=(),
        repository=None,
        baseline=capture_baseline(snapshot, stats=work.stats, ignore_rules=work.ignore_rules),
    )
