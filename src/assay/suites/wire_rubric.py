"""The Cassandra file formats: the suite manifest and the older per-case `metadata.json`."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, WithJsonSchema

from assay.suites.wire_common import CaseName, FilledText, SuiteModel, Text

__all__ = ["RubricCase", "RubricManifest", "RubricMetadata"]

# Cassandra (Go) reads these into plain strings with `omitempty`: "" means the default.
DefaultWhenEmpty = Annotated[
    Text | None,
    BeforeValidator(lambda v: None if v == "" else v),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]}),
]


class RubricCase(SuiteModel):
    """One case of a Cassandra suite manifest."""

    id: CaseName | None = None
    """Case id; the assay case id is `<manifest file stem>/<id>`. Without one, the fixture
    directory's name (as Cassandra names a case directory without an id)."""
    name: str = ""
    """Human-readable name."""
    description: str = ""
    """What the case tests."""
    rubric: FilledText
    """What the judge scores the review against (1-5)."""
    fixture_path: Text
    """Directory holding `input.diff` and `base/` or `base.tar.gz`, relative to the manifest;
    `..` may lead elsewhere in the repository, never outside it."""
    base_source: DefaultWhenEmpty = None
    """Overrides `base.tar.gz` / `base/` inside the fixture directory."""
    diff_path: DefaultWhenEmpty = None
    """Overrides `input.diff` inside the fixture directory."""


class RubricManifest(SuiteModel):
    """A Cassandra suite manifest: rubric cases with fixtures relative to this file."""

    schema_: str | None = Field(default=None, alias="$schema")
    """Optional JSON Schema reference for editors."""
    name: str = ""
    """Suite name (the case ids use the file stem)."""
    description: str = ""
    """What the suite covers."""
    cases: list[RubricCase]
    """The cases; an empty list is accepted (nothing to run, with a warning)."""


class RubricMetadata(SuiteModel):
    """`<suite>/<case>/metadata.json`: one rubric case beside its `input.diff`."""

    schema_: str | None = Field(default=None, alias="$schema")
    """Optional JSON Schema reference for editors."""
    id: CaseName | None = None
    """Case id; defaults to the case directory's name (as Cassandra's LoadCases does)."""
    name: str = ""
    """Human-readable name."""
    description: str = ""
    """What the case tests."""
    rubric: FilledText
    """What the judge scores the review against (1-5)."""
    base_source: DefaultWhenEmpty = None
    """Base state in the case directory, a directory or .tar.gz (default: base.tar.gz, base/)."""
    diff_path: DefaultWhenEmpty = None
    """The diff in the case directory (default: input.diff)."""
