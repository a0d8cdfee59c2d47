"""Reading suite files: bytes -> text -> data with positions, and problems tied to a place.

Every problem a loader finds becomes a ConfigError with a `Location`; `Problems` collects
them all (validation reports every problem, not the first) and keeps unknown-key
warnings apart from errors.
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util import json_text
from assay._util.display import human_size
from assay._util.textpos import LineIndex, Positions, json_positions, yaml_positions
from assay.errors import ConfigError, SourcePosition

if TYPE_CHECKING:
    import yaml

__all__ = ["Document", "Problems", "read_document", "read_text"]


@dataclass(frozen=True)
class Document:
    """One parsed YAML or JSON file."""

    path: Path
    data: Any
    positions: Positions
    warnings: tuple[ConfigError, ...] = ()
    """Legal but suspect (a JSON key written twice): warnings, errors under --strict."""

    def location(self, key_path: tuple[Any, ...] = ()) -> SourcePosition:
        line, col = self.positions.locate(key_path)
        return SourcePosition(self.path, line, col)


@dataclass
class Problems:
    """Errors and warnings found while loading; `strict` turns unknown-key warnings into errors."""

    strict: bool = False
    errors: list[ConfigError] = field(default_factory=list)
    warnings: list[ConfigError] = field(default_factory=list)

    def error(self, message: str, location: SourcePosition | None = None) -> None:
        self.errors.append(ConfigError(message, location))

    def warn(self, message: str, location: SourcePosition | None = None) -> None:
        self.warnings.append(ConfigError(message, location))

    def add(self, problem: ConfigError) -> None:
        self.errors.extend(getattr(problem, "errors", [problem]))

    def unknown_key(
        self, message: str, location: SourcePosition, *, always_error: bool = False
    ) -> None:
        if self.strict or always_error:
            self.errors.append(ConfigError(message, location))
        else:
            self.warnings.append(ConfigError(message, location))


MAX_TEXT_BYTES = 32 * 1024**2
"""Suite files, skills and diffs are text people write; anything larger is a mistake."""


def read_text(path: Path, *, what: str = "file") -> str:
    """The file's text; a clear ConfigError (with the line of the first bad byte) otherwise."""
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode) and not stat.S_ISDIR(status.st_mode):
            # Reading a FIFO would wait forever for a writer; a device may never end.
            raise ConfigError(f"{what} is not a regular file", SourcePosition(path))
        size = status.st_size
        if size > MAX_TEXT_BYTES:
            raise ConfigError(
                f"{what} is {human_size(size)}, over the {human_size(MAX_TEXT_BYTES)} limit "
                "for the text assay reads (suites, skills, diffs)",
                SourcePosition(path),
            )
        raw = path.read_bytes()
    except IsADirectoryError:
        raise ConfigError(f"{what} is a directory, expected a file", SourcePosition(path)) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read {what}: {exc.strerror or exc}", SourcePosition(path)
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"{what} is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded)",
            SourcePosition(path, line, col),
        ) from None
    return text.removeprefix("\ufeff")


def read_document(path: Path) -> Document:
    """Parse a `.json`, `.yaml` or `.yml` file; malformed input raises ConfigError."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        return _parse_json(path, text)
    return _parse_yaml(path, text)


def _parse_json(path: Path, text: str) -> Document:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"malformed JSON: {exc.msg}", SourcePosition(path, exc.lineno, exc.colno)
        ) from None
    except RecursionError:
        raise ConfigError("malformed JSON: nested too deeply", SourcePosition(path, 1, 1)) from None
    if (offset := json_text.lone_surrogate_at(text, data)) is not None:
        # YAML refuses these itself; left in, one stops the run where its text is written.
        raise ConfigError(
            "malformed JSON: a \\uD800-\\uDFFF escape without the other half of its "
            "surrogate pair; write the character itself",
            SourcePosition(path, *LineIndex(text).position(offset)),
        ) from None
    positions = json_positions(text)
    # JSON parsers keep the last of two equal keys, as the suites' own tools do; the first
    # one's content is lost, which is almost always a merge leftover worth a word.
    duplicates = tuple(
        ConfigError(
            f"duplicate key {key_path[-1]!r}: only its last value counts",
            SourcePosition(path, *positions.by_path[key_path]),
        )
        for key_path in positions.duplicates
    )
    return Document(path, data, positions, duplicates)


def _parse_yaml(path: Path, text: str) -> Document:
    import yaml  # only projects with YAML suites pay for it

    try:
        node, data = _compose_and_construct(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        location = (
            SourcePosition(path, mark.line + 1, mark.column + 1) if mark else SourcePosition(path)
        )
        raise ConfigError(f"malformed YAML: {problem}", location) from None
    except yaml.reader.ReaderError as exc:
        line, col = LineIndex(text).position(exc.position)
        char = chr(exc.character) if isinstance(exc.character, int) else exc.character
        raise ConfigError(
            f"malformed YAML: character {char!r} is not allowed",
            SourcePosition(path, line, col),
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", _end_of(path, text)) from None
    except RecursionError:
        raise ConfigError("malformed YAML: nested too deeply", SourcePosition(path, 1, 1)) from None
    return Document(path, data, yaml_positions(node))


def _compose_and_construct(text: str) -> tuple[yaml.Node | None, Any]:
    import yaml

    # libyaml's parser (when PyYAML was built with it) is several times faster than the
    # pure-Python one and gives the same nodes, marks and errors.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _refuse_duplicate_keys(node)  # before construction flattens `<<` merges into maps
        return node, loader.construct_document(node)
    finally:
        loader.dispose()


def _refuse_duplicate_keys(root: yaml.Node) -> None:
    """A key written twice in one mapping is an error, as in the YAML spec and Warden's parser.

    PyYAML would keep the last silently: two `evals:` blocks left by a merge lose cases.
    """
    import yaml

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
                if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                    continue
                if key.value in first:
                    line = first[key.value].start_mark.line + 1
                    raise yaml.MarkedYAMLError(
                        problem=f"duplicate key {key.value!r} (first written on line {line})",
                        problem_mark=key.start_mark,
                    )
                first[key.value] = key
        elif isinstance(node, yaml.SequenceNode):
            pending.extend(node.value)


def _end_of(path: Path, text: str) -> SourcePosition:
    line, col = LineIndex(text).position(len(text))
    return SourcePosition(path, line, col)
