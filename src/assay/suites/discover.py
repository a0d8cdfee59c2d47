"""Finding suite files under a directory and telling which format each one is in.

The walk is sorted (deterministic), skips hidden files and directories, fixture trees and
dependency caches, and never follows a symlinked directory. In a Warden eval root (one
with `src/**/*.eval.ts`) it reads what Warden reads as Warden names it: `src/` is code,
never walked; a root `*.yaml` / `*.yml` and a declared category's `*.json` count by their
exact suffix, dotfiles included; a declared category is walked even when named like a
fixture tree (`base/`) or hidden. Everything else follows the general rule. A file is
recognised by its keys; a file with some of a format's distinguishing keys is that format
(and an error if it then fails validation), a file with none of them is not a suite and
is ignored.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.core.paths import is_inside, real_path
from assay.errors import SourcePosition
from assay.suites.document import Document, Problems
from assay.suites.file_kind import FileKind, file_kind
from assay.upstream.warden.evalts import EVAL_TS_DIR, eval_ts_files, read_eval_declarations
from assay.upstream.warden.paths import node_join

__all__ = ["SKIPPED_DIR_NAMES", "classify", "walk_suite_files"]

SKIPPED_DIR_NAMES = frozenset({"fixtures", "base", "skills", "node_modules", "__pycache__"})
"""Directories holding fixtures, skills or dependencies, never suites."""
SUITE_SUFFIXES = (".json", ".yaml", ".yml")


def walk_suite_files(top: Path, problems: Problems) -> list[Path]:
    """Every `.json` / `.yaml` / `.yml` file under `top` that could hold a suite, sorted."""
    real_top = Path(os.path.realpath(top))
    found: list[Path] = []
    layouts: dict[Path, frozenset[str] | None] = {}
    pending: list[tuple[Path, _Warden | None]] = [(top, None)]
    while pending:
        directory, warden = pending.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            problems.error(
                f"cannot read directory: {exc.strerror or exc}", SourcePosition(directory)
            )
            continue
        if any(e.name == EVAL_TS_DIR and _is_dir(e) for e in entries):
            declared = _warden_layout(directory, layouts)
            if declared is not None:
                warden = _Warden(directory, declared)
        place = warden.place(directory) if warden else None
        subdirectories = []
        for entry in entries:
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                if _walked(entry.name, place, warden):
                    subdirectories.append((path, warden))
            elif _suite_name(entry.name, place, warden):
                try:
                    is_file = entry.is_file()
                except OSError as exc:  # a symlink loop
                    problems.warn(f"skipped: {exc.strerror or exc}", SourcePosition(path))
                    continue
                if not is_file:  # a FIFO would block the load, a device never end
                    problems.warn("skipped: not a regular file", SourcePosition(path))
                    continue
                if entry.is_symlink() and not _inside(path, real_top):
                    problems.warn(f"not followed: a symlink to outside {top}", SourcePosition(path))
                    continue
                found.append(path)
        pending.extend(reversed(subdirectories))
    return sorted(found, key=lambda p: p.relative_to(top).parts)


class _Warden:
    """A Warden eval root met on the walk, and the category paths its eval.ts declare."""

    def __init__(self, root: Path, declared: frozenset[str]) -> None:
        self.root = root
        self.declared = declared

    def place(self, directory: Path) -> str | None:
        """`directory` relative to the eval root (`.` for the root itself), POSIX."""
        try:
            return directory.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def leads_to_category(self, place: str) -> bool:
        return any(d == place or d.startswith(place + "/") for d in self.declared)


def _walked(name: str, place: str | None, warden: _Warden | None) -> bool:
    if warden is not None and place is not None:
        if place == ".":
            if name == EVAL_TS_DIR:
                return False  # Warden's code (its own test fixtures included), not suites
            if warden.leads_to_category(name):
                return True
        elif warden.leads_to_category(f"{place}/{name}"):
            return True
    return not name.startswith(".") and name not in SKIPPED_DIR_NAMES


def _suite_name(name: str, place: str | None, warden: _Warden | None) -> bool:
    """Whether a file named `name` could be a suite: Warden's exact-suffix rule where
    Warden reads (root YAML, a declared category's JSON), the general rule elsewhere."""
    if warden is not None and place == ".":
        if name.lower().endswith(_YAML_SUFFIXES):
            return name.endswith(_YAML_SUFFIXES)
    elif warden is not None and place in warden.declared:
        if name.lower().endswith(".json"):
            return name.endswith(".json")
    return not name.startswith(".") and name.lower().endswith(SUITE_SUFFIXES)


_YAML_SUFFIXES = (".yaml", ".yml")


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _warden_layout(
    directory: Path, cache: dict[Path, frozenset[str] | None]
) -> frozenset[str] | None:
    """None when `directory` is no Warden eval root; else the category paths its
    `src/**/*.eval.ts` declare, relative to it (`bench/perf` for a nested one). A `base/`
    Warden declares as a category holds its scenarios, not a rubric base (the eval.ts
    warnings are reported at load)."""
    if directory not in cache:
        cache[directory] = None
        if eval_ts_files(directory):
            declarations, _ = read_eval_declarations(directory)
            cache[directory] = frozenset(
                os.path.relpath(node_join(directory, d.category), directory)
                for d in declarations
                if d.category
            )
    return cache[directory]


def classify(doc: Document) -> FileKind | None:
    """The format `doc` is written in, or None when it is not a suite file at all."""
    return file_kind(doc.path, doc.data)


def _inside(path: Path, real_top: Path) -> bool:
    return is_inside(real_path(path), real_top, resolved=True)
