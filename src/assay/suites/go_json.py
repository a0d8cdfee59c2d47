"""Go's `encoding/json` decoding rules that PVYai task suites rely on, for pydantic models.

PVYai decodes its suites into Go structs, which differs from a plain JSON reading in
three ways that change what a suite may contain:
- keys match field names case-insensitively (`ID`, `Tasks`, `WorkspaceFixture` work);
  Go folds ASCII letters, plus `ſ` (s) and the Kelvin sign `K` (k);
- `null` leaves a field at its zero value, so it is as if the key were absent, and
  never undoes an earlier value of the same key; in a list, `null` is the zero element
  (`""` in a string list, `{}` in a list of objects);
- a key given twice (in any spelling) keeps the last value, except that two objects
  are merged, as Go decodes the second into the struct the first filled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["go_fold", "go_struct"]

_SPECIAL_FOLDS = {"\u017f": "S", "\u212a": "K"}


def go_fold(key: str) -> str:
    """The form under which Go matches a JSON key to a field name."""
    return "".join(
        _SPECIAL_FOLDS.get(char, char.upper() if char.isascii() else char) for char in key
    )


def go_struct(
    value: Any,
    fields: Iterable[str],
    *,
    string_lists: Iterable[str] = (),
    object_lists: Iterable[str] = (),
) -> Any:
    """`value` (a JSON object) as Go would fill a struct with `fields`, for pydantic.

    Keys are renamed to their field; unknown keys stay as written, for the model to
    refuse. Anything but an object is returned as is (the model reports its type).
    """
    if not isinstance(value, Mapping):
        return value
    by_fold = {go_fold(name): name for name in fields}
    zero_of: dict[str, Any] = {name: "" for name in string_lists}
    zero_of.update({name: {} for name in object_lists})
    result: dict[str, Any] = {}
    for key, item in value.items():
        name = by_fold.get(go_fold(key), key) if isinstance(key, str) else key
        if item is None:
            continue
        if name in zero_of and isinstance(item, list):
            item = [zero_of[name] if element is None else element for element in item]
        previous = result.get(name)
        if isinstance(previous, Mapping) and isinstance(item, Mapping):
            item = {**previous, **item}
        result[name] = item
    return result
