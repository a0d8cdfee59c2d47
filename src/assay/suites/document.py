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
from typing import Any

from assay._util import json_text
from assay._util.display import human_size
from assay._util.textpos import LineIndex, Positions, json_positions, yaml_positions
from assay.errors import ConfigError, SourcePosition
from assay.suites.file_kind import file_kind
from assay.upstream.go.json import go_loads, go_text
from assay.upstream.warden import yaml12

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
    return _utf8_text(_read_bytes(path, what), path, what)


def _read_bytes(path: Path, what: str) -> bytes:
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
        return path.read_bytes()
    except IsADirectoryError:
        raise ConfigError(f"{what} is a directory, expected a file", SourcePosition(path)) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read {what}: {exc.strerror or exc}", SourcePosition(path)
        ) from None


def _utf8_text(raw: bytes, path: Path, what: str) -> str:
    """`raw` decoded, without its byte order mark."""
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
    raw = _read_bytes(path, "file")
    if path.suffix.lower() == ".json":
        return _read_json(path, raw)
    return _parse_yaml(path, _utf8_text(raw, path, "file"))


def _read_json(path: Path, raw: bytes) -> Document:
    """A JSON document; a PVYai task suite as PVYai's Go decoder reads it (`go_json`).

    Go takes what is refused here otherwise (bytes that are not UTF-8, half a surrogate
    pair: both read as U+FFFD) and refuses what is taken otherwise (a byte order mark).
    """
    try:
        doc = _parse_json(path, _utf8_text(raw, path, "file"))
    except ConfigError:
        suite = _go_suite_or_none(path, raw)
        if suite is None:
            raise
        return suite
    return _parse_go_suite(path, raw) if _is_task_suite(doc) else doc


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
    duplicates = _duplicates(path, positions, "only its last value counts")
    return Document(path, data, positions, duplicates)


def _is_task_suite(doc: Document) -> bool:
    return file_kind(doc.path, doc.data) == "task-suite"


def _go_suite_or_none(path: Path, raw: bytes) -> Document | None:
    """The task suite Go reads in `raw`, or None when Go reads no task suite there either."""
    try:
        suite = _parse_go_suite(path, raw)
    except ConfigError:
        return None
    return suite if _is_task_suite(suite) else None


def _parse_go_suite(path: Path, raw: bytes) -> Document:
    text = go_text(raw)
    if text.startswith("\ufeff"):
        raise ConfigError(
            "malformed JSON: the file starts with a byte order mark (U+FEFF), which PVYai's "
            "Go decoder refuses; remove it",
            SourcePosition(path, 1, 1),
        )
    try:
        data = go_loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"malformed JSON: {exc.msg}", SourcePosition(path, exc.lineno, exc.colno)
        ) from None
    except ValueError as exc:  # NaN, or too deep a nesting: json says not where
        raise ConfigError(f"malformed JSON: {exc}", SourcePosition(path)) from None
    positions = json_positions(text)
    how = "PVYai's Go decoder reads each occurrence into the same field, in turn (docs/pvyai.md)"
    return Document(path, data, positions, _duplicates(path, positions, how))


def _duplicates(path: Path, positions: Positions, what_counts: str) -> tuple[ConfigError, ...]:
    """A warning for each key written twice in one object, saying which value counts."""
    return tuple(
        ConfigError(
            f"duplicate key {key_path[-1]!r}: {what_counts}",
            SourcePosition(path, *positions.by_path[key_path]),
        )
        for key_path in positions.duplicates
    )


def _parse_yaml(path: Path, text: str) -> Document:
    # lazy: start-up (yaml only when used)
    import yaml  # only projects with YAML suites pay for it

    try:
        node, data = yaml12.compose(text)  # YAML 1.2's core schema, as Warden reads it
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


def _end_of(path: Path, text: str) -> SourcePosition:
    line, col = LineIndex(text).position(len(text))
    return SourcePosition(path, line, col)
