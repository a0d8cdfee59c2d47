"""Loaders for Warden's formats: YAML review suites, JSON scenarios, verification scenarios.

A case's id is Warden's test name, `<skill name>/<case>`; Warden's newest full form,
`<skill name>/<runtime>/<model>/<case>` (its `formatEvalId`), is an alias, and becomes the
id of the cases a category declared twice would otherwise give one id.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.suites.case import Case, Expectation, FixtureFile, ReviewSpec, VerifySpec
from assay.suites.category import (
    category_runs,
    declarations_of,
    is_default_source,
    load_category_defaults,
    yaml_suite_overrides,
)
from assay.suites.command import suite_agent_command
from assay.suites.context import CategoryDefaults, LoadContext
from assay.suites.document import Document
from assay.suites.validation import checked_graders, validate_model, validate_quietly
from assay.suites.warden import resolve_fixtures, shared_repository
from assay.suites.warden_skill import named_skill, skill_name
from assay.suites.wire_review import ReviewEval, ReviewScenario, ReviewSuite, VerificationScenario
from assay.upstream.warden.evalts import WARDEN_DEFAULT_MODEL, WARDEN_DEFAULT_RUNTIME, warden_model

__all__ = [
    "load_category_defaults",  # re-exported: the loader reaches it through here
    "load_review_scenario",
    "load_review_yaml",
    "load_verification",
]


@dataclass(frozen=True)
class _Fixtures:
    files: tuple[FixtureFile, ...]
    supporting: tuple[FixtureFile, ...]
    repository: str | None


def load_review_yaml(doc: Document, *, root: Path, ctx: LoadContext) -> list[Case]:
    """A YAML suite: the file stem is the suite (Warden's category), each eval one case."""
    suite = validate_model(ReviewSuite, doc, ctx.problems)
    raw = doc.data if isinstance(doc.data, dict) else {}
    raw_evals: list[Any] = raw["evals"] if isinstance(raw.get("evals"), list) else []
    if suite is not None:
        evals = list(enumerate(suite.evals))
        skill_raw: Any = suite.skill
    else:  # still check the paths of the scenarios that are well-formed
        evals = [
            (i, e) for i, item in enumerate(raw_evals) if (e := validate_quietly(ReviewEval, item))
        ]
        skill_raw = raw.get("skill")
        well_formed = {i for i, _ in evals}
        for i, item in enumerate(raw_evals):
            if i not in well_formed:
                _check_fixture_paths(item, ("evals", i), root, doc, ctx)
    skill = None
    if isinstance(skill_raw, str) and skill_raw.strip():
        skill = named_skill(skill_raw, root=root, doc=doc, ctx=ctx)
    suite_command = _command(suite.agent_command if suite else None, doc, ("agent_command",), ctx)
    name = doc.path.stem
    # Warden names a case `<skill name>/<case>`; `<file stem>/<case>` still selects it.
    prefix = skill_name(skill) if skill is not None else name
    warden = yaml_suite_overrides(root, ctx)
    graders = checked_graders(suite.graders, doc, ctx.problems) if suite else ()
    cases = []
    for number, item in evals:
        key_path: tuple[Any, ...] = ("evals", number)
        fixtures = _fixtures(item.files, item.supporting_files, key_path, root, doc, ctx)
        command = _command(item.agent_command, doc, key_path + ("agent_command",), ctx)
        spec = ReviewSpec(
            given=item.given,
            files=fixtures.files,
            supporting_files=fixtures.supporting,
            skill=skill,
            should_find=_expectations(item),
            should_not_find=tuple(item.should_not_find),
            repository=fixtures.repository,
            notes=_raw_notes(raw_evals[number]),
        )
        model = item.model or (suite.model if suite else None)
        runtime: str | None = item.runtime or (suite.runtime if suite else None)
        # What Warden's meta carries (EvalFileSchema's defaults), for the full id.
        meta = (runtime or WARDEN_DEFAULT_RUNTIME, model or WARDEN_DEFAULT_MODEL)
        default = False
        if warden is not None:  # Warden's e2e harness passes its own runtime and model
            default = bool(warden.model) and is_default_source(warden.sources.get("model"))
            model = warden.model or model
            runtime = warden.runtime or runtime
        named = model
        runtime, model = _yaml_defaults(runtime, model, ctx)
        default = default or (named is None and model is not None)
        cases.append(
            Case(
                id=f"{prefix}/{item.name}",
                aliases=_aliases(f"{name}/{item.name}", prefix, item.name, *meta),
                suite=name,
                name=item.name,
                kind="review",
                format="review-yaml",
                source_path=doc.path,
                source_line=doc.location(key_path).line,
                spec=spec,
                model=model,
                runtime=runtime,
                agent_command=command or suite_command,
                root=root,
                graders=graders,
                max_turns=warden.max_turns if warden else None,
                timeout_s=_timeout_s(warden),
                model_is_default=default,
            )
        )
    return cases


def load_review_scenario(doc: Document, *, root: Path, ctx: LoadContext) -> list[Case]:
    """A standalone JSON scenario, `<root>/<category>/<name>.json`: one case per
    declaration of its category."""
    scenario = validate_model(ReviewScenario, doc, ctx.problems)
    category = _category(doc, root, ctx)
    if scenario is None:
        _check_fixture_paths(doc.data, (), root, doc, ctx)
    if scenario is None or category is None:
        return []
    fixtures = _fixtures(scenario.files, scenario.supporting_files, (), root, doc, ctx)
    spec = ReviewSpec(
        given=scenario.given,
        files=fixtures.files,
        supporting_files=fixtures.supporting,
        should_find=_expectations(scenario),
        should_not_find=tuple(scenario.should_not_find),
        repository=fixtures.repository,
        notes=_raw_notes(doc.data),
    )
    return _scenario_cases(doc, scenario, spec, category, "review", root, ctx)


def load_verification(doc: Document, *, root: Path, ctx: LoadContext) -> list[Case]:
    """A verifier-only scenario: keep or reject one candidate finding."""
    scenario = validate_model(VerificationScenario, doc, ctx.problems)
    category = _category(doc, root, ctx)
    if scenario is None:
        _check_fixture_paths(doc.data, (), root, doc, ctx)
    if scenario is None or category is None:
        return []
    fixtures = _fixtures(scenario.files, scenario.supporting_files, (), root, doc, ctx)
    candidate = dict(doc.data["candidate"])  # verbatim, keys assay does not know included
    candidate["severity"] = scenario.candidate.severity
    spec = VerifySpec(
        given=scenario.given,
        files=fixtures.files,
        candidate=candidate,
        expect_verdict=scenario.expect.verdict,
        supporting_files=fixtures.supporting,
        repository=fixtures.repository,
        notes=_raw_notes(doc.data),
    )
    return _scenario_cases(doc, scenario, spec, category, "verify", root, ctx)


def _scenario_cases(
    doc: Document,
    scenario: ReviewScenario | VerificationScenario,
    spec: ReviewSpec | VerifySpec,
    category: str,
    kind: Any,
    root: Path,
    ctx: LoadContext,
) -> list[Case]:
    """The file's case under each run of its category; cases two runs would give one id
    take Warden's full id, `<skill>/<runtime>/<model>/<name>`."""
    file_kind = "review-json" if kind == "review" else "verification"
    runs = category_runs(doc.path.parent, root=root, ctx=ctx, kind=file_kind)
    name = doc.path.stem if scenario.name is None else scenario.name
    command = _command(scenario.agent_command, doc, ("agent_command",), ctx)
    cases = [
        _scenario_case(doc, scenario, spec, category, name, kind, defaults, command, root)
        for defaults in runs
    ]
    ids = [case.id for case, _ in cases]
    return [
        _with_full_id(case, full) if full and ids.count(case.id) > 1 else case
        for case, full in cases
    ]


def _with_full_id(case: Case, full: str) -> Case:
    """`case` named by its full id, its short id kept as an alias."""
    others = tuple(alias for alias in case.aliases if alias != full)
    return dataclasses.replace(case, id=full, aliases=(case.id, *others))


def _scenario_case(
    doc: Document,
    scenario: ReviewScenario | VerificationScenario,
    spec: ReviewSpec | VerifySpec,
    category: str,
    name: str,
    kind: Any,
    defaults: CategoryDefaults,
    command: tuple[str, ...] | None,
    root: Path,
) -> tuple[Case, str | None]:
    """The case, and its full id when its runtime and model are known."""
    # Warden names a case `<skill name>/<case>`; `<category>/<case>` still selects it.
    prefix = skill_name(defaults.skill) if defaults.skill is not None else category
    # The scenario's own runtime and model beat the category's, not the harness's.
    runtime = _first(defaults.runtime, scenario.runtime, harness="runtime" in defaults.harness)
    model = _first(defaults.model, scenario.model, harness="model" in defaults.harness)
    default = model is not None and model != scenario.model
    default = default and is_default_source(defaults.sources.get("model"))
    if model is None:
        model = _pi_default(runtime)
        default = model is not None and not os.environ.get("WARDEN_MODEL")
    meta_runtime = scenario.runtime or defaults.meta_runtime or runtime
    meta_model = scenario.model or defaults.meta_model or model
    full = f"{prefix}/{meta_runtime}/{meta_model}/{name}" if meta_runtime and meta_model else None
    case = Case(
        id=f"{prefix}/{name}",
        aliases=_aliases(f"{category}/{name}", prefix, name, meta_runtime, meta_model),
        suite=category,
        name=name,
        kind=kind,
        format="review-json" if kind == "review" else "verification",
        source_path=doc.path,
        source_line=_first_key_line(doc),
        spec=dataclasses.replace(spec, skill=defaults.skill),
        model=model,
        runtime=runtime,
        agent_command=command or defaults.agent_command,
        root=root,
        max_turns=defaults.max_turns,
        graders=defaults.graders,
        timeout_s=_timeout_s(defaults),
        model_is_default=default,
    )
    return case, full


def _yaml_defaults(
    runtime: str | None, model: str | None, ctx: LoadContext
) -> tuple[str | None, str | None]:
    """A YAML suite's runtime and model when it names neither: Warden's EvalFileSchema
    defaults (`DEFAULT_EVAL_RUNTIME`, and for Warden's runtimes `DEFAULT_EVAL_MODEL`, a
    constant: WARDEN_MODEL reaches YAML suites only through e2e.eval.ts's harness), the
    weakest of settings, so the project's `[tool.assay] runtime` / `model` still beat them."""
    config = ctx.config
    if runtime is None and not (config is not None and config.runtime):
        runtime = WARDEN_DEFAULT_RUNTIME
    if model is None and not (config is not None and config.model) and runtime in _WARDEN_RUNTIMES:
        model = WARDEN_DEFAULT_MODEL
    return runtime, model


_WARDEN_RUNTIMES = frozenset({"pi", "claude"})
"""The runtimes Warden's schema knows (`RuntimeNameSchema`); assay's own get no Warden model."""


def _first(category: str | None, scenario: str | None, *, harness: bool) -> str | None:
    """The scenario's value over the category's, unless Warden's harness set the category's."""
    return (category or scenario) if harness else (scenario or category)


def _timeout_s(defaults: CategoryDefaults | None) -> float | None:
    """A harness `timeoutMs` (or `_suite.yaml` `timeout_ms`) in seconds."""
    return defaults.timeout_ms / 1000 if defaults and defaults.timeout_ms else None


def _pi_default(runtime: str | None) -> str | None:
    """Warden's model for its `pi` runtime when nothing names one: WARDEN_MODEL or the default."""
    return warden_model() if runtime == "pi" else None


def _aliases(
    old_id: str, prefix: str, name: str, runtime: str | None, model: str | None
) -> tuple[str, ...]:
    """The ids `-t` also matches: the `<category>/<case>` id a case had before, and last,
    Warden's full `<skill>/<runtime>/<model>/<case>` (its newest test name)."""
    aliases = [] if old_id == f"{prefix}/{name}" else [old_id]
    if runtime and model:
        aliases.append(f"{prefix}/{runtime}/{model}/{name}")
    return tuple(aliases)


def _first_key_line(doc: Document) -> int:
    """Where a JSON scenario's case starts: its first key, not the `{` above it (line 1)."""
    first = next(iter(doc.data), None) if isinstance(doc.data, dict) else None
    return doc.location(() if first is None else (first,)).line


def _category(doc: Document, root: Path, ctx: LoadContext) -> str | None:
    """The scenario's category: what the eval.ts declaring its directory calls it
    (`bench/perf` for a nested one), else the directory's name."""
    if doc.path.parent == root:
        ctx.problems.error(
            "a JSON scenario must live in a category directory under the eval root "
            f"({root}/<category>/{doc.path.name}); pass the eval root, not the category directory",
            doc.location(),
        )
        return None
    declared = declarations_of(doc.path.parent, root=root, ctx=ctx)
    return declared[0].category or doc.path.parent.name if declared else doc.path.parent.name


def _check_fixture_paths(
    raw: Any, key_path: tuple[Any, ...], root: Path, doc: Document, ctx: LoadContext
) -> None:
    """The fixture paths of a scenario that failed validation, checked all the same, so one
    `assay validate` shows a missing fixture beside the schema error (each list is checked
    only when it is a list of strings: anything else is the schema error already said)."""
    if not isinstance(raw, dict):
        return
    files, supporting = _strings(raw.get("files")), _strings(raw.get("supporting_files"))
    if files or supporting:
        _fixtures(files, supporting, key_path, root, doc, ctx)


def _strings(value: Any) -> list[str]:
    """`value` when it is a list of strings, else []."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return []


def _fixtures(
    files: list[str],
    supporting: list[str],
    key_path: tuple[Any, ...],
    root: Path,
    doc: Document,
    ctx: LoadContext,
) -> _Fixtures:
    project = ctx.project_for(root)
    fixtures, repos = resolve_fixtures(
        files,
        field="files",
        key_path=key_path + ("files",),
        root=root,
        project=project,
        doc=doc,
        problems=ctx.problems,
    )
    support, support_repos = resolve_fixtures(
        supporting,
        field="supporting_files",
        key_path=key_path + ("supporting_files",),
        root=root,
        project=project,
        doc=doc,
        problems=ctx.problems,
    )
    # Warden takes the origin remote from `files` alone, never from supporting files.
    return _Fixtures(fixtures, support, shared_repository(repos))


def _command(
    value: str | list[str] | None, doc: Document, key_path: tuple[Any, ...], ctx: LoadContext
) -> tuple[str, ...] | None:
    if value is None:
        return None
    return suite_agent_command(value, doc, key_path, ctx.problems)


def _expectations(item: ReviewEval | ReviewScenario) -> tuple[Expectation, ...]:
    return tuple(
        Expectation(finding=e.finding, severity=e.severity, required=e.required)
        for e in item.should_find
    )


def _raw_notes(raw_case: Any) -> dict[str, Any]:
    notes = raw_case.get("notes") if isinstance(raw_case, dict) else None
    return dict(notes) if isinstance(notes, dict) else {}
