"""Step outputs ($GITHUB_OUTPUT) and the job summary ($GITHUB_STEP_SUMMARY).

Every output is written in the multi-line form `name<<DELIM ... DELIM` with a fresh random
delimiter, so a value (a reason quoting a file name, say) can never end its own entry
early and forge another output. A value that contains the delimiter is refused.

Both files are the runner's: a path that cannot be written (a directory, a missing
directory, no permission) means the job's environment is broken. That is raised as one
`RunnerFileError` naming the variable, the path, the reason and what to do, so `assay ci`
can report it, publish everything else and exit 2 instead of crashing. `assay ci` writes
outputs more than once (the decision, the results, the history directory); each write
meets the same fault, which the run reports once.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from assay._util.secrets import redact
from assay.action import commands

__all__ = [
    "SUMMARY_LIMIT_BYTES",
    "RunnerFileError",
    "UnsafeOutput",
    "append_step_summary",
    "report_and_continue",
    "step_summary_size",
    "write_outputs",
]

SUMMARY_LIMIT_BYTES = 1024 * 1024
"""GitHub rejects a step summary larger than 1 MiB."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class UnsafeOutput(ValueError):
    """An output name or value that could corrupt $GITHUB_OUTPUT."""


_LOST = {
    "GITHUB_OUTPUT": "later steps get none of this step's outputs",
    "GITHUB_STEP_SUMMARY": "the job summary is lost",
}
"""What a job misses when the runner file a variable names cannot be written."""


class RunnerFileError(Exception):
    """$GITHUB_OUTPUT or $GITHUB_STEP_SUMMARY could not be written."""

    def __init__(self, variable: str, path: Path, error: OSError) -> None:
        self.variable = variable
        self.path = path
        reason = error.strerror or str(error) or type(error).__name__
        super().__init__(
            f"cannot write {variable} ({path}): {reason}, so {_LOST[variable]}; the runner "
            f"creates this file for each step: leave {variable} as the runner sets it, and "
            "if the step runs in a container or as another user, mount the file writable"
        )


@contextmanager
def report_and_continue(broken: list[RunnerFileError]) -> Iterator[None]:
    """Run the block; a RunnerFileError in it becomes an error annotation (one per run for
    the same fault), is added to `broken` (the caller exits 2 in the end) and does not
    stop what follows."""
    try:
        yield
    except RunnerFileError as exc:
        commands.error(str(exc), title="assay: runner environment", once=True)
        broken.append(exc)


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
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("".join(chunks))
    except OSError as exc:
        raise RunnerFileError("GITHUB_OUTPUT", path, exc) from None


def step_summary_size(path: Path) -> int:
    """Bytes already in the job summary (0 before the first write)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise RunnerFileError("GITHUB_STEP_SUMMARY", path, exc) from None


def append_step_summary(path: Path | None, markdown: str) -> None:
    """Append `markdown` to the job summary, cut to fit GitHub's 1 MiB limit, with every
    secret assay knows masked (the job summary takes text through this door only)."""
    if path is None:
        return

    markdown = redact(markdown)
    budget = max(SUMMARY_LIMIT_BYTES - step_summary_size(path) - 1, 0)
    data = markdown.encode("utf-8")
    if len(data) > budget:
        note = b"\n\n_(summary truncated to fit GitHub's 1 MiB limit)_\n"
        data = data[: max(budget - len(note), 0)].decode("utf-8", "ignore").encode() + note
    try:
        with path.open("ab") as handle:
            handle.write(data if data.endswith(b"\n") else data + b"\n")
    except OSError as exc:
        raise RunnerFileError("GITHUB_STEP_SUMMARY", path, exc) from None
