"""Finding suite files under a directory and telling which format each one is in.

The walk is sorted (deterministic), skips hidden directories, fixture trees and
dependency caches (unless Warden's `src/**/*.eval.ts` declares one, `base/` say, as a
category), and never follows a symlinked directory. A file is recognised by its
keys; a file with some of a format's distinguishing keys is that format (and an error if
it then fails validation), a file with none of them is not a suite and is ignored.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from assay.core.paths import is_inside, real_path
from assay.errors import SourcePosition
from assay.suites.document import Document, Problems
from assay.suites.go_json import go_fold

__all__ = ["DEFAULTS_FILE_NAMES", "FileKind", "SKIPPED_DIR_NAMES", "classify", "walk_suite_files"]

SKIPPED_DIR_NAMES = frozenset({"fixtures", "base", "skills", "node_modules", "__pycache__"})
"""Directories holding fixtures, skills or dependencies, never suites."""
SUITE_SUFFIXES = (".json", ".yaml", ".yml")
DEFAULTS_FILE_NAMES = ("_suite.yaml", "_suite.yml")
"""A Warden category's defaults for the JSON scenarios beside it."""

FileKind = Literal[
    "review-yaml",
    "review-json",
    "verification",
    "rubric-manifest",
    "rubric-dir",
    "task-suite",
    "category-defaults",
]

_MANIFEST_KEYS = {"$SCHEMA", "NAME", "DESCRIPTION", "CASES"}
"""A manifest's top-level keys, folded (`go_fold`)."""


def walk_suite_files(top: Path, problems: Problems) -> list[Path]:
    """Every `.json` / `.yaml` / `.yml` file under `top` that could hold a suite, sorted."""
    real_top = Path(os.path.realpath(top))
    found: list[Path] = []
    pending = [top]
    declared: dict[Path, frozenset[str]] = {}
    while pending:
        directory = pending.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            problems.error(
                f"cannot read directory: {exc.strerror or exc}", SourcePosition(directory)
            )
            continue
        subdirectories = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIR_NAMES or entry.name in _declared_categories(
                    Path(directory), declared
                ):
                    subdirectories.append(path)
            elif entry.name.lower().endswith(SUITE_SUFFIXES):
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


def _declared_categories(directory: Path, cache: dict[Path, frozenset[str]]) -> frozenset[str]:
    """The categories `<directory>/src/**/*.eval.ts` declares: a `base/` Warden declares as
    a category holds its scenarios, not a rubric base (its warnings are reported at load)."""
    if directory not in cache:
        from assay.suites.warden_evalts import EVAL_TS_DIR, read_eval_declarations

        names: frozenset[str] = frozenset()
        if (directory / EVAL_TS_DIR).is_dir():
            declarations, _ = read_eval_declarations(directory)
            names = frozenset(d.category for d in declarations if d.category)
        cache[directory] = names
    return cache[directory]


def classify(doc: Document) -> FileKind | None:
    """The format `doc` is written in, or None when it is not a suite file at all."""
    data, name = doc.data, doc.path.name.lower()
    if doc.path.suffix.lower() in (".yaml", ".yml"):
        if name in DEFAULTS_FILE_NAMES:
            return "category-defaults"
        if isinstance(data, dict) and ("skill" in data or "evals" in data):
            return "review-yaml"
        return None
    if not isinstance(data, dict):
        return None
    if name == "metadata.json" and (
        "RUBRIC" in _folded_keys(data) or (doc.path.parent / "input.diff").exists()
    ):
        return "rubric-dir"
    if any(isinstance(key, str) and go_fold(key) == "TASKS" for key in data):
        return "task-suite"  # PVYai's Go decoder matches keys case-insensitively
    if "CASES" in _folded_keys(data) and _looks_like_manifest(data):
        return "rubric-manifest"  # Cassandra's Go decoder matches keys case-insensitively too
    if "candidate" in data or "expect" in data:
        return "verification"
    if "given" in data or "should_find" in data:
        return "review-json"
    return None


def _folded_keys(data: dict) -> set[str]:
    return {go_fold(key) for key in data if isinstance(key, str)}


def _looks_like_manifest(data: dict) -> bool:
    if _folded_keys(data) <= _MANIFEST_KEYS:
        return True
    lists = [v for k, v in data.items() if isinstance(k, str) and go_fold(k) == "CASES"]
    return any(
        isinstance(c, dict) and {"RUBRIC", "FIXTURE_PATH"} & _folded_keys(c)
        for cases in lists
        if isinstance(cases, list)
        for c in cases
    )


def _inside(path: Path, real_top: Path) -> bool:
    return is_inside(real_path(path), real_top, resolved=True)
