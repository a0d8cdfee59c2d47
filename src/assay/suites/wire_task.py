"""The PVYai task suite format. PVYai rejects unknown fields, so assay does too."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from assay.suites.wire_common import CaseName, SuiteModel, Text

__all__ = ["ContextChecksModel", "Task", "TaskSuite", "VerificationCommandModel"]


class VerificationCommandModel(SuiteModel):
    id: Text
    """Unique command identifier within the task (trace event `verify:<id>`)."""
    name: Text
    """Human-readable name."""
    command: Annotated[list[Text], Field(min_length=1)]
    """Command and arguments as an argv array, run in the workspace without a shell."""


class ContextChecksModel(SuiteModel):
    requiredFiles: list[Text] = []
    """Workspace files that must exist after the agent ran."""
    forbiddenFiles: list[Text] = []
    """Workspace files that must not exist after the agent ran."""


class Task(SuiteModel):
    """One PVYai task: a prompt, a workspace fixture and the checks of the result."""

    id: CaseName
    """Unique task identifier (kebab-case); the case id is `<suite id>/<task id>`."""
    name: Text
    """Human-readable task name."""
    description: str = ""
    """Longer description."""
    tags: list[str] = []
    """Labels for filtering."""
    difficulty: Literal["easy", "medium", "hard"] | None = None
    """easy, medium or hard."""
    prompt: Text
    """The instruction given to the agent."""
    workspaceFixture: Text
    """The fixture directory copied into the workspace, relative to the suite file."""
    verificationCommands: Annotated[list[VerificationCommandModel], Field(min_length=1)]
    """Commands that must exit 0 (each with a 600 s timeout)."""
    expectedChangedFiles: list[Text] = []
    """Files that must be modified."""
    forbiddenChangedFiles: list[Text] = []
    """Files that must not be touched."""
    contextChecks: ContextChecksModel | None = None
    """Required / forbidden files in the final workspace."""
    requiredTraceEvents: list[Text] = []
    """Trace event keys (`type:name`) that must appear in the agent's JSON-line output."""


class TaskSuite(SuiteModel):
    """A PVYai eval suite: a set of coding tasks."""

    id: CaseName
    """Suite id; the case ids are `<suite id>/<task id>`."""
    name: str = ""
    """Human-readable suite name."""
    description: str = ""
    """What the suite validates."""
    tasks: Annotated[list[Task], Field(min_length=1)]
    """The tasks (at least one)."""
