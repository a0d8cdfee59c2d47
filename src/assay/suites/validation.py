"""Pydantic validation of a parsed document, with every error placed at `path:line:col`.

Unknown keys are tolerated the way Warden tolerates them: each becomes a warning naming
the key, the keys are dropped, and the data is validated again. With `--strict` (or for
formats that reject unknown fields, like PVYai task suites) they are errors.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from assay.suites.document import Document, Problems

__all__ = ["describe", "dotted", "validate_model", "validate_quietly"]

M = TypeVar("M", bound=BaseModel)

_JSON_TYPE_NAMES = {
    dict: "a mapping",
    list: "a list",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


def dotted(key_path: Sequence[Any]) -> str:
    """`("evals", 0, "given")` -> `evals[0].given`."""
    text = ""
    for element in key_path:
        if isinstance(element, int):
            text += f"[{element}]"
        else:
            text += f".{element}" if text else str(element)
    return text


def validate_model(
    model: type[M],
    doc: Document,
    problems: Problems,
    *,
    data: Any = None,
    base: tuple[Any, ...] = (),
    unknown_keys_are_errors: bool = False,
    unknown_key_hint: str = "ignored; an error with --strict",
) -> M | None:
    """Validate `data` (default: the whole document) against `model`; None when it is invalid.

    `base` is where `data` sits inside the document, so errors point at the right line.
    """
    value = doc.data if data is None else data
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    for error in unknown:
        loc = base + tuple(error["loc"])
        where = f" in {dotted(loc[:-1])}" if len(loc) > 1 else ""
        problems.unknown_key(
            f"unknown key {loc[-1]!r}{where} ({unknown_key_hint})",
            doc.location(loc),
            always_error=unknown_keys_are_errors,
        )
    others = [e for e in errors if e["type"] != "extra_forbidden"]
    for error in others:
        loc = base + tuple(error["loc"])
        problems.error(describe(error, loc), doc.location(loc))
    if others or problems.strict or unknown_keys_are_errors:
        return None
    return validate_quietly(model, _without_keys(value, [e["loc"] for e in unknown]))


def validate_quietly(model: type[M], data: Any) -> M | None:
    """The model, or None without reporting anything (the full validation already did)."""
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


def describe(error: Any, loc: tuple[Any, ...]) -> str:
    """One pydantic error as a sentence a suite author can act on."""
    kind = error["type"]
    if kind == "missing":
        where = f" in {dotted(loc[:-1])}" if len(loc) > 1 else ""
        return f"missing required field {loc[-1]!r}{where}"
    message = error["msg"]
    got = _JSON_TYPE_NAMES.get(type(error.get("input")), type(error.get("input")).__name__)
    if kind in {"model_type", "model_attributes_type", "dict_type"}:
        message = f"expected a mapping, got {got}"
    elif kind.endswith("_type"):
        message = f"{message}, got {got}"
    elif kind in {"literal_error", "enum"}:
        message = f"{message}, got {error.get('input')!r}"
    return f"{dotted(loc)}: {message}" if loc else message


def _without_keys(data: Any, locs: list[tuple[Any, ...]]) -> Any:
    cleaned = copy.deepcopy(data)
    for loc in locs:
        parent = cleaned
        for element in loc[:-1]:
            parent = parent[element]
        parent.pop(loc[-1], None)
    return cleaned
