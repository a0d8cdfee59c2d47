"""The Cassandra file formats: the suite manifest and the older per-case `metadata.json`.

Cassandra decodes both into Go structs (`TestSuite`, `EvalCase`), so they are read by Go's
rules (`go_json.go_struct`): keys match case-insensitively (`Cases`, `Fixture_Path`), and
`null` is the zero value, as if the key were absent. A missing or empty `rubric` is
accepted as Cassandra accepts it (the loader warns that the judge gets an empty rubric).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)

from assay.suites.drafts import rubric_draft_digest
from assay.suites.wire_common import (
    CaseName,
    SuiteModel,
    Text,
    not_a_scaffold_stub,
    not_an_unedited_draft,
)
from assay.upstream.go.json import go_struct

__all__ = ["RubricCase", "RubricManifest", "RubricMetadata"]

# Cassandra (Go) reads these into plain strings with `omitempty`: "" means the default.
DefaultWhenEmpty = Annotated[
    Text | None,
    BeforeValidator(lambda v: None if v == "" else v),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]}),
]

# Cassandra takes any rubric, none included; a scaffold's `TODO:` placeholder is a warning
# (refused with --strict).
RubricText = Annotated[str, AfterValidator(not_a_scaffold_stub)]


class RubricCase(SuiteModel):
    """One case of a Cassandra suite manifest."""

    id: Annotated[CaseName | None, BeforeValidator(lambda v: None if v == "" else v)] = None
    """Case id; the assay case id is `<manifest file stem>/<id>`. Without one, the fixture
    directory's name (Cassandra's results file keeps the id empty)."""
    name: str = ""
    """Human-readable name."""
    description: str = ""
    """What the case tests."""
    rubric: RubricText = ""
    """What the judge scores the review against (1-5). Empty or missing is accepted, as
    Cassandra accepts it, with a warning: the judge then gets an empty rubric."""
    fixture_path: Text
    """Directory holding `input.diff` and `base/` or `base.tar.gz`, relative to the manifest;
    `..` may lead elsewhere in the repository, never outside it."""
    base_source: DefaultWhenEmpty = None
    """Overrides `base.tar.gz` / `base/`: a path relative to the fixture directory (`..`
    may leave it, never the repository)."""
    diff_path: DefaultWhenEmpty = None
    """Overrides `input.diff`: a path relative to the fixture directory (`..` may leave
    it, never the repository)."""
    draft: Any = None
    """assay's own key, which Cassandra's decoder ignores: set by `assay scaffold --draft`,
    the rubric is a model's draft (`model`) and `sha256` its digest. While the rubric still
    matches it, the case is a warning (an error with --strict); edit the rubric, or delete
    this key to accept it."""

    @model_validator(mode="before")
    @classmethod
    def _go(cls, value: Any) -> Any:
        return go_struct(value, cls.model_fields)

    @model_validator(mode="after")
    def _not_an_unedited_draft(self, info: ValidationInfo) -> RubricCase:
        if self.draft is not None:
            digest = rubric_draft_digest(self.rubric)
            not_an_unedited_draft(
                info, marker=self.draft, digest=digest, what="the rubric", key="draft"
            )
        return self


class RubricManifest(SuiteModel):
    """A Cassandra suite manifest: rubric cases with fixtures relative to this file."""

    schema_: str | None = Field(default=None, alias="$schema")
    """Optional JSON Schema reference for editors."""
    name: str = ""
    """Suite name (the case ids use the file stem)."""
    description: str = ""
    """What the suite covers."""
    cases: list[RubricCase] = []
    """The cases; an empty list (or null) is accepted: nothing to run, with a warning."""

    @model_validator(mode="before")
    @classmethod
    def _go(cls, value: Any) -> Any:
        return go_struct(value, ("name", "description", "cases"), object_lists=("cases",))


class RubricMetadata(SuiteModel):
    """`<suite>/<case>/metadata.json`: one rubric case beside its `input.diff`."""

    schema_: str | None = Field(default=None, alias="$schema")
    """Optional JSON Schema reference for editors."""
    id: Annotated[CaseName | None, BeforeValidator(lambda v: None if v == "" else v)] = None
    """Case id; defaults to the case directory's name (as Cassandra's LoadCases does)."""
    name: str = ""
    """Human-readable name."""
    description: str = ""
    """What the case tests."""
    rubric: RubricText = ""
    """What the judge scores the review against (1-5); empty or missing is accepted with a
    warning, as for a manifest case."""
    base_source: DefaultWhenEmpty = None
    """Base state relative to the case directory, a directory or .tar.gz (default:
    base.tar.gz, base/); `..` may leave the case directory, never the repository."""
    diff_path: DefaultWhenEmpty = None
    """The diff relative to the case directory (default: input.diff)."""
    fixture_path: str = ""
    """Ignored: a field of Cassandra's case struct, which its LoadCases reads from this file
    and never uses (the fixture is the case directory)."""

    @model_validator(mode="before")
    @classmethod
    def _go(cls, value: Any) -> Any:
        return go_struct(value, cls.model_fields.keys() - {"schema_"})
