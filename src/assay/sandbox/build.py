"""Building and removing sandboxes: one private directory per sandbox, one builder per kind."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import assert_never

from assay.errors import ConfigError, SandboxError
from assay.sandbox.built_sandbox import Sandbox
from assay.sandbox.review import build_review_sandbox
from assay.sandbox.rubric import build_rubric_sandbox
from assay.sandbox.task import build_task_sandbox
from assay.suites.case import Case, ReviewSpec, RubricSpec, TaskSpec, VerifySpec

__all__ = ["build_sandbox", "private_work_root", "remove_sandbox"]

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def build_sandbox(case: Case, *, parent: Path, skill_override: Path | None = None) -> Sandbox:
    """Build `case`'s git sandbox in a fresh 0700 directory under `parent`.

    The repo is `<dir>/repo` (Sandbox.path); `<dir>/scratch` is created empty. Raises
    SandboxError (with nothing left behind) when the sandbox cannot be built.
    """
    prefix = "assay-" + _UNSAFE_NAME.sub("-", case.name).strip("-")[:40] + "-"
    try:
        root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))  # mkdtemp: mode 0700
    except OSError as exc:
        raise SandboxError(f"cannot create a sandbox in {parent}: {exc.strerror}") from None
    try:
        repo = root / "repo"
        repo.mkdir()
        (root / "scratch").mkdir(mode=0o700)
        return _build(case, repo, skill_override=skill_override)
    except OSError as exc:
        _remove_tree(root)
        where = f": {exc.filename}" if exc.filename else ""
        raise SandboxError(f"cannot build the sandbox: {exc.strerror}{where}") from None
    except BaseException:
        _remove_tree(root)
        raise


def _build(case: Case, repo: Path, *, skill_override: Path | None) -> Sandbox:
    spec = case.spec
    if isinstance(spec, ReviewSpec | VerifySpec):
        skill = skill_override if skill_override is not None else spec.skill
        return build_review_sandbox(spec, repo, kind=case.kind, skill=skill)
    if isinstance(spec, RubricSpec):
        return build_rubric_sandbox(spec, repo, staging=repo.parent / "base-unpacked")
    if isinstance(spec, TaskSpec):
        return build_task_sandbox(spec, repo)
    assert_never(spec)


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
        return Path(tempfile.mkdtemp(prefix="assay-run-", dir=work_root))
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
