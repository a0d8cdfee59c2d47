"""A static reader of Warden's suite declarations, `<eval root>/src/**/*.eval.ts` (no Node).

Warden's JSON categories get their skill, runtime and model from code, e.g.

    const evals = discoverEvalScenarios({
      category: 'code-review',
      skill: '../warden/src/builtin-skills/code-review/SKILL.md',
      runtime: DEFAULT_EVAL_RUNTIME,
      model,
    });

and their harness options (`maxTurns`, `timeoutMs`) from `createWardenEvalHarness({...})`.
A small tokenizer finds those calls and reads their object literals. Values are string
and number literals (`120_000` included), a top-level `const` holding one, or the few
names Warden itself defines (`DEFAULT_EVAL_RUNTIME`, `DEFAULT_EVAL_MODEL`,
`defaultEvalModel()`). Anything else is not evaluated: it is a warning naming the file
and line and the `_suite.yaml` that would say the same thing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import ConfigError, SourcePosition
from assay.suites.ts_tokens import Token, tokenize

__all__ = [
    "EVAL_TS_DIR",
    "WARDEN_DEFAULT_MODEL",
    "WARDEN_DEFAULT_RUNTIME",
    "EvalDeclaration",
    "EvalValue",
    "eval_ts_files",
    "read_eval_declarations",
    "warden_model",
]

EVAL_TS_DIR = "src"
"""Where Warden keeps `*.eval.ts`, relative to the eval root (`packages/evals/src/`)."""
WARDEN_DEFAULT_MODEL = "openrouter/anthropic/claude-sonnet-4.6"
"""Warden's `DEFAULT_EVAL_MODEL` (packages/evals/src/types.ts)."""
WARDEN_DEFAULT_RUNTIME = "pi"
"""Warden's `DEFAULT_EVAL_RUNTIME`."""

_SKIPPED = frozenset({"node_modules", "dist"})
"""Directories Warden's vitest config excludes from `src/**/*.eval.ts`."""
_DISCOVER_CALLS = ("discoverEvalScenarios", "discoverVerificationEvalScenarios", "discoverEvals")
_HARNESS_CALLS = ("createWardenEvalHarness", "createVerificationEvalHarness")
# The keys assay uses; the others (apiKey, verbose, baseDir, ...) are read past silently.
_DISCOVER_KEYS = ("category", "skill", "runtime", "model")
_HARNESS_KEYS = ("runtime", "model", "maxTurns", "timeoutMs")
_SUITE_YAML_KEY = {
    "skill": "skill",
    "runtime": "runtime",
    "model": "model",
    "maxTurns": "max_turns",
    "timeoutMs": "timeout_ms",
}


def warden_model(environ: Mapping[str, str] | None = None) -> str:
    """Warden's `defaultEvalModel()`: `WARDEN_MODEL`, else the OpenRouter default."""
    env = os.environ if environ is None else environ
    # Warden uses `??`; an empty WARDEN_MODEL would name no model at all, so it counts as unset.
    return env.get("WARDEN_MODEL") or WARDEN_DEFAULT_MODEL


@dataclass(frozen=True)
class EvalValue:
    value: str | int | float
    how: str
    """`literal`, or what it was resolved from (`defaultEvalModel()`, a const's name)."""
    location: SourcePosition


@dataclass
class EvalDeclaration:
    """One `discover...({...})` call and the harness options of its file."""

    path: Path
    line: int
    call: str
    values: dict[str, EvalValue] = field(default_factory=dict)
    from_harness: set[str] = field(default_factory=set)
    """The keys of `values` the file's harness set: Warden's runner takes them over a
    scenario's own (`options.model ?? meta.model`)."""

    @property
    def category(self) -> str | None:
        value = self.values.get("category")
        return value.value if value and isinstance(value.value, str) else None

    @property
    def location(self) -> SourcePosition:
        return SourcePosition(self.path, self.line)


_KNOWN_NAMES: dict[str, str] = {
    "DEFAULT_EVAL_RUNTIME": WARDEN_DEFAULT_RUNTIME,
    "DEFAULT_EVAL_MODEL": WARDEN_DEFAULT_MODEL,
}


@dataclass
class _Reader:
    path: Path
    text: str
    tokens: list[Token]
    environ: Mapping[str, str]
    warnings: list[ConfigError]
    constants: dict[str, EvalValue | str] = field(default_factory=dict)
    """Top-level `const NAME = ...`: a value, or the source text of what it is."""

    def location(self, token: Token) -> SourcePosition:
        return SourcePosition(self.path, token.line, token.col)

    def expression(self, start: int) -> tuple[EvalValue | str, int]:
        """The value starting at `start`, or its source text when it is not one; and the end."""
        end, depth = start, 0
        while end < len(self.tokens):
            text = self.tokens[end].text
            if depth == 0 and text in (",", ";", "}", ")", "]"):
                break
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}"):
                depth -= 1
            end += 1
        parts = self.tokens[start:end]
        if not parts:
            return "", end
        source = self.text[parts[0].start : parts[-1].start + len(parts[-1].text)]
        first = parts[0]
        where = self.location(first)
        if len(parts) == 1 and first.kind in ("str", "num", "template") and first.value is not None:
            return EvalValue(first.value, "literal", where), end
        if len(parts) == 2 and first.text == "-" and parts[1].kind == "num":
            number = parts[1].value
            if isinstance(number, int | float):
                return EvalValue(-number, "literal", where), end
        if len(parts) == 1 and first.kind == "name":
            return self.name_value(first), end
        if [t.text for t in parts] == ["defaultEvalModel", "(", ")"]:
            how = "defaultEvalModel(): WARDEN_MODEL" if self.environ.get("WARDEN_MODEL") else None
            return EvalValue(warden_model(self.environ), how or "defaultEvalModel()", where), end
        return source, end

    def name_value(self, token: Token) -> EvalValue | str:
        where = self.location(token)
        if token.text in self.constants:
            value = self.constants[token.text]
            if isinstance(value, EvalValue):
                how = f"const {token.text}" if value.how == "literal" else value.how
                return EvalValue(value.value, how, value.location)
            return f"{token.text} = {value}"
        if token.text in _KNOWN_NAMES:
            return EvalValue(_KNOWN_NAMES[token.text], token.text, where)
        return token.text

    def read_constants(self) -> None:
        depth = 0
        for index, token in enumerate(self.tokens):
            if token.text in ("{", "(", "["):
                depth += 1
            elif token.text in ("}", ")", "]"):
                depth -= 1
            elif (
                depth == 0
                and token.text == "const"
                and index + 2 < len(self.tokens)
                and self.tokens[index + 1].kind == "name"
                and self.tokens[index + 2].text == "="
            ):
                value, _ = self.expression(index + 3)
                self.constants[self.tokens[index + 1].text] = value

    def object_argument(self, call_index: int) -> list[tuple[str, Token, EvalValue | str]]:
        """The `key: value` pairs of `call({...})`; shorthand `key` reads the const `key`."""
        tokens = self.tokens
        if call_index + 2 >= len(tokens) or tokens[call_index + 1].text != "(":
            return []
        if tokens[call_index + 2].text != "{":
            return []
        pairs: list[tuple[str, Token, EvalValue | str]] = []
        index = call_index + 3
        while index < len(tokens) and tokens[index].text != "}":
            token = tokens[index]
            if token.text == ",":
                index += 1
                continue
            if token.text == "...":
                value, index = self.expression(index + 1)
                pairs.append(("...", token, f"...{value}"))
                continue
            key = token.value if token.kind == "str" else token.text
            if index + 1 < len(tokens) and tokens[index + 1].text == ":":
                value, index = self.expression(index + 2)
            else:  # `{ model }` means `{ model: model }`
                value, index = self.name_value(token), index + 1
            pairs.append((str(key), token, value))
        return pairs

    def declarations(self) -> list[EvalDeclaration]:
        self.read_constants()
        found: list[EvalDeclaration] = []
        harness: dict[str, EvalValue] = {}
        unread: list[tuple[str, str, Token, str]] = []
        for index, token in enumerate(self.tokens):
            if token.kind != "name":
                continue
            if token.text in _DISCOVER_CALLS:
                if index + 1 >= len(self.tokens) or self.tokens[index + 1].text != "(":
                    continue  # the import, not a call
                declaration = EvalDeclaration(self.path, token.line, token.text)
                pairs = self.object_argument(index)
                unread += self.keep(declaration.values, pairs, _DISCOVER_KEYS, call=token.text)
                found.append(declaration)
            elif token.text in _HARNESS_CALLS:
                pairs = self.object_argument(index)
                unread += self.keep(harness, pairs, _HARNESS_KEYS, call=token.text)
        for declaration in found:
            for key, value in harness.items():
                # Warden's harness options win over the discovered metas' runtime and model.
                declaration.values[key] = value
                declaration.from_harness.add(key)
        categories = [d.category for d in found if d.category]
        suite_yaml = f"{categories[0]}/_suite.yaml" if len(categories) == 1 else "_suite.yaml"
        for call, key, token, source in unread:
            self.warnings.append(
                ConfigError(
                    f"{call}: {key} is {source}, not a string or number literal, so assay "
                    f"does not read it; set `{_SUITE_YAML_KEY.get(key, key)}:` in "
                    f"{suite_yaml} instead",
                    self.location(token),
                )
            )
        return found

    def keep(
        self,
        values: dict[str, EvalValue],
        pairs: list[tuple[str, Token, EvalValue | str]],
        wanted: tuple[str, ...],
        *,
        call: str,
    ) -> list[tuple[str, str, Token, str]]:
        """Store the readable values of `wanted` keys; return the unreadable ones."""
        unread = []
        for key, token, value in pairs:
            if key not in wanted:
                continue
            if isinstance(value, EvalValue):
                values[key] = value
            else:
                unread.append((call, key, token, value))
        return unread


def read_eval_declarations(
    eval_root: Path, *, environ: Mapping[str, str] | None = None
) -> tuple[list[EvalDeclaration], list[ConfigError]]:
    """Every declaration in `<eval_root>/src/**/*.eval.ts`, sorted by file; and the warnings."""
    env = os.environ if environ is None else environ
    declarations: list[EvalDeclaration] = []
    warnings: list[ConfigError] = []
    for path in eval_ts_files(eval_root):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            warnings.append(ConfigError(f"cannot read: {exc}", SourcePosition(path)))
            continue
        reader = _Reader(path, text, tokenize(text), env, warnings)
        for declaration in reader.declarations():
            if declaration.call != "discoverEvals" and declaration.category is None:
                warnings.append(
                    ConfigError(
                        f"{declaration.call}: no literal `category`; assay cannot tell which "
                        "directory it declares (give that directory a _suite.yaml)",
                        declaration.location,
                    )
                )
                continue
            declarations.append(declaration)
    return declarations, warnings


def eval_ts_files(eval_root: Path) -> list[Path]:
    """`<eval_root>/src/**/*.eval.ts`, as Warden's vitest config includes them, sorted.

    Like vitest's glob it skips `node_modules`, `dist` and hidden directories; it follows
    no symlinked directory (a loop would never end).
    """
    top = eval_root / EVAL_TS_DIR
    found: list[Path] = []
    if not top.is_dir():
        return found
    for directory, subdirectories, files in os.walk(top):
        subdirectories[:] = sorted(
            name for name in subdirectories if name not in _SKIPPED and not name.startswith(".")
        )
        found += [
            Path(directory, name)
            for name in files
            if name.endswith(".eval.ts") and not name.startswith(".")
        ]
    return sorted((p for p in found if p.is_file()), key=lambda p: p.relative_to(top).parts)
