"""Task sandboxes, PVYai's recipe (`materialize.go`): the workspace fixture copied, then
the repository `git init`, `git add .` and `git commit -m baseline` make of it: HEAD on
`master`, `user.name` and `user.email` in the repository's own config (so the agent's
own `git commit` works), one commit `baseline` of what `git add .` takes (not the files
the fixture's `.gitignore` files ignore), authored and committed by the identity PVYai's
materialiser sets in git's environment. `git status` is then empty, as the agent expects.
What the agent changed is judged against the `Baseline` kept beside it in memory, never
against that repository, which the agent controls (see `baseline`).

A fixture PVYai cannot set up a workspace from (`task_setup`) is a WorkspaceSetupError:
the task is an `error` there, and so it is here.
"""

from __future__ import annotations

from pathlib import Path

from assay.isolation.git import commit_identity
from assay.suites.case import TaskSpec
from assay.workspace.baseline import capture_baseline, ignored_paths
from assay.workspace.built_sandbox import Sandbox
from assay.workspace.repo import RepoBuilder
from assay.workspace.task_setup import check_baseline_commit, left_out_files

__all__ = ["PVYAI_BRANCH", "PVYAI_COMMIT_IDENTITY", "PVYAI_USER", "build_task_sandbox"]

PVYAI_BRANCH = "master"
"""Plain `git init`'s branch (PVYai's git follows the user's `init.defaultBranch`; assay
reads no user configuration)."""
PVYAI_USER = ("PVYai Eval", "pvyai-eval@example.invalid")
"""The `user.name` and `user.email` PVYai's materialiser writes into the workspace's config."""
PVYAI_COMMIT_IDENTITY = commit_identity("Zero Eval", "zero-eval@example.invalid")
"""The baseline's author and committer: PVYai's materialiser sets `GIT_AUTHOR_*` and
`GIT_COMMITTER_*` to this identity (pvyai-coding-agent's current `materialize.go`), which
outranks the config above; the date is assay's fixed one."""
BASELINE_MESSAGE = "baseline"


def build_task_sandbox(spec: TaskSpec, repo: Path) -> Sandbox:
    """Build the task repo in the empty directory `repo`.

    A fixture file its own ignore rules match is on disk but untracked, as in PVYai's
    workspace: what the agent does to it is no change. Raises WorkspaceSetupError for a
    fixture PVYai's harness cannot set up a workspace from.
    """
    builder = RepoBuilder(repo, head_branch=PVYAI_BRANCH, user=PVYAI_USER)
    work = builder.work
    copied = work.copy_tree(spec.workspace)
    left_out = left_out_files(spec.workspace, work.directories)
    ignored = ignored_paths([*copied, *left_out], work.ignore_rules)
    snapshot = {path: entry for path, entry in copied.items() if path not in ignored}
    check_baseline_commit(snapshot, [path for path in left_out if path not in ignored])
    commit = builder.commit(snapshot, message=BASELINE_MESSAGE, identity=PVYAI_COMMIT_IDENTITY)
    builder.check_out({PVYAI_BRANCH: commit}, snapshot=snapshot)
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
