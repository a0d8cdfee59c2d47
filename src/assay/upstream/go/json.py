"""Go's `encoding/json` rules that assay follows where a Go program reads the JSON.

PVYai decodes its suites (and its agents' trace lines) with Go's decoder, and Cassandra
its manifests; Go differs from a plain JSON reading in ways that change what a file may
contain:
- text: a byte that is not part of valid UTF-8 reads as U+FFFD, each byte one
  (`go_text`); an escape with half a surrogate pair (`"\\ud800"`) reads as U+FFFD;
  a byte order mark is an invalid character, `NaN` is no JSON (`go_loads`);
- keys match field names case-insensitively (`ID`, `Tasks`, `WorkspaceFixture` work);
  Go folds ASCII letters, plus `ſ` (s) and the Kelvin sign `K` (k);
- each occurrence of a key (in any spelling) is decoded in turn into the same field
  (`go_struct`): `null` leaves a string or an object as it was and empties a list; an
  object merges into the one before; a list decodes into the elements of the one
  before, element by element, and is cut to its own length; a value of the wrong type
  is an error even when a later occurrence is right. A document read with `go_loads`
  keeps every occurrence (`GoObject`); a plain `dict` holds only the last of each
  spelling. A shorter list cuts Go's slice, not its storage: a third, longer one
  decodes into the elements the second cut off.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from assay.upstream.go.text import go_text

__all__ = ["GoObject", "go_fold", "go_keys", "go_loads", "go_struct", "go_text", "go_values"]

_SPECIAL_FOLDS = {"\u017f": "S", "\u212a": "K"}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class GoObject(dict[str, Any]):
    """A JSON object that also keeps every key/value pair in order, repeated keys
    included, for `go_struct` (as a mapping it holds the last value of each key)."""

    def __init__(self, pairs: Iterable[tuple[str, Any]] = ()) -> None:
        self.pairs = [
            (_without_surrogates(key), _without_surrogates(value)) for key, value in pairs
        ]
        super().__init__(self.pairs)

    def merged(self, later: GoObject) -> GoObject:
        """This object with `later` decoded into it: both occurrences' pairs, in order."""
        return GoObject([*self.pairs, *later.pairs])


def _without_surrogates(value: Any) -> Any:
    """Strings (in lists too; objects clean themselves) with lone surrogates as U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def go_loads(text: str) -> Any:
    """The JSON `text` as Go reads it, every object a GoObject.

    ValueError (a json.JSONDecodeError, with its position, where json can tell) for what
    Go refuses: malformed JSON, a byte order mark, `NaN`, too deep a nesting.
    """
    try:
        return json.loads(text, object_pairs_hook=GoObject, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def go_fold(key: str) -> str:
    """The form under which Go matches a JSON key to a field name."""
    return "".join(
        _SPECIAL_FOLDS.get(char, char.upper() if char.isascii() else char) for char in key
    )


def go_keys(data: Mapping[Any, Any]) -> set[str]:
    """The keys of a JSON object in the form Go matches them to a struct's fields."""
    return {go_fold(key) for key in data if isinstance(key, str)}


def go_values(data: Mapping[Any, Any], field: str) -> list[Any]:
    """The values of every key of `data` Go would decode into the field `field` (folded)."""
    return [v for k, v in data.items() if isinstance(k, str) and go_fold(k) == field]


def go_struct(
    value: Any,
    fields: Iterable[str],
    *,
    string_lists: Iterable[str] = (),
    object_lists: Iterable[str] = (),
    structs: Iterable[str] = (),
) -> Any:
    """`value` (a JSON object) as Go fills a struct with `fields`, for pydantic.

    Each field is a string, unless named a list of strings, a list of objects or an
    object (a struct). Keys are renamed to their field; unknown keys stay as written,
    for the model to refuse. Anything but an object is returned as is (the model
    reports its type).
    """
    if not isinstance(value, Mapping):
        return value
    kinds = dict.fromkeys(fields, _STRING)
    kinds.update(dict.fromkeys(string_lists, _STRINGS))
    kinds.update(dict.fromkeys(object_lists, _OBJECTS))
    kinds.update(dict.fromkeys(structs, _STRUCT))
    by_fold = {go_fold(name): name for name in kinds}
    result: dict[str, Any] = {}
    # Each list's elements as Go's slice stores them: a shorter list cuts the slice's
    # length, not its storage, so a later, longer one decodes into the cut elements.
    storage: dict[str, list[Any]] = {}
    for key, item in value.pairs if isinstance(value, GoObject) else value.items():
        name = by_fold.get(go_fold(key), key)
        kind = kinds.get(name)
        if kind is None:
            result[name] = item
        elif name in result and _mistyped(kind, result[name]):
            continue  # Go reports the first value of the wrong type, whatever follows it
        elif kind in (_STRINGS, _OBJECTS) and (item is None or isinstance(item, list)):
            _decode_list(kind, name, item, result, storage)
        elif item is not None:  # null leaves a string or a struct as it was
            result[name] = _merged(result.get(name), item) if kind == _STRUCT else item
    return result


_STRING, _STRUCT, _STRINGS, _OBJECTS = "string", "struct", "strings", "objects"


def _mistyped(kind: str, value: Any) -> bool:
    if kind == _STRING:
        return not isinstance(value, str)
    if kind == _STRUCT:
        return not isinstance(value, Mapping)
    element = str if kind == _STRINGS else Mapping
    return not isinstance(value, list) or not all(isinstance(e, element) for e in value)


def _decode_list(
    kind: str,
    name: str,
    item: list[Any] | None,
    result: dict[str, Any],
    storage: dict[str, list[Any]],
) -> None:
    """Decode `item` into the slice field `name`: null (a nil slice) and `[]` drop its
    storage; any other list decodes element by element into what is stored."""
    if not item:
        storage.pop(name, None)
        if item is None:
            result.pop(name, None)
            return
    stored = storage.get(name, [])
    zero: Any = "" if kind == _STRINGS else GoObject()
    decoded = [
        _element_into(kind, stored[i] if i < len(stored) else zero, element)
        for i, element in enumerate(item)
    ]
    storage[name] = decoded + stored[len(decoded) :]
    result[name] = decoded


def _element_into(kind: str, previous: Any, element: Any) -> Any:
    if element is None or _mistyped(kind, [previous]):
        return previous  # null leaves an element as it was; a wrong type stays an error
    return _merged(previous, element) if kind == _OBJECTS else element


def _merged(previous: Any, item: Any) -> Any:
    """`item` decoded into the object `previous` (when both are objects)."""
    if not isinstance(previous, Mapping) or not isinstance(item, Mapping):
        return item
    return _as_go_object(previous).merged(_as_go_object(item))


def _as_go_object(value: Mapping[str, Any]) -> GoObject:
    return value if isinstance(value, GoObject) else GoObject(value.items())
