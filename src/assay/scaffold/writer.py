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
    try:
        links = _symlinks_on_the_way(plan.root, [*plan.files, *plan.owned_dirs])
    except OSError as exc:  # e.g. a directory on the way that may not be searched
        raise _cannot_write(plan.root, exc) from None
    if links:
        # Writing through one would replace a file, or delete a directory, it points at.
        raise ConfigError(
            f"refusing to write through symlinks under {plan.root}: {', '.join(links)} "
            "(replace each with a real file or directory, or remove it); nothing was written"
        )
    try:
        conflicts = list(plan.conflicts) + _existing(plan, targets, owned)
    except OSError as exc:  # e.g. a directory on the way that may not be searched
        raise _cannot_write(plan.root, exc) from None
    if conflicts and not force:
        raise ConfigError(
            f"refusing to overwrite existing files under {plan.root}: {', '.join(conflicts)} "
            "(pass --force to replace them); nothing was written"
        )
    transaction = _open_transaction(plan.root)
    staging = transaction.staging
    writing = ""  # the root-relative path being written, for the error message
    try:
        staged = _stage(plan.files, staging)
        for number, (rel, directory) in enumerate(owned.items()):
            if directory.exists() and force:
                writing = rel
                _move_aside(directory, staging / f"backup-dir-{number}", transaction)
        for number, (rel, target) in enumerate(targets.items()):
            writing = rel
            _make_dirs(target.parent, transaction.created_dirs)
            if target.exists() or target.is_symlink():
                _move_aside(target, staging / f"backup-file-{number}", transaction)
            os.replace(staged[rel], target)
            transaction.moved_in.append(target)
    except OSError as exc:
        _roll_back(transaction)
        where = f" ({writing})" if writing else ""
        raise ConfigError(
            f"cannot write the scaffold under {plan.root}: {exc.strerror}{where}; "
            "nothing was written"
        ) from None
    except BaseException:
        _roll_back(transaction)
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return list(targets.values())


def _open_transaction(root: Path) -> _Transaction:
    """Create the root (and its missing parents) and the staging directory inside it.

    Raises ConfigError, leaving nothing behind, when the file system refuses: a path
    under a regular file, a read-only or pseudo file system (/proc, /sys).
    """
    real_root = Path(os.path.realpath(root))
    created: list[Path] = []
    try:
        _make_dirs(real_root, created)
        staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=real_root))
    except OSError as exc:
        _remove_dirs(created)
        raise _cannot_write(root, exc) from None
    return _Transaction(staging, created_dirs=created)


def _cannot_write(root: Path, exc: OSError) -> ConfigError:
    return ConfigError(f"cannot write under {root}: {exc.strerror}")


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


def _symlinks_on_the_way(root: Path, rels: list[str]) -> list[str]:
    """Each root-relative path, or directory on the way to one, that is a symlink."""
    found: set[str] = set()
    for rel in rels:
        parts = rel.split("/")
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            if (root / prefix).is_symlink():
                found.add(prefix)
                break
    return sorted(found)


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


def _make_dirs(directory: Path, created: list[Path]) -> None:
    """Create `directory` and its missing parents, outermost first, adding each to `created`
    as it is made (so a failure half-way still leaves a list of what to remove)."""
    missing = []
    current = directory
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        path.mkdir()
        created.append(path)


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
