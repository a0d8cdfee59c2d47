"""The PVYai task suite format, read as PVYai's Go decoder reads it.

Unknown fields are refused (PVYai's `DisallowUnknownFields`); keys match case-insensitively,
`null` is the zero value, and a key given twice is decoded twice (`go_json`). What the
models check is PVYai's `Validate` as far as types and required fields go, a blank being
what Go's `strings.TrimSpace` empties; the rules about lists (empty entries, duplicates
after normalising, bad paths) are the loader's (`suites/task.py`), which words them as
PVYai does.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from assay.suites.wire_common import SuiteModel
from assay.upstream.go.json import go_struct
from assay.upstream.pvyai.paths import go_trim_space

__all__ = ["ContextChecksModel", "Task", "TaskSuite", "VerificationCommandModel"]


def _not_blank(value: str) -> str:
    if not go_trim_space(value):
        raise PydanticCustomError("empty_text", "must not be empty")
    return value


Text = Annotated[
    str, AfterValidator(_not_blank), WithJsonSchema({"type": "string", "minLength": 1})
]
"""A string PVYai does not call blank (`"\\x1f"` is not: Go's TrimSpace keeps it)."""


def _some_argument(value: list[str]) -> list[str]:
    if not any(go_trim_space(part) for part in value):
        raise PydanticCustomError("empty_command", "command must not be empty")
    return value


Argv = Annotated[
    list[str],
    AfterValidator(_some_argument),
    WithJsonSchema(
        {"type": "array", "items": {"type": "string"}, "minItems": 1},
    ),
]
"""An argv list with at least one non-blank element (PVYai accepts blank ones beside it)."""


class VerificationCommandModel(SuiteModel):
    id: Text
    """Unique command identifier within the task; the id of its check."""
    name: Text
    """Human-readable name."""
    command: Argv
    """Command and arguments as an argv array, run in the workspace without a shell; each
    element is trimmed before it runs."""

    @model_validator(mode="before")
    @classmethod
    def _go(cls, value: Any) -> Any:
        return go_struct(value, cls.model_fields, string_lists=("command",))


class ContextChecksModel(SuiteModel):
    requiredFiles: list[str] = []
    """Workspace files that must exist after the agent and the commands ran."""
    forbiddenFiles: list[str] = []
    """Workspace files that must not exist after the agent and the commands ran."""

    @model_validator(mode="before")
    @classmethod
    def _go(cls, value: Any) -> Any:
        return go_struct(value, cls.model_fields, string_lists=tuple(cls.model_fields))


class Task(SuiteModel):
    """One PVYai task: a prompt, a workspace fixture and the checks of the result."""

    id: Text
    """Unique task identifier; the case id is `<suite id>/<task id>`."""
    name: Text
    """Human-readable task name."""
    description: str = ""
    """Longer description."""
    tags: list[str] = []
    """Labels for filtering."""
    difficulty: str = ""
    """Free text such as easy, medium or hard (PVYai takes any value)."""
    prompt: Text
    """The instruction given to the agent."""
    workspaceFixture: Text
    """The fixture directory copied into the workspace, relative to the suite file."""
    verificationCommands: Annotated[list[VerificationCommandModel], Field(min_length=1)]
    """Commands that must exit 0 (each with a 600 s timeout)."""
    expectedChangedFiles: Annotated[list[str], Field(min_length=1)]
    """Exactly the files that must change: a missing one or any other change fails."""
    forbiddenChangedFiles: list[str] = []
    """Files that must not change."""
    contextChecks: ContextChecksModel = ContextChecksModel()
    """Required / forbidden files in the final workspace."""
    requiredTraceEvents: list[str] = []
    """Trace event keys (`type:name`) that must appear in the agent's JSON-line output."""

    @model_validator(mode="before")
    @classmethod
    def _go(cls, value: Any) -> Any:
        lists = ("tags", "expectedChangedFiles", "forbiddenChangedFiles", "requiredTraceEvents")
        return go_struct(
            value,
            cls.model_fields,
            string_lists=lists,
            object_lists=("verificationCommands",),
            structs=("contextChecks",),
        )


class TaskSuite(SuiteModel):
    """A PVYai eval suite: a set of coding tasks."""

    id: Text
    """Suite id; the case ids are `<suite id>/<task id>`."""
    name: Text
    """Human-readable suite name."""
    description: str = ""
    """What the suite validates."""
    tasks: Annotated[list[Task], Field(min_length=1)]
    """The tasks (at least one)."""

    @model_validator(mode="before")
    @classmethod
    def _go(cls, value: Any) -> Any:
        return go_struct(value, cls.model_fields, object_lists=("tasks",))
