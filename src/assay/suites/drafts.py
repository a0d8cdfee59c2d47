"""A case a model drafted (`assay scaffold --draft`), until a person has edited it.

The scaffolder writes a marker beside the drafted text (Warden: `notes.draft`; a Cassandra
manifest case: `draft`, a key Cassandra's Go decoder ignores) holding the SHA-256 of that
text. While the text still hashes to it, nobody has edited the draft: the loaders warn
(`--strict` refuses it). Editing the text, or deleting the marker, accepts it. One digest
here, used by the scaffolder that writes the marker and by the models that check it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

__all__ = [
    "DRAFT_MARKER_KEY",
    "is_unedited_draft",
    "review_draft_digest",
    "rubric_draft_digest",
    "unedited_draft_message",
]

DRAFT_MARKER_KEY = "draft"
"""The marker's key: under a Warden case's `notes`, in a Cassandra manifest case."""


def review_draft_digest(
    should_find: Iterable[tuple[str, str | None, bool]], should_not_find: Iterable[str]
) -> str:
    """The digest of a review case's assertions: each should_find's (finding, severity,
    required) and each should_not_find, as the models read them (severity normalised)."""
    document = {
        "should_find": [
            {"finding": finding, "severity": severity, "required": required}
            for finding, severity, required in should_find
        ],
        "should_not_find": list(should_not_find),
    }
    return _digest(document)


def rubric_draft_digest(rubric: str) -> str:
    return _digest({"rubric": rubric})


def is_unedited_draft(marker: object, digest: str) -> bool:
    """Whether `marker` (the draft key's value, None when absent) still matches the text."""
    return isinstance(marker, dict) and marker.get("sha256") == digest


def unedited_draft_message(what: str, key: str) -> str:
    return (
        f"{what} is still the model's draft (assay scaffold --draft): check it against the "
        f"fix and edit it, or delete {key} to accept it as it is"
    )


def _digest(document: Any) -> str:
    text = json.dumps(document, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
