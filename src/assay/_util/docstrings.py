"""Field docstrings as JSON Schema descriptions, read only when a schema is generated.

pydantic can read attribute docstrings itself (`use_attribute_docstrings`), but it does
so for every model as its class is created: it tokenizes the source (about 90 ms of every
`assay validate`) and finds each class's module by walking every loaded module (11 ms a
class once the model SDK is imported). The docstrings are only needed where a schema is
generated (the shipped JSON Schemas, the tools' and verdicts' input schemas a model
reads), so that schema generator reads them here instead, one parse per module.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

__all__ = ["DocumentedJsonSchema", "attribute_docstrings"]


def attribute_docstrings(cls: type[Any]) -> dict[str, str]:
    """`{field: docstring}` for the string literals right under annotated class attributes."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or klass.__module__.startswith("pydantic"):
            continue
        docs.update(_module_docstrings(klass.__module__).get(klass.__qualname__, {}))
    return docs


@functools.cache
def _module_docstrings(module_name: str) -> dict[str, dict[str, str]]:
    """Every class's attribute docstrings in one module, by qualified name.

    One parse per module: `inspect.getsource` of a class parses its whole module to find
    it, which cost a millisecond per class and base class at a run's first case.
    """
    try:
        source = inspect.getsource(sys.modules[module_name])
    except (KeyError, OSError, TypeError):  # no module, or no source (a frozen build)
        return {}
    found: dict[str, dict[str, str]] = {}

    def visit(node: ast.AST, prefix: str) -> None:  # qualified names as __qualname__ has them
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                found[f"{prefix}{child.name}"] = _docs_under(child)
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, f"{prefix}{child.name}.<locals>.")
            else:  # an if, try or with block opens no scope
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def _docs_under(node: ast.ClassDef) -> dict[str, str]:
    docs: dict[str, str] = {}
    for field, after in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[field.target.id] = inspect.cleandoc(after.value.value)
    return docs


class DocumentedJsonSchema(GenerateJsonSchema):
    """Adds each model field's docstring as its `description` (an explicit one wins)."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        cls: type[Any] = schema["cls"]
        docs = attribute_docstrings(cls)
        properties: dict[str, Any] = json_schema.get("properties", {})
        for name, field in cls.model_fields.items():
            key = field.alias or name
            if key in properties and name in docs:
                properties[key].setdefault("description", docs[name])
        return json_schema
