"""Key paths to line/column, for JSON and YAML."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from assay._util.textpos import LineIndex, json_positions, yaml_positions

JSON_TEXT = """\
{
  "a": [1, {"b": null}, [], {}],
  "c" :
    {"d": "x\\"y", "e": [true, false, -1.5e3]},
  "f": "\\u00e9"
}
"""


def test_json_positions_of_keys_and_items() -> None:
    positions = json_positions(JSON_TEXT)
    assert positions.by_path[()] == (1, 1)
    assert positions.by_path[("a",)] == (2, 3)
    assert positions.by_path[("a", 0)] == (2, 9)
    assert positions.by_path[("a", 1, "b")] == (2, 13)
    assert positions.by_path[("a", 3)] == (2, 29)
    assert positions.by_path[("c", "d")] == (4, 6)
    assert positions.by_path[("c", "e", 2)] == (4, 38)
    assert positions.by_path[("f",)] == (5, 3)


def test_locate_falls_back_to_the_nearest_existing_ancestor() -> None:
    positions = json_positions(JSON_TEXT)
    assert positions.locate(("c", "missing", 3)) == (3, 3)
    assert positions.locate(("nothing",)) == (1, 1)


def test_yaml_positions() -> None:
    text = "skill: s\nevals:\n  - name: a\n    files: [x, y]\n  - name: b\n1: one\n"
    positions = yaml_positions(yaml.compose(text))
    assert positions.by_path[("evals",)] == (2, 1)
    assert positions.by_path[("evals", 0)] == (3, 5)
    assert positions.by_path[("evals", 0, "files", 1)] == (4, 16)
    assert positions.by_path[("evals", 1, "name")] == (5, 5)
    assert positions.locate(("1",)) == positions.locate((1,)) == (6, 1)


def test_line_index() -> None:
    index = LineIndex("ab\ncd\n\nef")
    assert [index.position(i) for i in (0, 1, 2, 3, 6, 7)] == [
        (1, 1),
        (1, 2),
        (1, 3),
        (2, 1),
        (3, 1),
        (4, 1),
    ]


json_documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _paths(value: object, prefix: tuple = ()) -> set[tuple]:
    found = {prefix}
    if isinstance(value, dict):
        for key, item in value.items():
            found |= _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            found |= _paths(item, prefix + (number,))
    return found


@settings(max_examples=100, deadline=None)
@given(document=json_documents, indent=st.sampled_from([None, 0, 2]))
@pytest.mark.slow
def test_every_json_path_is_found(document: object, indent: int | None) -> None:
    text = json.dumps(document, indent=indent)
    assert set(json_positions(text).by_path) == _paths(document)
