"""Pydantic validation of a parsed document, with every error placed at `path:line:col`.

Unknown keys are tolerated the way Warden tolerates them: each becomes a warning naming
the key, the keys are dropped, and the data is validated again. With `--strict` (or for
formats that reject unknown fields, like PVYai task suites) they are errors. Input the
suites' own tools accept but that is most likely a mistake (`wire_common.SUSPICIOUS`: an
empty `given`, a scaffold's `TODO:` placeholder) is a warning the same way.
"""

from __future__ import annotations

import copy
import difflib
import types
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from assay.suites.document import Document, Problems
from assay.suites.wire_common import ACCEPT_SUSPICIOUS, SUSPICIOUS

__all__ = [
    "checked_graders",
    "describe",
    "did_you_mean",
    "dotted",
    "known_keys",
    "validate_model",
    "validate_quietly",
]

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
        guess = did_you_mean(loc[-1], known_keys(model, tuple(error["loc"])[:-1]))
        problems.unknown_key(
            f"unknown key {loc[-1]!r}{where}{guess} ({unknown_key_hint})",
            doc.location(loc),
            always_error=unknown_keys_are_errors,
        )
    suspicious = [e for e in errors if e["type"] in SUSPICIOUS]
    for error in suspicious:
        loc = base + tuple(error["loc"])
        problems.unknown_key(f"{describe(error, loc)} (an error with --strict)", doc.location(loc))
    others = [e for e in errors if e["type"] != "extra_forbidden" and e["type"] not in SUSPICIOUS]
    for error in others:
        loc = base + tuple(error["loc"])
        problems.error(describe(error, loc), doc.location(loc))
    if others or problems.strict or unknown_keys_are_errors:
        return None
    return validate_quietly(model, _without_keys(value, [e["loc"] for e in unknown]))


def validate_quietly(model: type[M], data: Any) -> M | None:
    """The model, or None without reporting anything (the full validation already did)."""
    try:
        return model.model_validate(data, context={ACCEPT_SUSPICIOUS: True})
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


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """` (did you mean 'should_find'?)` for a near miss among `choices`, else ``."""
    return _near_miss(str(word), tuple(choices))


@lru_cache(maxsize=1024)
def _near_miss(word: str, choices: tuple[str, ...]) -> str:
    # Kept: a suite repeating one unknown key in each of its cases asks the same question.
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


def known_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys the mapping at `loc` inside `model` may hold, as a user writes them."""
    current: list[Any] = [model]
    for element in loc:
        following: list[Any] = []
        for candidate in current:
            for inner in _unwrapped(candidate):
                if isinstance(element, int):
                    origin = get_origin(inner)
                    if origin in (list, tuple, set, frozenset) or inner in (list, tuple):
                        following += [a for a in get_args(inner) if a is not Ellipsis]
                elif isinstance(inner, type) and issubclass(inner, BaseModel):
                    for name, info in inner.model_fields.items():
                        if element in (name, info.alias):
                            following.append(info.annotation)
        current = following
    keys: list[str] = []
    for candidate in current:
        for inner in _unwrapped(candidate):
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                keys += [info.alias or name for name, info in inner.model_fields.items()]
    return keys


def _unwrapped(annotation: Any) -> list[Any]:
    """`A | B | None`, `Annotated[A, ...]` -> the types inside."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _unwrapped(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [t for arg in get_args(annotation) for t in _unwrapped(arg)]
    return [annotation]


def _without_keys(data: Any, locs: list[tuple[Any, ...]]) -> Any:
    cleaned = copy.deepcopy(data)
    for loc in locs:
        parent = cleaned
        for element in loc[:-1]:
            parent = parent[element]
        parent.pop(loc[-1], None)
    return cleaned


def checked_graders(names: Sequence[str], doc: Document, problems: Problems) -> tuple[str, ...]:
    """A suite's `graders`, each checked to name a usable grader (an error at its line if
    not); the ones that do, in order."""
    if not names:
        return ()
    # lazy: start-up (not loaded with this module)
    from assay.registry.graders import grader_problem

    kept: list[str] = []
    for index, name in enumerate(names):
        problem = grader_problem(name, project_dir=doc.path.parent)
        if problem is None:
            kept.append(name)
        else:
            problems.error(problem, doc.location(("graders", index)))
    return tuple(kept)
