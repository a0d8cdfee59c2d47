"""The shipped JSON Schemas match the models, and the seed examples satisfy them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml
from pydantic import BaseModel

from assay._util.docstrings import DocumentedJsonSchema
from assay.suites import load_suites
from assay.suites.schema import SCHEMA_NAMES, generate_schema, render_schema, shipped_schema

DATA = Path(__file__).parents[1] / "data" / "suites"


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_shipped_schema_is_generated_from_the_model(name: str) -> None:
    # On failure regenerate with: python -m assay.suites.schema
    assert shipped_schema(name) == render_schema(generate_schema(name))


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schemas_are_valid_draft_2020_12(name: str) -> None:
    schema = json.loads(shipped_schema(name))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize(
    ("name", "example"),
    [
        ("review-yaml", "warden/eval-bug-detection.yaml"),
        ("review-json", "warden/security-review/sentry-replay-delete-read-scope.json"),
        ("verification", "warden/verification/workflow-open-periods-project-access-keep.json"),
        ("rubric-manifest", "cassandra/suite.json"),
        ("rubric-dir", "cassandra/cases/hardcoded-api-key/metadata.json"),
        ("task-suite", "pvyai/regression.json"),
        ("task-suite", "pvyai/my-suite.json"),
    ],
)
def test_seed_examples_satisfy_their_schema(name: str, example: str) -> None:
    instance = yaml.safe_load((DATA / example).read_text())
    jsonschema.validate(instance, json.loads(shipped_schema(name)))


def test_schema_rejects_what_the_loader_rejects() -> None:
    schema = json.loads(shipped_schema("review-json"))
    # (An empty `given` is no longer one: Warden's zod takes it, and assay warns.)
    bad = {"given": 5, "files": ["a"], "should_find": []}
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(bad))
    assert {e.json_path for e in errors} == {"$.given", "$.should_find"}


def test_a_schema_reference_key_is_accepted(tmp_path: Path) -> None:
    root = tmp_path / "w"
    shutil.copytree(DATA / "warden", root)
    scenario = root / "security-review/sentry-replay-delete-read-scope.json"
    data = {"$schema": "../../schemas/review-json.schema.json", **json.loads(scenario.read_text())}
    scenario.write_text(json.dumps(data))
    suite = root / "eval-bug-detection.yaml"
    suite.write_text(
        "# yaml-language-server: $schema=../schemas/review-yaml.schema.json\n" + suite.read_text()
    )
    loaded = load_suites([root])
    assert loaded.warnings == () and len(loaded.cases) == 3


@pytest.mark.parametrize("name", [n for n in SCHEMA_NAMES if n != "report"])
def test_every_suite_field_is_documented(name: str) -> None:
    schema = json.loads(shipped_schema(name))
    objects = [schema, *schema.get("$defs", {}).values()]
    undocumented = [
        f"{obj.get('title')}.{field}"
        for obj in objects
        for field, spec in obj.get("properties", {}).items()
        if not spec.get("description")
    ]
    assert undocumented == []


class _Described(BaseModel):
    kept: int = 0
    """From the base class."""


class _Outer:
    class Inner(_Described):
        own: str = ""
        """From the nested class."""
        kept: int = 1
        """Overridden here."""


def test_field_docstrings_of_nested_and_inherited_classes_become_descriptions() -> None:
    schema = _Outer.Inner.model_json_schema(schema_generator=DocumentedJsonSchema)
    described = {name: field["description"] for name, field in schema["properties"].items()}
    assert described == {"own": "From the nested class.", "kept": "Overridden here."}
    base = _Described.model_json_schema(schema_generator=DocumentedJsonSchema)
    assert base["properties"]["kept"]["description"] == "From the base class."


def test_a_model_made_in_a_function_or_a_block_has_its_descriptions() -> None:
    class Local(BaseModel):
        field: int = 0
        """Defined in a function."""

    if Local:

        class InABlock(BaseModel):
            field: int = 0
            """Defined in an if block."""

    for model, text in ((Local, "Defined in a function."), (InABlock, "Defined in an if block.")):
        schema = model.model_json_schema(schema_generator=DocumentedJsonSchema)
        assert schema["properties"]["field"]["description"] == text
