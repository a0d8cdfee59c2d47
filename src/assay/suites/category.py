"""What a Warden category's JSON scenarios run with: skill, runtime, model, harness options.

Weakest first: assay's conventional `skills/<category>.md`; Warden's own declaration in
`<eval root>/src/**/*.eval.ts` (`discoverEvalScenarios({category, skill, runtime, model})`,
with Warden's defaults for what it leaves out); the category's `_suite.yaml`, key by key.
A scenario's own `runtime` / `model` beats them, except what the eval.ts harness sets
(`createWardenEvalHarness({model})`: Warden's runner puts it before the scenario's).
The command line beats all of them when the case runs. The skill's layers, and what a
category without one means, are `suites/warden_skill.py`'s.

A category declared by several discover calls runs its scenarios once per declaration
(Warden's metas of each call are their own tests), and the declaring call decides what
its JSON files are: review scenarios or verification scenarios (`declared_kind`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.suites.command import suite_agent_command
from assay.suites.context import CategoryDefaults, LoadContext
from assay.suites.document import Document, read_document
from assay.suites.file_kind import DEFAULTS_FILE_NAMES
from assay.suites.validation import checked_graders, validate_model
from assay.suites.warden_skill import (
    SKILL_NOT_RESOLVED,
    conventional_skill,
    declared_skill,
    named_skill,
    warn_if_no_skill,
)
from assay.suites.wire_common import unknown_runtime
from assay.suites.wire_review import CategoryDefaults as CategoryDefaultsFile
from assay.upstream.warden.evalts import (
    WARDEN_DEFAULT_MODEL,
    WARDEN_DEFAULT_RUNTIME,
    EvalDeclaration,
    EvalValue,
)
from assay.upstream.warden.paths import node_join

__all__ = [
    "KIND_OF_CALL",
    "category_runs",
    "declarations_of",
    "declared_kind",
    "is_default_source",
    "load_category_defaults",
    "yaml_suite_overrides",
]

WARDEN_VERIFICATION_MODEL = "anthropic/claude-sonnet-4-6"
"""Warden's `DEFAULT_VERIFICATION_MODEL` (packages/evals/src/verify.ts)."""


KIND_OF_CALL = {
    "discoverEvalScenarios": "review-json",
    "discoverVerificationEvalScenarios": "verification",
}
"""What each of Warden's discover calls reads a category's JSON files as."""


def declarations_of(category_dir: Path, *, root: Path, ctx: LoadContext) -> list[EvalDeclaration]:
    """The eval.ts calls declaring `category_dir` (`join(baseDir, category)`, so
    `bench/perf` names `<root>/bench/perf`)."""
    return [
        d
        for d in ctx.declarations_for(root)
        if d.call in KIND_OF_CALL and d.category and node_join(root, d.category) == category_dir
    ]


def declared_kind(category_dir: Path, *, root: Path, ctx: LoadContext) -> str | None:
    """What every JSON file of `category_dir` is, when declarations of one kind declare it
    (whatever keys a file has: Warden's loader reads it with that call's schema); None for
    a directory no eval.ts declares, or one declared as both kinds (a warning: Warden's
    loader would refuse the files of the other kind)."""
    declarations = declarations_of(category_dir, root=root, ctx=ctx)
    kinds = {KIND_OF_CALL[d.call] for d in declarations}
    if len(kinds) == 1:
        return kinds.pop()
    if len(kinds) > 1 and _first_time(ctx, "both kinds", str(category_dir)):
        ctx.problems.warn(
            f"{declarations[0].category!r} is declared by both discoverEvalScenarios and "
            "discoverVerificationEvalScenarios: each JSON file runs under the calls of its "
            "own kind, told apart by its keys (Warden's loader would refuse it under the other)",
            declarations[0].location,
        )
    return None


def category_runs(
    category_dir: Path, *, root: Path, ctx: LoadContext, kind: str
) -> tuple[CategoryDefaults, ...]:
    """The runs of `category_dir` a JSON file of `kind` (`review-json`, `verification`)
    takes part in: one per declaring call of that kind, or the undeclared one."""
    runs = load_category_defaults(category_dir, root=root, ctx=ctx)
    mine = tuple(r for r in runs if r.call is None or KIND_OF_CALL[r.call] == kind)
    return mine or runs


def load_category_defaults(
    category_dir: Path, *, root: Path, ctx: LoadContext
) -> tuple[CategoryDefaults, ...]:
    """Every run of the category directory `category_dir`: one per eval.ts declaration,
    else one (cached per run)."""
    if category_dir in ctx.category_defaults:
        return ctx.category_defaults[category_dir]
    base = CategoryDefaults()
    conventional = conventional_skill(root, category_dir.name)
    if conventional is not None:
        base = CategoryDefaults(skill=conventional, sources={"skill": "default"})
    declarations = declarations_of(category_dir, root=root, ctx=ctx)
    runs = [_from_declaration(d, root=root, ctx=ctx, fallback=base) for d in declarations]
    suite_yaml = next(
        (category_dir / n for n in DEFAULTS_FILE_NAMES if (category_dir / n).is_file()), None
    )
    read = _read_defaults(suite_yaml, root=root, ctx=ctx) if suite_yaml else None
    runs = [_with_suite_yaml(run, read) for run in runs or [base]]
    warn_if_no_skill(runs, category_dir=category_dir, root=root, ctx=ctx)
    ctx.category_defaults[category_dir] = tuple(runs)
    return ctx.category_defaults[category_dir]


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
        value = declaration.harness.get(key)
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


def _from_declaration(
    declaration: EvalDeclaration, *, root: Path, ctx: LoadContext, fallback: CategoryDefaults
) -> CategoryDefaults:
    values: dict[str, Any] = {}
    sources = dict(fallback.sources)
    skill_value = declaration.values.get("skill")
    if skill_value is not None and _usable("skill", skill_value, ctx):
        try:
            values["skill"] = declared_skill(skill_value, root=root, ctx=ctx)
            sources["skill"] = _where(skill_value)
        except ConfigError as exc:
            _say(ctx, exc)
            sources["skill"] = SKILL_NOT_RESOLVED
    for key in ("runtime", "model"):
        value = declaration.values.get(key)
        if value is not None and _usable(key, value, ctx):
            values[key] = value.value
            sources[key] = _where(value)
    # What Warden resolves when the declaration leaves them out (index.ts, verify.ts).
    verification = declaration.call == "discoverVerificationEvalScenarios"
    values.setdefault("runtime", WARDEN_DEFAULT_RUNTIME)
    values.setdefault("model", WARDEN_VERIFICATION_MODEL if verification else WARDEN_DEFAULT_MODEL)
    for key in ("runtime", "model"):
        sources.setdefault(key, "Warden default")
    meta = {"meta_runtime": values["runtime"], "meta_model": values["model"]}
    harness = set()
    for key, field_name in _HARNESS_FIELDS:
        value = declaration.harness.get(key)
        if value is not None and _usable(key, value, ctx):
            values[field_name] = value.value
            sources[field_name] = _where(value)
            harness.add(field_name)
    return dataclasses.replace(
        fallback,
        **values,
        **meta,
        harness=frozenset(harness & {"runtime", "model"}),
        call=declaration.call,
        sources=sources,
    )


def is_default_source(source: str | None) -> bool:
    """Whether a model's source (`CategoryDefaults.sources`) is a default nobody chose:
    Warden's own, or an eval.ts naming Warden's (`DEFAULT_EVAL_MODEL`, `defaultEvalModel()`
    with WARDEN_MODEL unset)."""
    if source is None:
        return False
    return (
        source == "Warden default"
        or source.endswith("(defaultEvalModel())")
        or source.endswith("(DEFAULT_EVAL_MODEL)")
    )


def _usable(key: str, value: EvalValue, ctx: LoadContext) -> bool:
    """Whether a literal has the type its key needs; a clear error naming file:line if not."""
    if key in ("skill", "model", "category"):
        ok = isinstance(value.value, str) and bool(value.value.strip())
        need = "a non-empty string"
    elif key == "runtime":
        problem = unknown_runtime(value.value)
        if problem is not None:
            _say(ctx, ConfigError(f"{key}: {problem}", value.location))
        return problem is None
    elif key == "maxTurns":
        ok = isinstance(value.value, int) and value.value >= 1
        need = "a whole number of at least 1"
    else:  # timeoutMs
        ok = isinstance(value.value, int | float) and value.value > 0
        need = "a positive number of milliseconds"
    if not ok:
        _say(ctx, ConfigError(f"{key} is {value.value!r}; it must be {need}", value.location))
    return ok


def _say(ctx: LoadContext, problem: ConfigError) -> None:
    """Report `problem` once: a harness running several declarations is read with each."""
    if _first_time(ctx, problem.message, str(problem.location)):
        ctx.problems.add(problem)


def _first_time(ctx: LoadContext, what: str, where: str) -> bool:
    if (what, where) in ctx.said:
        return False
    ctx.said.add((what, where))
    return True


def _where(value: EvalValue) -> str:
    location = value.location
    origin = f"{Path(location.path).name}:{location.line}"
    return origin if value.how == "literal" else f"{origin} ({value.how})"


@dataclass(frozen=True)
class _SuiteYaml:
    """What a category's `_suite.yaml` sets, read once and laid over each of its runs."""

    name: str
    values: dict[str, Any]
    skill_failed: bool


def _read_defaults(path: Path, *, root: Path, ctx: LoadContext) -> _SuiteYaml | None:
    try:
        doc = read_document(path)
    except ConfigError as exc:
        ctx.problems.add(exc)
        return None
    if doc.data is None:  # an empty file sets nothing
        return None
    model = validate_model(CategoryDefaultsFile, doc, ctx.problems)
    if model is None:
        return None
    values: dict[str, Any] = {}
    skill_failed = False
    if model.skill is not None:
        values["skill"] = named_skill(model.skill, root=root, doc=doc, ctx=ctx)
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
        values["graders"] = checked_graders(model.graders, doc, ctx.problems)
    return _SuiteYaml(path.name, values, skill_failed)


def _with_suite_yaml(run: CategoryDefaults, suite_yaml: _SuiteYaml | None) -> CategoryDefaults:
    if suite_yaml is None:
        return run
    values = dict(suite_yaml.values)
    sources = dict(run.sources)
    sources.update({key: suite_yaml.name for key in values})
    if suite_yaml.skill_failed:
        sources["skill"] = SKILL_NOT_RESOLVED
    # A runtime or model set here is the category's default (what Warden's metas would
    # carry), which a scenario's own beats.
    meta = {f"meta_{key}": values[key] for key in ("runtime", "model") if key in values}
    harness = run.harness - values.keys()
    return dataclasses.replace(run, **values, **meta, harness=harness, sources=sources)


def _command(value: str | list[str], doc: Document, ctx: LoadContext) -> tuple[str, ...] | None:
    return suite_agent_command(value, doc, ("agent_command",), ctx.problems)
