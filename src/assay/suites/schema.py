"""JSON Schemas of the suite formats and of report.json, shipped as package data.

The shipped files (`src/assay/schemas/<name>.schema.json`) are what `assay schema` prints
and what editors reference (`# yaml-language-server: $schema=...`); they are generated
from the pydantic models by `python -m assay.suites.schema`, and a test keeps them equal.
"""

from __future__ import annotations

import importlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

from assay._util.docstrings import DocumentedJsonSchema

__all__ = ["SCHEMA_NAMES", "generate_schema", "render_schema", "shipped_schema", "write_schemas"]

_MODELS = {
    "review-yaml": ("assay.suites.wire_review", "ReviewSuite"),
    "review-json": ("assay.suites.wire_review", "ReviewScenario"),
    "verification": ("assay.suites.wire_review", "VerificationScenario"),
    "rubric-manifest": ("assay.suites.wire_rubric", "RubricManifest"),
    "rubric-dir": ("assay.suites.wire_rubric", "RubricMetadata"),
    "task-suite": ("assay.suites.wire_task", "TaskSuite"),
    "report": ("assay.report.model", "Report"),
}
SCHEMA_NAMES: tuple[str, ...] = tuple(_MODELS)
_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def generate_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of format `name`, from its pydantic model."""
    module, attribute = _MODELS[name]
    model = getattr(importlib.import_module(module), attribute)
    return {"$schema": _DIALECT, **model.model_json_schema(schema_generator=DocumentedJsonSchema)}


def render_schema(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def shipped_schema(name: str) -> str:
    """The shipped schema file's text."""
    if name not in _MODELS:
        raise KeyError(name)
    return (resources.files("assay") / "schemas" / f"{name}.schema.json").read_text("utf-8")


def write_schemas(directory: Path | None = None) -> list[Path]:
    """Regenerate every shipped schema file; returns the files written."""
    target = directory or Path(__file__).resolve().parent.parent / "schemas"
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name in SCHEMA_NAMES:
        path = target / f"{name}.schema.json"
        path.write_text(render_schema(generate_schema(name)), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_schemas():
        print(written_path)
