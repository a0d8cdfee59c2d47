"""Line/column positions of keys and values in YAML and JSON text.

Validation errors arrive as key paths (`("evals", 0, "given")`); users need `file:line:col`.
`json_positions` and `yaml_positions` map every key path present in a document to the
1-based (line, col) of its key (object members) or its value (array items and the root),
and `Positions.locate` finds the nearest existing ancestor of a path that is not there
(a missing field points at the mapping that lacks it).
"""

from __future__ import annotations

import bisect
import json.decoder
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml

__all__ = ["LineIndex", "Positions", "json_positions", "yaml_positions"]

KeyPath = tuple[Hashable, ...]


class LineIndex:
    """Turns character offsets of one text into 1-based (line, col)."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, offset) - 1
        return line + 1, offset - self._starts[line] + 1


@dataclass(frozen=True)
class Positions:
    """Key path -> (line, col) for one parsed document."""

    by_path: dict[KeyPath, tuple[int, int]]
    duplicates: tuple[KeyPath, ...] = ()
    """Key paths written twice in the same object (JSON keeps the last one)."""

    def locate(self, path: Sequence[Hashable]) -> tuple[int, int]:
        """The position of `path`, or of its longest prefix that exists; (1, 1) at worst."""
        found: KeyPath = ()
        for element in path:
            step = self._step(found, element)
            if step is None:
                break
            found = step
        return self.by_path.get(found, (1, 1))

    def _step(self, prefix: KeyPath, element: Hashable) -> KeyPath | None:
        for candidate in (element, str(element)):
            if prefix + (candidate,) in self.by_path:
                return prefix + (candidate,)
        return None


# The C string scanner json.loads itself uses (typeshed does not declare it).
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")


def json_positions(text: str) -> Positions:
    """Positions of every key path in `text`, which must already be valid JSON.

    Iterative rather than recursive, so nesting as deep as `json.loads` accepts is fine.
    """
    index = LineIndex(text)
    offsets: dict[KeyPath, int] = {}
    duplicates: list[KeyPath] = []
    # One frame per open container: [is_object, its path, the index of its current item].
    stack: list[list] = []

    def skip(i: int) -> int:
        match = _WHITESPACE.match(text, i)
        return match.end() if match else i

    def read_key(i: int, parent: KeyPath) -> tuple[KeyPath, int]:
        key, end = _scanstring(text, i + 1)
        if parent + (key,) in offsets:
            duplicates.append(parent + (key,))
        offsets[parent + (key,)] = i
        colon = skip(end)
        return parent + (key,), skip(colon + 1)

    i = skip(0)
    path: KeyPath = ()
    offsets[path] = i
    while True:
        char = text[i]
        if char == "{":
            i = skip(i + 1)
            if text[i] != "}":
                stack.append([True, path, 0])
                path, i = read_key(i, path)
                continue
            i = skip(i + 1)
        elif char == "[":
            i = skip(i + 1)
            if text[i] != "]":
                stack.append([False, path, 0])
                path = path + (0,)
                offsets[path] = i
                continue
            i = skip(i + 1)
        elif char == '"':
            i = skip(_scanstring(text, i + 1)[1])
        else:
            match = _SCALAR.match(text, i)
            i = skip(match.end() if match else i + 1)
        # A value ended at i: move to the next item of the innermost open container.
        while stack:
            frame = stack[-1]
            if text[i] == ",":
                i = skip(i + 1)
                if frame[0]:
                    path, i = read_key(i, frame[1])
                else:
                    frame[2] += 1
                    path = frame[1] + (frame[2],)
                    offsets[path] = i
                break
            stack.pop()
            i = skip(i + 1)
        else:
            return Positions({p: index.position(o) for p, o in offsets.items()}, tuple(duplicates))


def yaml_positions(root: yaml.Node | None) -> Positions:
    """Positions of every key path under a composed YAML node (keys use their text)."""
    # lazy: start-up (yaml only when used)
    import yaml  # imported by whoever composed `root`; only YAML users pay for it

    by_path: dict[KeyPath, tuple[int, int]] = {}
    if root is None:
        return Positions(by_path)
    pending: list[tuple[KeyPath, yaml.Node]] = [((), root)]
    by_path[()] = _mark(root)
    seen: set[int] = set()
    while pending:
        path, node = pending.pop()
        if id(node) in seen:  # aliases can make the node graph cyclic
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key_path = path + (str(key_node.value),)
                by_path[key_path] = _mark(key_node)  # the last duplicate wins, as in PyYAML
                pending.append((key_path, value_node))
        elif isinstance(node, yaml.SequenceNode):
            for number, item in enumerate(node.value):
                by_path.setdefault(path + (number,), _mark(item))
                pending.append((path + (number,), item))
    return Positions(by_path)


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1
