"""Writing a scaffold all-or-nothing.

Every file is first written into a hidden staging directory inside the destination root
(same file system, so each move is a rename). Only when all of them are staged are they
moved into place; if a move fails, the ones already moved are taken back out and any
file they replaced is restored. Existing files are never replaced without `force`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay._util.paths import resolve_inside
from assay.errors import ConfigError

__all__ = ["WritePlan", "write_plan"]

_STAGING_PREFIX = ".assay-scaffold-"


@dataclass(frozen=True)
class WritePlan:
    """Files to write under `root`, by root-relative POSIX path."""

    root: Path
    files: Mapping[str, bytes]
    owned_dirs: tuple[str, ...] = ()
    """Directories that belong to this one case: writing into one that already holds
    anything is a conflict, and `force` replaces it wholesale (no stale files survive)."""
    updated_files: frozenset[str] = frozenset()
    """Files expected to exist already and be updated in place (a suite manifest the
    caller has merged into); they are never a conflict."""
    conflicts: tuple[str, ...] = ()
    """Conflicts the caller found in file contents (a duplicate manifest id)."""


@dataclass
class _Transaction:
    staging: Path
    moved_in: list[Path] = field(default_factory=list)
    backups: list[tuple[Path, Path]] = field(default_factory=list)
    """(backup, original location) of everything moved aside."""
    created_dirs: list[Path] = field(default_factory=list)


def write_plan(plan: WritePlan, *, force: bool) -> list[Path]:
    """Write every file of `plan` or none; return the written paths in plan order.

    Raises ConfigError listing the conflicts when something exists and `force` is off,
    and ConfigError when the file system refuses (after undoing everything).
    """
    targets = {rel: resolve_inside(plan.root, rel) for rel in plan.files}
    owned = {rel: resolve_inside(plan.root, rel) for rel in plan.owned_dirs}
    conflicts = list(plan.conflicts) + _existing(plan, targets, owned)
    if conflicts and not force:
        raise ConfigError(
            f"refusing to overwrite existing files under {plan.root}: {', '.join(conflicts)} "
            "(pass --force to replace them); nothing was written"
        )
    created_root = _make_dirs(Path(os.path.realpath(plan.root)))
    try:
        staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=os.path.realpath(plan.root)))
    except OSError as exc:
        _remove_dirs(created_root)
        raise ConfigError(f"cannot write under {plan.root}: {exc.strerror}") from None
    transaction = _Transaction(staging, created_dirs=created_root)
    try:
        staged = _stage(plan.files, staging)
        for number, directory in enumerate(owned.values()):
            if directory.exists() and force:
                _move_aside(directory, staging / f"backup-dir-{number}", transaction)
        for number, (rel, target) in enumerate(targets.items()):
            transaction.created_dirs += _make_dirs(target.parent)
            if target.exists() or target.is_symlink():
                _move_aside(target, staging / f"backup-file-{number}", transaction)
            os.replace(staged[rel], target)
            transaction.moved_in.append(target)
    except OSError as exc:
        _roll_back(transaction)
        where = f" ({exc.filename})" if exc.filename else ""
        raise ConfigError(
            f"cannot write the scaffold under {plan.root}: {exc.strerror}{where}; "
            "nothing was written"
        ) from None
    except BaseException:
        _roll_back(transaction)
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return list(targets.values())


def _existing(plan: WritePlan, targets: dict[str, Path], owned: dict[str, Path]) -> list[str]:
    found = [
        f"{rel}/ (already holds files)"
        for rel, path in owned.items()
        if path.is_dir() and any(path.iterdir())
    ]
    inside_owned = tuple(path for path in owned.values() if path.is_dir())
    for rel, path in targets.items():
        if rel in plan.updated_files or any(d in path.parents for d in inside_owned):
            continue
        if path.exists() or path.is_symlink():
            found.append(rel)
    return found


def _stage(files: Mapping[str, bytes], staging: Path) -> dict[str, Path]:
    staged = {}
    for number, (rel, content) in enumerate(files.items()):
        path = staging / f"new-{number}"
        path.write_bytes(content)
        staged[rel] = path
    return staged


def _move_aside(path: Path, backup: Path, transaction: _Transaction) -> None:
    os.replace(path, backup)
    transaction.backups.append((backup, path))


def _make_dirs(directory: Path) -> list[Path]:
    """Create `directory` and its missing parents; return the ones created, outermost first."""
    missing = []
    current = directory
    while not current.exists():
        missing.append(current)
        current = current.parent
    missing.reverse()
    for path in missing:
        path.mkdir()
    return missing


def _roll_back(transaction: _Transaction) -> None:
    for path in reversed(transaction.moved_in):
        path.unlink(missing_ok=True)
    for backup, original in reversed(transaction.backups):
        if original.is_dir() and not original.is_symlink():
            shutil.rmtree(original, ignore_errors=True)
        os.replace(backup, original)
    shutil.rmtree(transaction.staging, ignore_errors=True)
    _remove_dirs(transaction.created_dirs)


def _remove_dirs(created: list[Path]) -> None:
    for directory in reversed(created):
        try:
            directory.rmdir()
        except OSError:
            pass
