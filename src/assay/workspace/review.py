"""Review and verify sandboxes, Warden's recipe: skill and supporting files on `main`,
the fixture files committed on `eval` (a child of main), HEAD = eval.

The skill lands where Warden's `setupEvalRepo` puts it: a flat skill at
`.warden/skills/<file>`, a `SKILL.md` with its whole directory at `.warden/skills/<dir>/`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from assay.errors import SandboxError
from assay.suites.case import CaseKind, FixtureFile, ReviewSpec, VerifySpec
from assay.suites.warden import SKILL_COMMIT_MESSAGE, fixture_commit_message
from assay.workspace.added_diff import added_files_diff
from assay.workspace.built_sandbox import Sandbox
from assay.workspace.objects import Snapshot
from assay.workspace.repo import BASE_BRANCH, EVAL_BRANCH, RepoBuilder, branch_diff, changed_paths
from assay.workspace.worktree import WorkTree, repo_path

__all__ = ["SKILL_DIR", "build_review_sandbox", "is_small_review_sandbox"]

SKILL_DIR = ".warden/skills"
"""Where skills land in the repo (on main, so never in the diff)."""
_SKILL_FILE = "SKILL.md"

SMALL_SANDBOX_FILES = 16
SMALL_SANDBOX_BYTES = 64 * 1024
"""A review sandbox of at most this many files and bytes (fixtures, supporting files and
skill together) takes a few milliseconds and starts no process: the runner builds it on
its event loop, where a thread would cost more CPU than the build itself
(docs/performance.md, "Per-case cost")."""


def build_review_sandbox(
    spec: ReviewSpec | VerifySpec, repo: Path, *, kind: CaseKind, skill: Path | None, name: str
) -> Sandbox:
    """Build the review/verify repo of case `name` in the empty directory `repo`."""
    builder = RepoBuilder(
        repo, head_branch=EVAL_BRANCH, repository=spec.repository, keep_contents=True
    )
    base: Snapshot = {}
    if skill is not None:
        base.update(_copy_skill(builder.work, skill))
    base.update(_place(builder.work, spec.supporting_files, what="supporting file"))
    head = dict(base)
    head.update(_place(builder.work, spec.files, what="fixture file"))
    # Warden's commit messages: its reviewer reads the tip's as the pull request's title.
    main = builder.commit(base, message=SKILL_COMMIT_MESSAGE)
    tip = builder.commit(head, parents=[main], message=fixture_commit_message(name))
    builder.check_out({BASE_BRANCH: main, EVAL_BRANCH: tip}, snapshot=head)
    return Sandbox(
        path=repo,
        kind=kind,
        base_commit=main,
        head_commit=tip,
        diff=_diff(builder, base, head),
        changed_files=changed_paths(base, head),
        repository=spec.repository,
    )


def is_small_review_sandbox(spec: ReviewSpec | VerifySpec, skill: Path | None) -> bool:
    """Whether the sandbox `build_review_sandbox(spec, skill=skill, ...)` builds is small (see
    SMALL_SANDBOX_FILES). A file that cannot be read is not: the build reports it."""
    files: list[Path | str] = [f.source for f in (*spec.files, *spec.supporting_files)]
    tree = _skill_tree(skill) if skill is not None else None
    if tree is not None:
        skill_files = _files_under(tree, limit=SMALL_SANDBOX_FILES + 1 - len(files))
        if skill_files is None:
            return False
        files += skill_files
    elif skill is not None:
        files.append(skill)
    if len(files) > SMALL_SANDBOX_FILES:
        return False
    total = 0
    for path in files:
        try:
            total += os.stat(path).st_size
        except OSError:
            return False
        if total > SMALL_SANDBOX_BYTES:
            return False
    return True


def _files_under(tree: Path, *, limit: int) -> list[str] | None:
    """Up to `limit` files under `tree` (enough to tell it has too many); None when a
    directory cannot be read."""
    found: list[str] = []
    pending = [str(tree)]
    while pending and len(found) < limit:
        try:
            with os.scandir(pending.pop()) as listing:
                for entry in listing:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    else:
                        found.append(entry.path)
        except OSError:
            return None
    return found


def _skill_tree(skill: Path) -> Path | None:
    """The directory a skill brings whole (a SKILL.md's), or None for a single-file skill."""
    if skill.is_dir():
        return skill
    if (skill.parent / _SKILL_FILE).is_file():  # Warden: a directory skill, whatever file named
        return skill.parent
    return None


def _diff(builder: RepoBuilder, base: Snapshot, head: Snapshot) -> str:
    """`git diff main...eval`: written in-process when eval only adds files, else git's."""
    contents = builder.work.contents or {}
    diff = added_files_diff(
        base,
        head,
        contents,
        object_ids=builder.store.ids,
        has_attributes=builder.work.has_attributes,
    )
    return diff if diff is not None else branch_diff(builder.path)


def _place(work: WorkTree, fixtures: Iterable[FixtureFile], *, what: str) -> Snapshot:
    placed: Snapshot = {}
    sources: dict[str, Path] = {}
    for fixture in fixtures:
        dest = repo_path(fixture.dest)
        if dest in sources and sources[dest] != fixture.source:
            raise SandboxError(
                f"{what}s {sources[dest]} and {fixture.source} would both land at {dest}"
            )
        sources[dest] = fixture.source
        placed[dest] = work.copy_file(fixture.source, dest)
    return placed


def _copy_skill(work: WorkTree, skill: Path) -> Snapshot:
    """A single-file skill is copied as it is; a SKILL.md brings its whole directory."""
    tree = _skill_tree(skill)
    if tree is not None:
        if not (tree / _SKILL_FILE).is_file():
            raise SandboxError(f"skill directory {skill} has no {_SKILL_FILE}")
        return work.copy_tree(tree, f"{SKILL_DIR}/{tree.name}")
    dest = repo_path(f"{SKILL_DIR}/{skill.name}")
    return {dest: work.copy_file(skill, dest)}
