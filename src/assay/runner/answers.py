"""Each attempt's answer, kept in the report directory so `assay regrade` can grade it again.

`answer.json` (`core/files.py: ATTEMPT_ANSWER_FILE`) beside the attempt's transcripts is
the `AgentOutput` the grader read, serialised: the findings, the verdict and its reason,
the written review, the trace events and the exit code (a task's deterministic records),
and the agent's token use. It is written as soon as the agent has answered, before the
grading, so an attempt whose judge broke can be graded again too.

Like every report-directory file it is redacted (a secret the agent quoted is masked,
and stays masked when the answer is graded again) and bounded: an answer larger than
`MAX_ANSWER_BYTES` is not kept at all, the file saying so, since a part of an answer
graded again would not be the answer graded first. What an answer does not hold is the
workspace the agent changed: a task's checks read it, so they run again only in a
workspace the run kept (`--keep-workspaces`), whose path the answer records.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay._util import json_text
from assay._util.secrets import redact_json
from assay._util.untrusted_files import UntrustedFileError, read_untrusted
from assay.core.files import ATTEMPT_ANSWER_FILE
from assay.core.usage import Usage
from assay.subject import AgentOutput

__all__ = [
    "ANSWER_FORMAT",
    "MAX_ANSWER_BYTES",
    "AnswerUnavailable",
    "KeptAnswer",
    "load_answer",
    "save_answer",
]

ANSWER_FORMAT: Final = "assay.answer.v1"
MAX_ANSWER_BYTES: Final = 8 << 20
"""The largest answer kept: 1,000 findings of a few KiB each, or a long written review."""


class SavedAnswer(BaseModel):
    """answer.json: one attempt's `AgentOutput`, as its grader read it."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["assay.answer.v1"] = ANSWER_FORMAT
    omitted: str | None = None
    """Set instead of the answer when it was not kept, saying why."""
    findings: list[dict[str, Any]] = Field(default_factory=list)
    verdict: Literal["keep", "reject"] | None = None
    verdict_reason: str = ""
    review_text: str | None = None
    trace_events: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    usage: Usage = Field(default_factory=Usage)
    """The agent's own token use (not the judge's)."""
    stdout: str | None = None
    stderr: str | None = None
    """The agent's saved streams, by their names in the attempt's directory (a command
    agent's: a task blocked by its agent says what it printed on stderr)."""
    workspace: str | None = None
    """Where the workspace was kept (`--keep-workspaces`): a task's checks can run in it
    again. None: it was removed after the attempt."""


class AnswerUnavailable(Exception):
    """The attempt's answer cannot be graded again; the text says why and what to do."""


@dataclass(frozen=True)
class KeptAnswer:
    """An attempt's answer as read back: what the grader reads, and the kept workspace."""

    output: AgentOutput
    workspace: Path | None


def save_answer(artifacts: Path, output: AgentOutput, *, workspace: str | None = None) -> Path:
    """Write `output` as the attempt's answer.json (redacted, bounded); its path.

    `workspace`: the sandbox's path when the run keeps it (`--keep-workspaces`)."""
    answer = SavedAnswer(
        findings=output.findings,
        verdict=output.verdict,
        verdict_reason=output.verdict_reason,
        review_text=output.review_text,
        trace_events=output.trace_events,
        exit_code=output.exit_code,
        usage=output.usage,
        stdout=_name_in(artifacts, output.stdout_path),
        stderr=_name_in(artifacts, output.stderr_path),
        workspace=workspace,
    )
    text = _dump(answer)
    if len(text) > MAX_ANSWER_BYTES:  # ASCII: one byte a character
        why = f"the answer was larger than {MAX_ANSWER_BYTES:,} bytes and was not kept"
        text = _dump(SavedAnswer(omitted=why, usage=output.usage, workspace=workspace))
    path = artifacts / ATTEMPT_ANSWER_FILE
    artifacts.mkdir(parents=True, exist_ok=True)
    path.write_text(redact_json(text), encoding="utf-8")
    return path


def _dump(answer: SavedAnswer) -> str:
    # default=str: a plugin runtime's finding may hold a value JSON has no form for; the
    # grader saw it as that text in the judge's prompt too.
    data = answer.model_dump(mode="json", fallback=str)
    return json.dumps(data, default=str)


def _name_in(artifacts: Path, path: Path | None) -> str | None:
    """`path`'s name when it is a file directly in `artifacts` (copied with it), else None."""
    if path is None or path.parent != artifacts:
        return None
    return path.name


def load_answer(artifacts: Path, *, streams_in: Path | None = None) -> KeptAnswer:
    """The answer kept in `artifacts`, as the `AgentOutput` its grader read.

    `streams_in`: where the attempt's files were copied (the agent's streams are read from
    there); default `artifacts`. AnswerUnavailable when there is none (the attempt ended
    before its agent answered, or an assay from before regrade ran it), it was not kept,
    or the file is not one."""
    path = artifacts / ATTEMPT_ANSWER_FILE
    try:
        raw = read_untrusted(path, max_bytes=MAX_ANSWER_BYTES)
    except FileNotFoundError:
        raise AnswerUnavailable(f"no saved answer ({path} does not exist)") from None
    except UntrustedFileError as exc:
        raise AnswerUnavailable(f"the saved answer {path} {exc.problem}") from None
    except OSError as exc:
        raise AnswerUnavailable(f"cannot read the saved answer {path}: {exc}") from None
    try:
        data = json_text.loads(raw)
    except ValueError as exc:  # not JSON, nested too deeply, not UTF-8
        raise AnswerUnavailable(f"the saved answer {path} is not JSON: {exc}") from None
    try:
        answer = SavedAnswer.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(map(str, problem["loc"])) or "the file"
        raise AnswerUnavailable(
            f"the saved answer {path} is not an {ANSWER_FORMAT} answer ({where}: {problem['msg']})"
        ) from None
    if answer.omitted is not None:
        raise AnswerUnavailable(answer.omitted)
    folder = streams_in or artifacts
    output = AgentOutput(
        findings=answer.findings,
        verdict=answer.verdict,
        verdict_reason=answer.verdict_reason,
        review_text=answer.review_text,
        trace_events=answer.trace_events,
        usage=answer.usage,
        exit_code=answer.exit_code,
        stdout_path=_stream(folder, answer.stdout),
        stderr_path=_stream(folder, answer.stderr),
    )
    return KeptAnswer(output, Path(answer.workspace) if answer.workspace else None)


def _stream(folder: Path, name: str | None) -> Path | None:
    # Only a plain name: a name with a separator would point out of the attempt's folder.
    if not name or name != Path(name).name or name in (".", ".."):
        return None
    return folder / name
