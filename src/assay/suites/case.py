"""The format-agnostic `Case`: what every loader produces and everything after loading uses.

Paths in a Case are absolute and already checked to stay inside their allowed root;
repo paths (`dest`, changed-file names) are relative POSIX strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from assay.core.kinds import CaseKind
from assay.core.severities import SEVERITIES, WARDEN_SEVERITIES, Severity, warden_severity
from assay.upstream.go.json import go_text

__all__ = [
    "Case",
    "CaseKind",
    "ContextChecks",
    "Expectation",
    "FixtureFile",
    "ReviewSpec",
    "RubricSpec",
    "Severity",
    "SuiteFormat",
    "TaskSpec",
    "VerificationCommand",
    "VerifySpec",
    "SEVERITIES",
    "WARDEN_SEVERITIES",
    "warden_severity",
]

SuiteFormat = Literal[
    "review-yaml", "review-json", "verification", "rubric-manifest", "rubric-dir", "task-suite"
]


@dataclass(frozen=True)
class FixtureFile:
    """A file copied into a sandbox: `source` on disk, `dest` its path inside the repo."""

    source: Path
    dest: str


@dataclass(frozen=True)
class Expectation:
    """One should_find assertion."""

    finding: str
    severity: Severity | None = None
    required: bool = True


@dataclass(frozen=True)
class ReviewSpec:
    """A review case: find the issues in the `main...eval` diff of a Warden-style sandbox."""

    given: str
    files: tuple[FixtureFile, ...]
    supporting_files: tuple[FixtureFile, ...] = ()
    skill: Path | None = None
    should_find: tuple[Expectation, ...] = ()
    should_not_find: tuple[str, ...] = ()
    repository: str | None = None
    """`owner/repo` when every fixture comes from the same GitHub repo (the origin remote)."""
    notes: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class VerifySpec:
    """A verification case: keep or reject one candidate finding."""

    given: str
    files: tuple[FixtureFile, ...]
    candidate: dict[str, Any]
    expect_verdict: Literal["keep", "reject"]
    supporting_files: tuple[FixtureFile, ...] = ()
    skill: Path | None = None
    repository: str | None = None
    notes: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class RubricSpec:
    """A Cassandra rubric case: review `diff` applied on `base`, judged 1-5 against `rubric`."""

    rubric: str
    diff: Path
    base: Path | None
    """A directory, a `.tar.gz`, or None for an empty base (the diff creates every file)."""
    description: str = ""
    cassandra_id: str | None = None
    """The case id as Cassandra reads it (its results file's `case_id`): a manifest case
    without `id` has `""` there, while assay's own id falls back to the fixture directory."""
    cassandra_name: str | None = None
    """The case name as Cassandra reads it (`case_name`): `""` when the file gives none."""

    def raw_diff(self) -> str:
        """`diff` as Cassandra sends it to the reviewer and the judge: the file's bytes, carriage
        returns kept (no newline translation), each byte that is not valid UTF-8 as U+FFFD
        (Go's JSON encoding of the string it read the file into)."""
        return go_text(self.diff.read_bytes())


@dataclass(frozen=True)
class VerificationCommand:
    """One PVYai verification command, run as argv in the workspace."""

    id: str
    name: str
    argv: tuple[str, ...]
    timeout_s: float = 600.0


@dataclass(frozen=True)
class ContextChecks:
    required_files: tuple[str, ...] = ()
    forbidden_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskSpec:
    """A PVYai task: change a workspace copied from `workspace`; checked deterministically."""

    prompt: str
    workspace: Path
    commands: tuple[VerificationCommand, ...]
    expected_changed_files: tuple[str, ...] = ()
    forbidden_changed_files: tuple[str, ...] = ()
    context: ContextChecks = ContextChecks()
    required_trace_events: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    difficulty: str | None = None
    description: str = ""


Spec = ReviewSpec | VerifySpec | RubricSpec | TaskSpec


@dataclass(frozen=True)
class Case:
    """One eval case, whatever format it was written in."""

    id: str
    """`<suite>/<case>`; unique in a run, matched by `-t`."""
    suite: str
    name: str
    kind: CaseKind
    format: SuiteFormat
    source_path: Path
    """The suite file the case is written in (junit `file`, annotations)."""
    source_line: int
    spec: ReviewSpec | VerifySpec | RubricSpec | TaskSpec
    model: str | None = None
    runtime: str | None = None
    """`builtin`, `command`, or a Warden alias (`claude`, `pi`); None = decided by the run."""
    agent_command: tuple[str, ...] | None = None
    """Suite/case-level argv template for the command runtime."""
    root: Path | None = None
    """The root the case's paths resolve against (eval root, manifest dir, suite dir)."""
    aliases: tuple[str, ...] = ()
    """Other ids `-t` also matches (a Warden case's `<category>/<case>` and Warden's full
    `<skill>/<runtime>/<model>/<name>` beside its id)."""
    max_turns: int | None = None
    """The builtin reviewer's turn limit for this case (Warden's harness `maxTurns`)."""
    graders: tuple[str, ...] = ()
    """User graders (`[tool.assay] graders`, a suite's `graders`) whose checks join this
    case's: registered names or `module:attribute` references."""
    timeout_s: float | None = None
    """The suite's per-attempt limit (Warden's harness `timeoutMs`); an explicit
    `--timeout`, ASSAY_TIMEOUT or `[tool.assay] timeout` beats it."""
    model_is_default: bool = False
    """`model` is a default nobody chose (Warden's DEFAULT_EVAL_MODEL): without its
    provider's key the run may serve it through another provider (`models.fallback`)."""

    @property
    def local_id(self) -> str:
        """The case's id inside its suite (`<case>` of `<suite>/<case>`): PVYai's task id."""
        prefix = f"{self.suite}/"
        return self.id[len(prefix) :] if self.id.startswith(prefix) else self.id

    @property
    def required_trace_events(self) -> tuple[str, ...]:
        """The trace events the case's checks look for (a task's `requiredTraceEvents`)."""
        return self.spec.required_trace_events if isinstance(self.spec, TaskSpec) else ()
