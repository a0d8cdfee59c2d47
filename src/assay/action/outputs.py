"""Step outputs ($GITHUB_OUTPUT) and the job summary ($GITHUB_STEP_SUMMARY).

Every output is written in the multi-line form `name<<DELIM ... DELIM` with a fresh random
delimiter, so a value (a reason quoting a file name, say) can never end its own entry
early and forge another output. A value that contains the delimiter is refused.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from pathlib import Path

__all__ = ["SUMMARY_LIMIT_BYTES", "append_step_summary", "write_outputs"]

SUMMARY_LIMIT_BYTES = 1024 * 1024
"""GitHub rejects a step summary larger than 1 MiB."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class UnsafeOutput(ValueError):
    """An output name or value that could corrupt $GITHUB_OUTPUT."""


def write_outputs(path: Path | None, values: Mapping[str, str]) -> None:
    """Append `values` to the outputs file (nothing to do outside Actions, `path` None)."""
    if path is None:
        return
    chunks = []
    for name, value in values.items():
        if not _NAME.fullmatch(name):
            raise UnsafeOutput(f"invalid output name {name!r}")
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        if delimiter in name or delimiter in value:
            raise UnsafeOutput(f"output {name!r} contains its own delimiter")
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(chunks))


def append_step_summary(path: Path | None, markdown: str) -> None:
    """Append `markdown` to the job summary, cut to fit GitHub's 1 MiB limit."""
    if path is None:
        return
    existing = path.stat().st_size if path.exists() else 0
    budget = max(SUMMARY_LIMIT_BYTES - existing - 1, 0)
    data = markdown.encode("utf-8")
    if len(data) > budget:
        note = b"\n\n_(summary truncated to fit GitHub's 1 MiB limit)_\n"
        data = data[: max(budget - len(note), 0)].decode("utf-8", "ignore").encode() + note
    with path.open("ab") as handle:
        handle.write(data if data.endswith(b"\n") else data + b"\n")
