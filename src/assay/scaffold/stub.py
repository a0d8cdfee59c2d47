"""The documents a scaffold writes: a Warden JSON scenario, or a Cassandra manifest entry.

Both carry a `TODO:` placeholder where only a person can say what the case is about (the
finding the reviewer must report, the rubric the judge applies). The loaders warn about
that placeholder (`--strict` refuses it), and an untouched stub fails when it runs, as it
does in Warden: it never passes by accident.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from assay.scaffold.change import Change, Side, SkippedFile

__all__ = [
    "MAX_BODY_CHARS",
    "TODO_FINDING",
    "TODO_RUBRIC",
    "dump_json",
    "provenance",
    "review_scenario",
    "rubric_entry",
]

TODO_FINDING = (
    "TODO: replace with the exact finding the reviewer must report "
    "(what is wrong, where, and why it matters)"
)
TODO_RUBRIC = "TODO: describe what a good review of this diff must catch, and what it must not flag"
MAX_BODY_CHARS = 4000
"""Pull request descriptions can be huge (templates, logs); the stub keeps the start."""
_TRUNCATED = "\n\n[... truncated by assay scaffold]"


def provenance(
    change: Change,
    *,
    side: Side,
    ref: str,
    source_files: Sequence[tuple[str, str]],
    skipped: Sequence[SkippedFile],
    license_waived: str | None = None,
) -> dict[str, Any]:
    """Warden's `notes`: where the fixtures came from, so a maintainer can recreate them.

    `license_waived` says why no license was copied (the flag or key that said so).
    """
    notes: dict[str, Any] = {
        "source": change.source,
        "repository": change.repository,
        "source_ref": ref,
        "source_files": [{"path": path, "sourcePath": src} for path, src in source_files],
        "side": side,
        "skipped_files": [s.as_json() for s in skipped],
    }
    if license_waived is not None:
        notes["license"] = (
            f"none copied: {license_waived} (the code is the repository owner's own, "
            "published under no license)"
        )
    notes["body"] = _truncated(change.body)
    return notes


def review_scenario(
    change: Change, *, files: Sequence[str], supporting_files: Sequence[str], notes: dict[str, Any]
) -> dict[str, Any]:
    """A standalone JSON scenario (`<root>/<category>/<name>.json`)."""
    return {
        "given": _title(change),
        "files": list(files),
        "supporting_files": list(supporting_files),
        "should_find": [{"finding": TODO_FINDING}],
        "should_not_find": [],
        "notes": notes,
    }


def rubric_entry(change: Change, *, case_id: str, ref: str, fixture_path: str) -> dict[str, Any]:
    """One case of a Cassandra suite manifest."""
    return {
        "id": case_id,
        "name": _title(change),
        "description": f"Scaffolded from {change.source} (base {ref[:12]}).",
        "rubric": TODO_RUBRIC,
        "fixture_path": fixture_path,
    }


def dump_json(document: Any) -> bytes:
    # A lone surrogate (a PR title cut inside an emoji) has no UTF-8 form: it becomes `?`.
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8", "replace")


def _title(change: Change) -> str:
    """The change's title; an empty one (a commit with no message) would fail validation."""
    return change.title if change.title.strip() else f"untitled change {change.fallback_name}"


def _truncated(body: str) -> str:
    if len(body) <= MAX_BODY_CHARS:
        return body
    return body[:MAX_BODY_CHARS].rstrip() + _TRUNCATED
