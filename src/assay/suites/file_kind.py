"""Which of assay's formats a suite file is written in, from its name and its data.

PVYai's and Cassandra's files are recognised by their keys as their Go decoders match
them (case-insensitively, `upstream.go.json.go_keys`); Warden's and assay's by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from assay.upstream.go.json import go_keys, go_values

__all__ = ["DEFAULTS_FILE_NAMES", "FileKind", "file_kind"]

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


def file_kind(path: Path, data: object) -> FileKind | None:
    """The format of the file at `path` holding `data`, or None when it is no suite file."""
    name = path.name.lower()
    if path.suffix.lower() in (".yaml", ".yml"):
        if name in DEFAULTS_FILE_NAMES:
            return "category-defaults"
        if isinstance(data, dict) and ("skill" in data or "evals" in data):
            return "review-yaml"
        return None
    if not isinstance(data, dict):
        return None
    if name == "metadata.json" and (
        "RUBRIC" in go_keys(data) or (path.parent / "input.diff").exists()
    ):
        return "rubric-dir"
    if "TASKS" in go_keys(data):
        return "task-suite"  # PVYai's Go decoder matches keys case-insensitively
    if "CASES" in go_keys(data) and _looks_like_manifest(data):
        return "rubric-manifest"  # Cassandra's Go decoder matches keys case-insensitively too
    if "candidate" in data or "expect" in data:
        return "verification"
    if "given" in data or "should_find" in data:
        return "review-json"
    return None


def _looks_like_manifest(data: dict) -> bool:
    if go_keys(data) <= _MANIFEST_KEYS:
        return True
    lists = go_values(data, "CASES")
    return any(
        isinstance(c, dict) and {"RUBRIC", "FIXTURE_PATH"} & go_keys(c)
        for cases in lists
        if isinstance(cases, list)
        for c in cases
    )
