"""Building and removing sandboxes: one private directory per sandbox, one builder per kind.

`SANDBOX_BUILDERS` is the sandbox's part of each case kind: the runner's kind registry
(`runner/kinds.py: KINDS`) takes every kind's builder from it and hands it back to
`build_sandbox`, which falls back to this table for callers that have no kind registry at
hand (the dry run's helpers, tests). The sandbox never asks a case's spec type itself.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from assay.errors import ConfigError, SandboxError
from assay.suites.case import Case, CaseKind, ReviewSpec, RubricSpec, TaskSpec, VerifySpec
from assay.suites.warden_skill import skill_at_run
from assay.workspace.built_sandbox import Sandbox
from assay.workspace.review import build_review_sandbox
from assay.workspace.rubric import build_rubric_sandbox
from assay.workspace.task import build_task_sandbox

__all__ = [
    "SANDBOX_BUILDERS",
    "SandboxBuilder",
    "build_sandbox",
    "private_work_root",
    "remove_sandbox",
]

SandboxBuilder = Callable[[Case, Path, Path | None], Sandbox]
"""`builder(case, repo, skill_override)`: the case's git repo, built in the empty directory
`repo` (its sibling `scratch/` exists; other free names beside it may be used to stage)."""

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def build_sandbox(
    case: Case,
    *,
    parent: Path,
    skill_override: Path | None = None,
    builder: SandboxBuilder | None = None,
) -> Sandbox:
    """Build `case`'s git sandbox in a fresh 0700 directory under `parent`.

    The repo is `<dir>/repo` (Sandbox.path); `<dir>/scratch` is created empty. `builder`
    is the case kind's (the runner passes its kind registry's); by default the one
    `SANDBOX_BUILDERS` holds for `case.kind`. Raises SandboxError (with nothing left
    behind) when the sandbox cannot be built.
    """
    build = builder if builder is not None else SANDBOX_BUILDERS[case.kind]
    prefix = "assay-" + _UNSAFE_NAME.sub("-", case.name).strip("-")[:40] + "-"
    try:
        root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))  # mkdtemp: mode 0700
    except OSError as exc:
        raise SandboxError(f"cannot create a sandbox in {parent}: {exc.strerror}") from None
    try:
        repo = root / "repo"
        repo.mkdir()
        (root / "scratch").mkdir(mode=0o700)
        return build(case, repo, skill_override)
    except OSError as exc:
        _remove_tree(root)
        where = f": {exc.filename}" if exc.filename else ""
        raise SandboxError(f"cannot build the sandbox: {exc.strerror}{where}") from None
    except BaseException:
        _remove_tree(root)
        raise


def _review_sandbox(case: Case, repo: Path, skill_override: Path | None) -> Sandbox:
    spec = case.spec
    if not isinstance(spec, ReviewSpec | VerifySpec):
        raise _miswired(case)
    skill = skill_at_run(spec.skill, skill_override)
    return build_review_sandbox(spec, repo, kind=case.kind, skill=skill, name=case.name)


def _rubric_sandbox(case: Case, repo: Path, skill_override: Path | None) -> Sandbox:
    # A rubric case's skill is the reviewer's instructions, not part of its repo.
    if not isinstance(spec := case.spec, RubricSpec):
        raise _miswired(case)
    return build_rubric_sandbox(spec, repo, staging=repo.parent / "base-unpacked")


def _task_sandbox(case: Case, repo: Path, skill_override: Path | None) -> Sandbox:
    if not isinstance(spec := case.spec, TaskSpec):
        raise _miswired(case)
    return build_task_sandbox(spec, repo)


def _miswired(case: Case) -> TypeError:
    # A builder handed a case of another kind: the kind registry is wired wrongly.
    return TypeError(f"{case.id}: no {case.kind} sandbox for a {type(case.spec).__name__}")


SANDBOX_BUILDERS: Mapping[CaseKind, SandboxBuilder] = MappingProxyType(
    {
        "review": _review_sandbox,
        "verify": _review_sandbox,
        "rubric": _rubric_sandbox,
        "task": _task_sandbox,
    }
)
"""Each case kind's builder: a review and a verify case build the same repo (main: skill and
supporting files; eval: the fixture files)."""


def remove_sandbox(sandbox: Sandbox) -> None:
    """Remove the sandbox's private directory and everything in it, whatever the agent left."""
    _remove_tree(sandbox.root)


def private_work_root(work_root: Path | None) -> Path:
    """A fresh 0700 directory for one run's sandboxes (inside `work_root` when given).

    Raises ConfigError when `work_root` cannot hold it (the user chose it).
    """
    try:
        if work_root is not None:
            work_root.mkdir(parents=True, exist_ok=True)
        # Absolute: every path under it is handed to agents that run in another directory.
        return Path(tempfile.mkdtemp(prefix="assay-run-", dir=work_root)).absolute()
    except OSError as exc:
        raise ConfigError(
            f"cannot create a work directory in {work_root or tempfile.gettempdir()}: "
            f"{exc.strerror}"
        ) from None


def _remove_tree(path: Path) -> None:
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except OSError:
        # The agent may leave read-only or unreadable directories behind (as a non-root
        # user those block deletion): open every directory up, then try once more.
        _make_directories_writable(path)
        shutil.rmtree(path)


def _make_directories_writable(path: Path) -> None:
    pending = [str(path)]
    while pending:
        directory = pending.pop()
        try:
            os.chmod(directory, 0o700)
            with os.scandir(directory) as listing:
                pending.extend(e.path for e in listing if e.is_dir(follow_symlinks=False))
        except OSError:
            continue
