"""What a Warden category's JSON scenarios run with: skill, runtime, model, harness options.

Weakest first: assay's conventional `skills/<category>.md`; Warden's own declaration in
`<eval root>/src/**/*.eval.ts` (`discoverEvalScenarios({category, skill, runtime, model})`,
with Warden's defaults for what it leaves out); the category's `_suite.yaml`, key by key.
A scenario's own `runtime` / `model` beats them, except what the eval.ts harness sets
(`createWardenEvalHarness({model})`: Warden's runner puts it before the scenario's).
The command line beats all of them when the case runs. A category that ends up with no
skill is a warning (an error under `--strict`): its cases would review without one.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, SourcePosition
from assay.suites.command import parse_agent_command
from assay.suites.context import CategoryDefaults, LoadContext
from assay.suites.discover import DEFAULTS_FILE_NAMES
from assay.suites.document import Document, read_document
from assay.suites.validation import checked_graders, validate_model
from assay.suites.warden import default_skill, resolve_skill
from assay.suites.warden_evalts import (
    WARDEN_DEFAULT_MODEL,
    WARDEN_DEFAULT_RUNTIME,
    EvalDeclaration,
    EvalValue,
)
from assay.suites.wire_common import unknown_runtime
from assay.suites.wire_review import CategoryDefaults as CategoryDefaultsFile

__all__ = ["load_category_defaults", "yaml_suite_overrides"]

WARDEN_VERIFICATION_MODEL = "anthropic/claude-sonnet-4-6"
"""Warden's `DEFAULT_VERIFICATION_MODEL` (packages/evals/src/verify.ts)."""
_SUITE_FILE = "_suite.yaml"
_FAILED = "not resolved"
"""The source of a skill that was named but could not be resolved (already an error)."""


def load_category_defaults(category_dir: Path, *, root: Path, ctx: LoadContext) -> CategoryDefaults:
    """The resolved settings of the category directory `category_dir` (cached per run)."""
    if category_dir in ctx.category_defaults:
        return ctx.category_defaults[category_dir]
    defaults = CategoryDefaults()
    conventional = default_skill(root, category_dir.name)
    if conventional is not None:
        defaults = CategoryDefaults(skill=conventional, sources={"skill": "default"})
    if category_dir.parent == root:
        declaration = _declaration(ctx.declarations_for(root), category_dir.name)
        if declaration is not None:
            defaults = _from_declaration(declaration, root=root, ctx=ctx, fallback=defaults)
    for file_name in DEFAULTS_FILE_NAMES:
        path = category_dir / file_name
        if path.is_file():
            defaults = _read_defaults(path, root=root, ctx=ctx, fallback=defaults)
            break
    if defaults.skill is None and defaults.sources.get("skill") != _FAILED:
        ctx.problems.unknown_key(
            f"category {category_dir.name!r} has no skill: its cases would run without one. "
            f"Set `skill:` in {category_dir.name}/{_SUITE_FILE} (or declare the category in "
            "src/<name>.eval.ts, or add skills/<category>.md)",
            SourcePosition(category_dir),
        )
    ctx.category_defaults[category_dir] = defaults
    return defaults


def yaml_suite_overrides(root: Path, ctx: LoadContext) -> CategoryDefaults | None:
    """What Warden's `discoverEvals()` harness (e2e.eval.ts) runs YAML suites with: its
    `runtime` and `model`, which win over a suite's own, and its `maxTurns` / `timeoutMs`
    (Warden's runner takes all four from the harness options, for every meta it runs)."""
    if root not in ctx.yaml_suite_defaults:
        ctx.yaml_suite_defaults[root] = _yaml_suite_overrides(root, ctx)
    return ctx.yaml_suite_defaults[root]


def _yaml_suite_overrides(root: Path, ctx: LoadContext) -> CategoryDefaults | None:
    declaration = next((d for d in ctx.declarations_for(root) if d.call == "discoverEvals"), None)
    if declaration is None:
        return None
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, field_name in _HARNESS_FIELDS:
        value = declaration.values.get(key)
        if value is not None and _usable(key, value, ctx):
            values[field_name] = value.value
            sources[field_name] = _where(value)
    if not values:
        return None
    harness = frozenset(key for key in ("runtime", "model") if key in values)
    return CategoryDefaults(**values, harness=harness, sources=sources)


_HARNESS_FIELDS = (
    ("runtime", "runtime"),
    ("model", "model"),
    ("maxTurns", "max_turns"),
    ("timeoutMs", "timeout_ms"),
)
"""eval.ts keys and the CategoryDefaults fields they fill."""


def _declaration(declarations: list[EvalDeclaration], category: str) -> EvalDeclaration | None:
    return next((d for d in declarations if d.category == category), None)


def _from_declaration(
    declaration: EvalDeclaration, *, root: Path, ctx: LoadContext, fallback: CategoryDefaults
) -> CategoryDefaults:
    values: dict[str, Any] = {}
    sources = dict(fallback.sources)
    skill_value = declaration.values.get("skill")
    if skill_value is not None and _usable("skill", skill_value, ctx):
        try:
            values["skill"] = resolve_skill(
                str(skill_value.value),
                eval_root=root,
                project=ctx.project_for(root),
                location=skill_value.location,
            )
            sources["skill"] = _where(skill_value)
        except ConfigError as exc:
            ctx.problems.add(exc)
            sources["skill"] = _FAILED
    for key, field_name in _HARNESS_FIELDS:
        value = declaration.values.get(key)
        if value is not None and _usable(key, value, ctx):
            values[field_name] = value.value
            sources[field_name] = _where(value)
    harness = frozenset(
        key for key in ("runtime", "model") if key in values and key in declaration.from_harness
    )
    # What Warden resolves when the declaration leaves them out (index.ts, verify.ts).
    verification = declaration.call == "discoverVerificationEvalScenarios"
    values.setdefault("runtime", WARDEN_DEFAULT_RUNTIME)
    sources.setdefault("runtime", "Warden default")
    values.setdefault("model", WARDEN_VERIFICATION_MODEL if verification else WARDEN_DEFAULT_MODEL)
    sources.setdefault("model", "Warden default")
    return dataclasses.replace(fallback, **values, harness=harness, sources=sources)


def _usable(key: str, value: EvalValue, ctx: LoadContext) -> bool:
    """Whether a literal has the type its key needs; a clear error naming file:line if not."""
    if key in ("skill", "model", "category"):
        ok = isinstance(value.value, str) and bool(value.value.strip())
        need = "a non-empty string"
    elif key == "runtime":
        problem = unknown_runtime(value.value)
        if problem is not None:
            ctx.problems.error(f"{key}: {problem}", value.location)
        return problem is None
    elif key == "maxTurns":
        ok = isinstance(value.value, int) and value.value >= 1
        need = "a whole number of at least 1"
    else:  # timeoutMs
        ok = isinstance(value.value, int | float) and value.value > 0
        need = "a positive number of milliseconds"
    if not ok:
        ctx.problems.error(f"{key} is {value.value!r}; it must be {need}", value.location)
    return ok


def _where(value: EvalValue) -> str:
    location = value.location
    origin = f"{Path(location.path).name}:{location.line}"
    return origin if value.how == "literal" else f"{origin} ({value.how})"


def _read_defaults(
    path: Path, *, root: Path, ctx: LoadContext, fallback: CategoryDefaults
) -> CategoryDefaults:
    try:
        doc = read_document(path)
    except ConfigError as exc:
        ctx.problems.add(exc)
        return fallback
    if doc.data is None:  # an empty file sets nothing
        return fallback
    model = validate_model(CategoryDefaultsFile, doc, ctx.problems)
    if model is None:
        return fallback
    values: dict[str, Any] = {}
    skill_failed = False
    if model.skill is not None:
        values["skill"] = _skill(model.skill, root=root, doc=doc, ctx=ctx)
        skill_failed = values["skill"] is None
    if model.runtime is not None:
        values["runtime"] = model.runtime
    if model.model is not None:
        values["model"] = model.model
    if model.max_turns is not None:
        values["max_turns"] = model.max_turns
    if model.timeout_ms is not None:
        values["timeout_ms"] = model.timeout_ms
    if model.agent_command is not None:
        values["agent_command"] = _command(model.agent_command, doc, ctx)
    if model.graders:
        values["graders"] = checked_graders(model.graders, doc, ctx)
    sources = dict(fallback.sources)
    sources.update({key: path.name for key in values})
    if skill_failed:
        sources["skill"] = _FAILED
    # A runtime or model set here is the category's default, which a scenario's own beats.
    harness = fallback.harness - values.keys()
    return dataclasses.replace(fallback, **values, harness=harness, sources=sources)


def _skill(raw: str, *, root: Path, doc: Document, ctx: LoadContext) -> Path | None:
    try:
        return resolve_skill(
            raw, eval_root=root, project=ctx.project_for(root), location=doc.location(("skill",))
        )
    except ConfigError as exc:
        ctx.problems.add(exc)
        return None


def _command(value: str | list[str], doc: Document, ctx: LoadContext) -> tuple[str, ...] | None:
    try:
        return parse_agent_command(value, base_dir=doc.path.parent)
    except ValueError as exc:
        ctx.problems.error(f"agent_command: {exc}", doc.location(("agent_command",)))
        return None
