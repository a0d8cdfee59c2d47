"""Reading suite files: bytes -> text -> data with positions, and problems tied to a place.

Every problem a loader finds becomes a ConfigError with a `Location`; `Problems` collects
them all (validation reports every problem, not the first) and keeps unknown-key
warnings apart from errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util.display import human_size
from assay._util.textpos import LineIndex, Positions, json_positions, yaml_positions
from assay.errors import ConfigError, Location

if TYPE_CHECKING:
    import yaml

__all__ = ["Document", "Problems", "read_document", "read_text"]


@dataclass(frozen=True)
class Document:
    """One parsed YAML or JSON file."""

    path: Path
    data: Any
    positions: Positions

    def location(self, key_path: tuple[Any, ...] = ()) -> Location:
        line, col = self.positions.locate(key_path)
        return Location(self.path, line, col)


@dataclass
class Problems:
    """Errors and warnings found while loading; `strict` turns unknown-key warnings into errors."""

    strict: bool = False
    errors: list[ConfigError] = field(default_factory=list)
    warnings: list[ConfigError] = field(default_factory=list)

    def error(self, message: str, location: Location | None = None) -> None:
        self.errors.append(ConfigError(message, location))

    def warn(self, message: str, location: Location | None = None) -> None:
        self.warnings.append(ConfigError(message, location))

    def add(self, problem: ConfigError) -> None:
        self.errors.extend(getattr(problem, "errors", [problem]))

    def unknown_key(self, message: str, location: Location, *, always_error: bool = False) -> None:
        if self.strict or always_error:
            self.errors.append(ConfigError(message, location))
        else:
            self.warnings.append(ConfigError(message, location))


MAX_TEXT_BYTES = 32 * 1024**2
"""Suite files, skills and diffs are text people write; anything larger is a mistake."""


def read_text(path: Path, *, what: str = "file") -> str:
    """The file's text; a clear ConfigError (with the line of the first bad byte) otherwise."""
    try:
        size = path.stat().st_size
        if size > MAX_TEXT_BYTES:
            raise ConfigError(
                f"{what} is {human_size(size)}, over the {human_size(MAX_TEXT_BYTES)} limit "
                "for the text assay reads (suites, skills, diffs)",
                Location(path),
            )
        raw = path.read_bytes()
    except IsADirectoryError:
        raise ConfigError(f"{what} is a directory, expected a file", Location(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror or exc}", Location(path)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"{what} is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded)",
            Location(path, line, col),
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
            f"malformed JSON: {exc.msg}", Location(path, exc.lineno, exc.colno)
        ) from None
    except RecursionError:
        raise ConfigError("malformed JSON: nested too deeply", Location(path, 1, 1)) from None
    return Document(path, data, json_positions(text))


def _parse_yaml(path: Path, text: str) -> Document:
    import yaml  # only projects with YAML suites pay for it

    try:
        node, data = _compose_and_construct(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        location = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path)
        raise ConfigError(f"malformed YAML: {problem}", location) from None
    except yaml.reader.ReaderError as exc:
        line, col = LineIndex(text).position(exc.position)
        char = chr(exc.character) if isinstance(exc.character, int) else exc.character
        raise ConfigError(
            f"malformed YAML: character {char!r} is not allowed",
            Location(path, line, col),
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", _end_of(path, text)) from None
    except RecursionError:
        raise ConfigError("malformed YAML: nested too deeply", Location(path, 1, 1)) from None
    return Document(path, data, yaml_positions(node))


def _compose_and_construct(text: str) -> tuple[yaml.Node | None, Any]:
    import yaml

    # libyaml's parser (when PyYAML was built with it) is several times faster than the
    # pure-Python one and gives the same nodes, marks and errors.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


def _end_of(path: Path, text: str) -> Location:
    line, col = LineIndex(text).position(len(text))
    return Location(path, line, col)
