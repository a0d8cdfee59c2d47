"""Review and verify sandboxes, Warden's recipe: skill and supporting files on `main`,
the fixture files committed on `eval` (a child of main), HEAD = eval.

The skill lands where Warden's `setupEvalRepo` puts it: a flat skill at
`.warden/skills/<file>`, a `SKILL.md` with its whole directory at `.warden/skills/<dir>/`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from assay.errors import SandboxError
from assay.sandbox.added_diff import added_files_diff
from assay.sandbox.built_sandbox import Sandbox
from assay.sandbox.objects import Snapshot
from assay.sandbox.repo import BASE_BRANCH, EVAL_BRANCH, RepoBuilder, branch_diff, changed_paths
from assay.sandbox.worktree import WorkTree, repo_path
from assay.suites.case import CaseKind, FixtureFile, ReviewSpec, VerifySpec

__all__ = ["SKILL_DIR", "build_review_sandbox"]

SKILL_DIR = ".warden/skills"
"""Where skills land in the repo (on main, so never in the diff)."""
_SKILL_FILE = "SKILL.md"


def build_review_sandbox(
    spec: ReviewSpec | VerifySpec, repo: Path, *, kind: CaseKind, skill: Path | None
) -> Sandbox:
    """Build the review/verify repo in the empty directory `repo`."""
    builder = RepoBuilder(
        repo, head_branch=EVAL_BRANCH, repository=spec.repository, keep_contents=True
    )
    base: Snapshot = {}
    if skill is not None:
        base.update(_copy_skill(builder.work, skill))
    base.update(_place(builder.work, spec.supporting_files, what="supporting file"))
    head = dict(base)
    head.update(_place(builder.work, spec.files, what="fixture file"))
    main = builder.commit(base, message="assay: skill and supporting files")
    tip = builder.commit(head, parents=[main], message="assay: fixture files")
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
    if skill.is_dir():
        if not (skill / _SKILL_FILE).is_file():
            raise SandboxError(f"skill directory {skill} has no {_SKILL_FILE}")
        return work.copy_tree(skill, f"{SKILL_DIR}/{skill.name}")
    if (skill.parent / _SKILL_FILE).is_file():  # Warden: a directory skill, whatever file named
        return work.copy_tree(skill.parent, f"{SKILL_DIR}/{skill.parent.name}")
    dest = repo_path(f"{SKILL_DIR}/{skill.name}")
    return {dest: work.copy_file(skill, dest)}
