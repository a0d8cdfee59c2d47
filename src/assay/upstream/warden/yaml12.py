"""Reading YAML as Warden does: the YAML 1.2 core schema, over PyYAML's (YAML 1.1) parser.

Warden reads its suites and skill front matter with the npm `yaml` package (v2), whose
default is YAML 1.2's core schema; PyYAML's SafeLoader resolves plain scalars by YAML 1.1.
The two disagree on plain scalars only, and this loader resolves them as 1.2 does:

- booleans are `true`/`True`/`TRUE`/`false`/`False`/`FALSE` only: `yes`, `no`, `on`,
  `off`, `y`, `n` are strings;
- null is `~`, `null`, `Null`, `NULL` or nothing;
- integers are decimal (`010` is ten), `0o17` or `0x1F`; no `_`, no `1:30` sexagesimals;
- floats need a dot or an exponent; `.inf`, `-.Inf`, `.nan` and the like;
- anything else is a string: `2024-01-01` is no date, `<<` is a plain key (no merge).

A key written twice in one mapping is an error, as in the YAML spec and Warden's parser.
Every YAML file assay reads as a suite goes through here (Warden's, a `_suite.yaml`,
assay's own), so one file means the same thing to both tools.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

__all__ = ["compose", "load"]

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?[0-9]+[eE][-+]?[0-9]+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_TAG = "tag:yaml.org,2002:"


def compose(text: str) -> tuple[yaml.Node | None, Any]:
    """The single document in `text`: its node tree (for positions) and its data.

    Raises yaml.YAMLError (a MarkedYAMLError, with a position, where one is known).
    """
    loader = _loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _refuse_duplicate_keys(node)
        return node, loader.construct_document(node)
    finally:
        loader.dispose()


def load(text: str) -> Any:
    """The data of the single document in `text` (skill front matter)."""
    return compose(text)[1]


@functools.cache
def _loader_class() -> type:
    import yaml  # lazy: start-up (yaml only when used)

    # libyaml's parser (when PyYAML was built with it) is several times faster than the
    # pure-Python one and gives the same nodes, marks and errors; it asks the Python
    # resolver below for every plain scalar's tag.
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class CoreSchemaLoader(base):  # type: ignore[valid-type, misc]
        yaml_implicit_resolvers: dict[str, list[tuple[str, re.Pattern[str]]]] = {}

        def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep)
            except ValueError as exc:  # an explicit `!!timestamp 2024-13-45`
                raise yaml.constructor.ConstructorError(
                    None, None, f"cannot read {node.value!r} as {node.tag}: {exc}", node.start_mark
                ) from None

    # In resolution order: a plain `1` is an integer before it could be a float.
    for tag, pattern, first in (
        ("bool", _BOOL, "tTfF"),
        ("int", _INT, "-+0123456789"),
        ("float", _FLOAT, "-+.0123456789"),
    ):
        CoreSchemaLoader.add_implicit_resolver(_TAG + tag, pattern, list(first))
    CoreSchemaLoader.add_implicit_resolver(_TAG + "null", _NULL, ["~", "n", "N", ""])
    CoreSchemaLoader.add_constructor(_TAG + "int", _construct_int)
    return CoreSchemaLoader


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    import yaml  # lazy: start-up (yaml only when used)

    text = loader.construct_scalar(node)
    if not _INT.match(text):  # an explicit `!!int` in YAML 1.1's forms (`1_000`, `0b1`)
        return yaml.SafeLoader.construct_yaml_int(loader, node)  # type: ignore[no-any-return]
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text, 10)


def _refuse_duplicate_keys(root: yaml.Node) -> None:
    """A key written twice in one mapping is an error; PyYAML would keep the last silently
    (two `evals:` blocks left by a merge lose cases)."""
    import yaml  # lazy: start-up (yaml only when used)

    pending, seen = [root], set()
    while pending:
        node = pending.pop()
        if id(node) in seen:  # an alias: one node, maybe many references
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[str, yaml.Node] = {}
            for key, value in node.value:
                pending.append(value)
                if not isinstance(key, yaml.ScalarNode) or key.tag == _TAG + "merge":
                    continue  # an explicit `!!merge <<` still merges (PyYAML's constructor)
                if key.value in first:
                    line = first[key.value].start_mark.line + 1
                    raise yaml.MarkedYAMLError(
                        problem=f"duplicate key {key.value!r} (first written on line {line})",
                        problem_mark=key.start_mark,
                    )
                first[key.value] = key
        elif isinstance(node, yaml.SequenceNode):
            pending.extend(node.value)
