"""Task sandboxes, PVYai's recipe: the workspace fixture copied, a baseline commit on
`main` made right after the copy (of what `git add .` takes: not the files the fixture's
`.gitignore` files ignore), HEAD = main. `git status` is then empty, as the agent
expects. What the agent changed is judged against the `Baseline` kept beside it in
memory, never against that repository, which the agent controls (see `baseline`).
"""

from __future__ import annotations

from pathlib import Path

from assay.sandbox.baseline import capture_baseline, ignored_paths
from assay.sandbox.built_sandbox import Sandbox
from assay.sandbox.repo import BASE_BRANCH, RepoBuilder
from assay.suites.case import TaskSpec

__all__ = ["build_task_sandbox"]


def build_task_sandbox(spec: TaskSpec, repo: Path) -> Sandbox:
    """Build the task repo in the empty directory `repo`.

    A fixture file its own ignore rules match is on disk but untracked, as in PVYai's
    workspace: what the agent does to it is no change.
    """
    builder = RepoBuilder(repo, head_branch=BASE_BRANCH)
    work = builder.work
    copied = work.copy_tree(spec.workspace)
    ignored = ignored_paths(copied, work.ignore_rules)
    snapshot = {path: entry for path, entry in copied.items() if path not in ignored}
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
