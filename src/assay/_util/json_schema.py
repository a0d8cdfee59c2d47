"""Tool input schemas from pydantic models, in the plain form every model API accepts."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel, ValidationError

from assay._util.docstrings import DocumentedJsonSchema

__all__ = ["describe_validation_error", "tool_input_schema"]


@functools.cache
def tool_input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s JSON Schema with `$ref`s inlined and `title`s dropped.

    Some OpenAI-compatible servers reject `$defs`/`$ref`, and titles only add tokens; field
    descriptions (the models' attribute docstrings) are what guides the model, so they stay.
    The same schema validates the model's answer with jsonschema.

    Built once per model class (a class's schema never changes; generating it cost
    1-1.5 ms per tool per case): the result is shared, so callers must not mutate it
    (`bounded` copies before narrowing).

    Field descriptions come from `DocumentedJsonSchema` (see its module for why not
    pydantic's `use_attribute_docstrings`).
    """
    schema = model.model_json_schema(schema_generator=DocumentedJsonSchema)
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = definitions[node["$ref"].rsplit("/", 1)[-1]]
                merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
                return inline(merged)
            # A string `title` is the schema keyword; a property *named* title maps to a dict.
            return {
                k: inline(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))
            }
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    result: dict[str, Any] = inline(schema)
    return result


def describe_validation_error(exc: ValidationError, *, limit: int | None = None) -> str:
    """What was wrong, one `field.path: message` per problem: short enough to show a model.
    With `limit`, only that many, and how many more there are (`(and 6 more)`)."""
    errors = exc.errors()
    shown = errors if limit is None else errors[:limit]
    text = "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'input'}: {error['msg']}"
        for error in shown
    )
    left = len(errors) - len(shown)
    return text + (f" (and {left} more)" if left else "")
