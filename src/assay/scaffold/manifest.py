"""Adding a case to a Cassandra suite manifest, read the way `assay run` reads it.

An existing manifest goes through the suite loader's own steps: `read_document`, the
format `discover.classify` gives it, and the `RubricManifest` model with its Go decoding
(`upstream/go/json.py`: keys in any case, two spellings of one key decoded in turn into
the same field, `null` as the zero value). So the cases the scaffolder sees, and the ids it
checks the new one against, are the ones the loader sees, and a file the loader cannot
read is refused at its line and left as it is. The manifest is written back as the
loader read it: each case once, its keys spelt as the fields are, nulls left out; keys
assay does not know are kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import ConfigError, SourcePosition
from assay.suites.discover import classify
from assay.suites.document import Document, read_document
from assay.suites.validation import describe
from assay.suites.wire_rubric import RubricCase, RubricManifest
from assay.upstream.go.json import go_struct

__all__ = ["merge_manifest"]

_CANNOT = "cannot add a case to this suite manifest"
_LOADABLE_ANYWAY = frozenset({"scaffold_stub", "scaffold_draft", "extra_forbidden"})
"""Model errors that do not stop the merge: a case an earlier scaffold left with its TODO
rubric or an unedited drafted one (the next scaffold is often run before it is filled
in), and keys assay does not know (the loader only warns about them)."""


def merge_manifest(
    manifest: Path, entry: dict[str, Any], *, suite_name: str, force: bool
) -> tuple[dict[str, Any], str | None]:
    """`manifest`'s content with `entry` added (or replacing the case of its id under
    `force`).

    Returns the document and a conflict (a case `assay run` gives the same id, without
    `force`) or None. A new manifest is created when none exists; one the loader cannot
    read as a manifest raises ConfigError at its line.
    """
    if not manifest.exists():
        return {"name": suite_name, "description": "", "cases": [entry]}, None
    doc = _read_manifest(manifest)
    document = go_struct(doc.data, RubricManifest.model_fields, object_lists=("cases",))
    cases = [go_struct(case, RubricCase.model_fields) for case in document.get("cases", [])]
    same = [i for i, case in enumerate(cases) if _case_id(case, manifest.parent) == entry["id"]]
    if same and not force:
        line = doc.location(("cases", same[0])).line
        named = "" if cases[same[0]].get("id") else " (its fixture directory's name: it has no id)"
        return document, f"{manifest.name}:{line}: case id {entry['id']!r} already exists{named}"
    if same:
        cases[same[0]] = entry
        cases = [case for i, case in enumerate(cases) if i not in same[1:]]
    else:
        cases.append(entry)
    document["cases"] = cases
    _check_writable(document, manifest)
    return document, None


def _read_manifest(manifest: Path) -> Document:
    """The manifest as the loader reads it; ConfigError (at the line) for what it cannot."""
    try:
        doc = read_document(manifest)
    except ConfigError as exc:
        raise ConfigError(f"{_CANNOT}: {exc.message}", exc.location) from None
    if classify(doc) != "rubric-manifest":
        raise ConfigError(
            "cannot add a case: this file is not a rubric suite manifest (`assay run` does "
            "not read it as one: it needs a `cases` list of cases with a `rubric` and a "
            "`fixture_path`); name another --category, or move the file",
            SourcePosition(manifest),
        )
    try:
        RubricManifest.model_validate(doc.data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        for error in (e for e in errors if e["type"] not in _LOADABLE_ANYWAY):
            loc = tuple(error["loc"])
            raise ConfigError(f"{_CANNOT}: {describe(error, loc)}", doc.location(loc)) from None
    return doc


def _check_writable(document: dict[str, Any], manifest: Path) -> None:
    """Python reads `1e400` as infinity (and takes `NaN`), which it would write back as
    `Infinity` / `NaN`: no JSON, and Go refuses the file."""
    try:
        json.dumps(document, allow_nan=False)
    except ValueError:
        raise ConfigError(
            f"{_CANNOT}: it holds NaN or a number too large for a float (such as 1e400), "
            "which cannot be written back as JSON; write it as a string",
            SourcePosition(manifest),
        ) from None


def _case_id(case: Mapping[str, Any], manifest_dir: Path) -> str:
    """The name the loader gives a case (`suites/rubric.py`): its `id`, else the name of its
    fixture directory, which `fixture_path` names relative to the manifest."""
    if case.get("id"):
        return str(case["id"])
    fixture_path = str(case.get("fixture_path", "")).replace("\\", "/")
    return Path(os.path.realpath(manifest_dir / fixture_path)).name
