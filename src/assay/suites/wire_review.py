"""The Warden file formats: YAML review suites, JSON scenarios, verification scenarios.

Field names and meanings follow Warden's README; `agent_command` and the `builtin` /
`command` runtimes are assay's additions.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from assay.suites.drafts import review_draft_digest
from assay.suites.wire_common import (
    AgentCommandValue,
    FilledText,
    LenientText,
    Runtime,
    SeverityValue,
    SuiteModel,
    Text,
    WardenCaseName,
    any_case,
    lowercase,
    not_an_unedited_draft,
)

__all__ = [
    "Candidate",
    "CategoryDefaults",
    "ReviewEval",
    "ReviewScenario",
    "ReviewSuite",
    "ShouldFind",
    "VerificationScenario",
]


class ShouldFind(SuiteModel):
    finding: FilledText
    """What the reviewer must report, in plain words; the LLM judge matches findings to it.
    Empty, or the scaffold's `TODO:` placeholder, is a warning (an error with --strict)."""
    severity: SeverityValue | None = None
    """When set, the matched finding must have exactly this severity (case-insensitive)."""
    required: bool = True
    """False: an optional expectation that never fails the case."""


class Notes(SuiteModel):
    """Maintainer-only provenance; kept with the case and ignored when it runs."""

    model_config = ConfigDict(extra="allow")
    repository: str | None = None
    """Source repository of GitHub-captured fixtures, e.g. `getsentry/sentry`."""
    source_ref: str | None = None
    """The source commit the fixtures were captured at."""
    source_files: Any = None
    """Mapping from checked-in fixture files to source repository paths at `source_ref`."""
    skipped_files: Any = None
    """Files the scaffolder skipped, with the reason."""
    source: str | None = None
    """The pull request the case was scaffolded from."""
    side: str | None = None
    """Which side of the pull request was captured: `base` or `head`."""
    body: str | None = None
    """The pull request's description."""
    draft: Any = None
    """Set by `assay scaffold --draft`: should_find and should_not_find are a model's draft
    (`model`), and `sha256` is their digest. While they still match it, the case is a
    warning (an error with --strict); edit them, or delete this key to accept them."""


def _not_empty_should_find(value: Any) -> Any:
    if isinstance(value, list) and not value:
        raise PydanticCustomError(
            "empty_should_find", "must list at least one finding the reviewer should report"
        )
    return value


ShouldFindList = Annotated[
    list[ShouldFind], BeforeValidator(_not_empty_should_find), Field(min_length=1)
]
FileList = Annotated[list[Text], Field(min_length=1)]


class _FixtureCase(SuiteModel):
    """What review and verification scenarios share: the fixtures and who runs them."""

    given: LenientText
    """The situation the fixture sets up (the BDD "given"). The judge reads it; a reviewer
    never sees it (as in Warden, its pull request is titled `add fixture: <name>`); a
    verifier sees it as the pull request's title. Empty is a warning."""
    files: FileList
    """Fixture files, joined to the eval root as Node's `path.join` does (`..` and a leading
    `/` included) and inside the project; committed on the `eval` branch (the diff)."""
    supporting_files: list[Text] = []
    """Context files, joined to the eval root like `files`; committed on `main` before the
    diff."""
    model: str | None = None
    """Model override for this case."""
    runtime: Runtime | None = None
    """Runtime override for this case."""
    agent_command: AgentCommandValue | None = None
    """Argv template (string or list) of the agent for the `command` runtime (assay extension)."""
    notes: Notes | None = None
    """Maintainer-only provenance, ignored when the case runs."""


class _ReviewCase(_FixtureCase):
    should_find: ShouldFindList
    """What the reviewer must detect (at least one)."""
    should_not_find: list[LenientText] = []
    """Things the reviewer must NOT report (precision); an empty entry is a warning."""

    @model_validator(mode="after")
    def _not_an_unedited_draft(self, info: ValidationInfo) -> _ReviewCase:
        marker = self.notes.draft if self.notes is not None else None
        if marker is not None:
            digest = review_draft_digest(
                ((s.finding, s.severity, s.required) for s in self.should_find),
                self.should_not_find,
            )
            not_an_unedited_draft(
                info, marker=marker, digest=digest, what="should_find", key="notes.draft"
            )
        return self


class ReviewEval(_ReviewCase):
    """One scenario of a YAML review suite."""

    name: WardenCaseName
    """Scenario name; the case id is `<skill name>/<name>` (empty, or with `/`, is a
    warning)."""


class ReviewSuite(SuiteModel):
    """A Warden YAML review suite: one skill, several scenarios. Its file stem is the category."""

    schema_: str | None = Field(default=None, alias="$schema")
    """Optional JSON Schema reference for editors."""
    skill: Text
    """The skill: a .md file or a directory holding SKILL.md, relative to the eval root."""
    runtime: Runtime | None = None
    """Default runtime: claude or pi (Warden), builtin or command (assay)."""
    model: str | None = None
    """Default model, e.g. `anthropic/claude-sonnet-4-6`."""
    agent_command: AgentCommandValue | None = None
    """Default argv template for the `command` runtime (assay extension)."""
    graders: list[Text] = []
    """User graders run on every scenario after its judge (assay extension): names from the
    `assay.graders` entry point group, or `module:function`."""
    evals: Annotated[list[ReviewEval], Field(min_length=1)]
    """The scenarios (at least one)."""


class ReviewScenario(_ReviewCase):
    """A standalone Warden JSON scenario, `<root>/<category>/<name>.json`."""

    schema_: str | None = Field(default=None, alias="$schema")
    """Optional JSON Schema reference for editors."""
    name: WardenCaseName | None = None
    """Scenario name; defaults to the file name without `.json` (empty, or with `/`, is a
    warning)."""


def _confidence(value: Any) -> str | float:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)  # NaN fails the comparison too
    raise PydanticCustomError("confidence", "must be high, medium, low or a number from 0 to 1")


Confidence = Annotated[
    str | float,
    PlainValidator(_confidence),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "number", "minimum": 0, "maximum": 1}]}),
]


class CandidateLocation(SuiteModel):
    path: Text
    """Repo-relative path of the file the finding is about."""
    startLine: Annotated[int, Field(ge=1)] | None = None
    """First line of the finding (1-based)."""
    endLine: Annotated[int, Field(ge=1)] | None = None
    """Last line of the finding (1-based)."""


class Candidate(SuiteModel):
    """A Warden finding handed to the verifier."""

    id: Text
    """The finding's id."""
    severity: SeverityValue
    """critical, high, medium, low or info."""
    confidence: Confidence | None = None
    """`high`, `medium`, `low`, or a number in [0, 1]."""
    title: Text
    """One-line summary."""
    description: str
    """What is wrong and why."""
    verification: str | None = None
    """How the reviewer verified it (source, boundary, sink, absence of mitigation)."""
    location: CandidateLocation | None = None
    """Where the finding is."""


class Expect(SuiteModel):
    verdict: Annotated[
        Literal["keep", "reject"], BeforeValidator(lowercase), any_case("keep", "reject")
    ]
    """Whether the verifier must keep or reject the candidate."""


class VerificationScenario(_FixtureCase):
    """A Warden verifier-only scenario: keep or reject one candidate finding."""

    schema_: str | None = Field(default=None, alias="$schema")
    """Optional JSON Schema reference for editors."""
    name: WardenCaseName | None = None
    """Scenario name; defaults to the file name without `.json` (empty, or with `/`, is a
    warning)."""
    candidate: Candidate
    """The finding to verify."""
    expect: Expect
    """The expected verdict."""


class CategoryDefaults(SuiteModel):
    """`<category>/_suite.yaml`: defaults for the JSON scenarios of one category directory."""

    schema_: str | None = Field(default=None, alias="$schema")
    """Optional JSON Schema reference for editors."""
    skill: Text | None = None
    """The category's skill, relative to the eval root (like every Warden path)."""
    runtime: Runtime | None = None
    """Default runtime."""
    model: str | None = None
    """Default model."""
    max_turns: Annotated[int, Field(ge=1)] | None = None
    """The builtin reviewer's turn limit (Warden's harness `maxTurns`)."""
    timeout_ms: Annotated[int, Field(gt=0)] | None = None
    """Warden's harness `timeoutMs`: the per-attempt limit of the category's cases unless
    `--timeout`, ASSAY_TIMEOUT or `[tool.assay] timeout` sets one."""
    agent_command: AgentCommandValue | None = None
    """Default argv template for the `command` runtime."""
    graders: list[Text] = []
    """User graders run on every scenario of the category after its own grading: names from
    the `assay.graders` entry point group, or `module:function`."""
