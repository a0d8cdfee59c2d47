"""`--affected-by REF`: only the cases whose inputs changed since REF.

A case's inputs are the files it is made of: its suite file, its fixtures (the files and
supporting files of a review or verify case, a rubric case's diff and base, a task's
workspace directory) and its skill. The changed files are `git diff --name-only
REF...HEAD` in the repository holding the eval root (through `isolation/git.py`: no user
config, hooks or signing). A changed path that matches an `affects_all` glob
(`[tool.assay] affects_all`, `ASSAY_AFFECTS_ALL`: the agent's code, its prompts, assay's
config) selects every case. The reason goes into the report (`run.selection`).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import ConfigError
from assay.isolation.git import run_git
from assay.runner.kinds import kind_of
from assay.suites.case import Case

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.suites.config import AssayConfig

__all__ = [
    "Selection",
    "affected_selection",
    "case_inputs",
    "changed_files",
    "repository_of",
    "select_affected",
]


@dataclass(frozen=True)
class Selection:
    cases: tuple[Case, ...]
    reason: str
    """One line for the report and the PR comment."""


def case_inputs(case: Case) -> list[tuple[str, Path]]:
    """(kind, path) of every file or directory the case is made of."""
    return [("suite file", case.source_path), *kind_of(case).inputs(case.spec)]


def repository_of(root: Path) -> Path:
    """The work tree holding `root` (the nearest directory with a `.git`)."""
    here = Path(os.path.realpath(root))
    for directory in (here, *here.parents):
        if (directory / ".git").exists():
            return directory
    raise ConfigError(f"--affected-by: {root} is not inside a git repository")


def changed_files(repository: Path, ref: str) -> list[str]:
    """Repository-relative paths changed between the merge base of `ref` and HEAD."""

    if ref.startswith("-"):
        raise ConfigError(f"--affected-by {ref!r}: a ref cannot start with '-'")
    done = run_git(["diff", "--name-only", "-z", f"{ref}...HEAD", "--"], cwd=repository)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"git exited {done.returncode}"
        raise ConfigError(f"--affected-by {ref}: {detail}")
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [name for name in names if name]


def affected_selection(
    settings: RunSettings, cases: Sequence[Case], config: AssayConfig | None
) -> Selection:
    """`--affected-by`'s selection among `cases` (`run` and `check` alike), in the
    repository holding the eval root."""
    assert settings.affected_by is not None
    root = settings.root or (config.root if config is not None else None) or Path.cwd()
    return select_affected(
        cases, root=root, ref=settings.affected_by, affects_all=settings.affects_all
    )


def select_affected(
    cases: Sequence[Case], *, root: Path, ref: str, affects_all: Sequence[str]
) -> Selection:
    """The cases `ref...HEAD` touches, or all of them when an `affects_all` glob matched."""
    repository = repository_of(root)
    changed = changed_files(repository, ref)
    for name in changed:
        for pattern in affects_all:
            if fnmatch.fnmatchcase(name, pattern):
                return Selection(
                    tuple(cases),
                    f"all {len(cases)} case(s): {name} changed since {ref} "
                    f"(matches affects_all {pattern})",
                )
    changed_paths = [Path(os.path.realpath(repository / name)) for name in changed]
    chosen: list[Case] = []
    kinds: dict[str, int] = {}
    for case in cases:
        why = _why_affected(case, changed_paths)
        if why is not None:
            chosen.append(case)
            kinds[why] = kinds.get(why, 0) + 1
    if not chosen:
        return Selection((), f"no cases affected by changes since {ref}")
    detail = ", ".join(f"{kind}: {count}" for kind, count in sorted(kinds.items()))
    reason = f"affected by {ref}: {len(chosen)} of {len(cases)} case(s)"
    return Selection(tuple(chosen), f"{reason} ({detail})" if detail else reason)


def _why_affected(case: Case, changed: Sequence[Path]) -> str | None:
    for kind, path in case_inputs(case):
        real = Path(os.path.realpath(path))
        for name in changed:
            if name == real or real in name.parents:
                return f"{kind} changed"
    return None
