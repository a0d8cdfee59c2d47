"""A static reader of Warden's suite declarations, `<eval root>/src/**/*.eval.ts` (no Node).

Warden's JSON categories get their skill, runtime and model from code, e.g.

    const evals = discoverEvalScenarios({
      category: 'code-review',
      skill: '../warden/src/builtin-skills/code-review/SKILL.md',
      runtime: DEFAULT_EVAL_RUNTIME,
      model,
    });
    describeEval('code-review', { harness: createWardenEvalHarness({ maxTurns: 8 }) }, ...);

A small tokenizer finds those calls and reads their object literals; values are evaluated
as constant expressions (`ts_eval.py`: literals, arithmetic, templates, top-level
`const` / `let`, `process.env` with `??` / `||`, the names Warden itself defines).
Each `describeEval` block has its own harness: a discover call gets the harness of the
block that runs its metas (the call inline in the block, or a top-level const holding
its result named in it). A value that cannot be evaluated is a warning naming the file
and line and the `_suite.yaml` that would say the same thing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import ConfigError, SourcePosition
from assay.upstream.warden.ts_reader import CallOptions, EvalValue, SourceReader
from assay.upstream.warden.ts_tokens import tokenize

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


@dataclass
class EvalDeclaration:
    """One `discover...({...})` call and the options of the harness that runs its metas."""

    path: Path
    line: int
    call: str
    values: dict[str, EvalValue] = field(default_factory=dict)
    """The discover call's own options: defaults a scenario's own beat."""
    harness: dict[str, EvalValue] = field(default_factory=dict)
    """The options of its `describeEval` block's harness: Warden's runner takes them over a
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
"""What Warden's own modules export, which its eval.ts files import."""


def _default_eval_model(environ: Mapping[str, str]) -> tuple[str, str]:
    chosen = bool(environ.get("WARDEN_MODEL"))
    how = "defaultEvalModel(): WARDEN_MODEL" if chosen else "defaultEvalModel()"
    return warden_model(environ), how


_KNOWN_CALLS = {"defaultEvalModel": _default_eval_model}

Block = tuple[int, int]
"""A `describeEval(...)` call: the token indexes of its name and closing parenthesis."""


def _declarations(reader: SourceReader, warnings: list[ConfigError]) -> list[EvalDeclaration]:
    """The file's discover calls, each with the options of the harness that runs it."""
    discovers: list[CallOptions] = []
    harnesses: list[CallOptions] = []
    blocks: list[Block] = []
    tokens = reader.tokens
    for index, token in enumerate(tokens):
        if token.kind != "name" or index + 1 >= len(tokens) or tokens[index + 1].text != "(":
            continue  # an import or a reference, not a call
        if token.text in _DISCOVER_CALLS:
            discovers.append(reader.call_options(index, _DISCOVER_KEYS))
        elif token.text in _HARNESS_CALLS:
            harnesses.append(reader.call_options(index, _HARNESS_KEYS))
        elif token.text == "describeEval":
            blocks.append((index, reader.closing(index + 1)))
    found = []
    for discover in discovers:
        declaration = EvalDeclaration(reader.path, discover.token.line, discover.token.text)
        declaration.values = discover.values
        harness = _harness_of(reader, discover, harnesses, blocks, warnings)
        if harness is not None:
            declaration.harness = harness.values
        found.append(declaration)
    _warn_unread(reader, [*discovers, *harnesses], found, warnings)
    return found


def _harness_of(
    reader: SourceReader,
    discover: CallOptions,
    harnesses: list[CallOptions],
    blocks: list[Block],
    warnings: list[ConfigError],
) -> CallOptions | None:
    """The harness of the describeEval block running `discover`'s metas: the call inline
    in the block, or a top-level const holding its result named in it. Without one such
    block, the file's only harness, if it has one; else none, with a warning."""
    holder = reader.holder(discover.index)
    used = [
        block
        for block in blocks
        if block[0] <= discover.index <= block[1]
        or (holder is not None and reader.names_in(block, holder))
    ]
    per_block = [_harnesses_in(reader, block, harnesses) for block in used]
    chosen = {h.index: h for found in per_block for h in found}
    if used and all(len(found) <= 1 for found in per_block) and len(chosen) <= 1:
        return next(iter(chosen.values()), None)
    if len(harnesses) <= 1:
        return harnesses[0] if harnesses else None
    why = "is run by no describeEval block" if not used else "is not run by one harness"
    warnings.append(
        ConfigError(
            f"{discover.token.text}: assay cannot tell which harness runs these scenarios "
            f"(the call {why}, and this file creates {len(harnesses)} harnesses), so no "
            "harness option (model, runtime, maxTurns, timeoutMs) applies to them; set them "
            "in the category's _suite.yaml",
            reader.location(discover.token),
        )
    )
    return None


def _harnesses_in(
    reader: SourceReader, block: Block, harnesses: list[CallOptions]
) -> list[CallOptions]:
    return [
        h
        for h in harnesses
        if block[0] <= h.index <= block[1]
        or ((name := reader.holder(h.index)) is not None and reader.names_in(block, name))
    ]


def _warn_unread(
    reader: SourceReader,
    calls: list[CallOptions],
    found: list[EvalDeclaration],
    warnings: list[ConfigError],
) -> None:
    categories = [d.category for d in found if d.category]
    suite_yaml = f"{categories[0]}/_suite.yaml" if len(categories) == 1 else "_suite.yaml"
    for call in calls:
        for key, token, source, reason in call.unread:
            warnings.append(
                ConfigError(
                    f"{call.token.text}: {key} is `{source}`, which assay cannot work out "
                    f"without running it ({reason}); set `{_SUITE_YAML_KEY.get(key, key)}:` "
                    f"in {suite_yaml} instead",
                    reader.location(token),
                )
            )


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
        reader = SourceReader(
            path, text, tokenize(text), env, names=_KNOWN_NAMES, calls=_KNOWN_CALLS
        )
        for declaration in _declarations(reader, warnings):
            if declaration.call != "discoverEvals" and declaration.category is None:
                warnings.append(
                    ConfigError(
                        f"{declaration.call}: no constant `category`; assay cannot tell which "
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
