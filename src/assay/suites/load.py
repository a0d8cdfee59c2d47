"""`load_suites`: paths in, every case out, or every problem at once.

1. gather: walk each PATH (or the configured paths, or `.`) and parse every candidate file;
2. load task suites and rubric manifests first: their workspace and fixture directories
   are fixture trees, so files inside them are dropped, not loaded (nor their errors,
   even when such a file looks like a task suite or a manifest itself);
3. load the rest in discovery order, make case ids unique across all files (a Warden
   case whose id is taken runs as `<id>#2`, with a warning; any other clash is an error).

A JSON file in a directory Warden's `src/**/*.eval.ts` declares is what the declaring
call reads (a review or a verification scenario), whatever keys it has.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from assay._util.arguments import as_path, as_paths
from assay._util.display import display_location, displayed
from assay.core.paths import is_inside, real_path
from assay.core.text import has_control
from assay.errors import ConfigError, ConfigErrors, SourcePosition
from assay.suites.case import Case, SuiteFormat
from assay.suites.config import AssayConfig, load_config
from assay.suites.context import CategoryDefaults, LoadContext
from assay.suites.discover import classify, walk_suite_files
from assay.suites.document import Document, Problems, read_document
from assay.suites.file_kind import DEFAULTS_FILE_NAMES, FileKind
from assay.suites.formats import load_cases, plugin_format_of

# The format modules (review, rubric, task) are imported where a file of theirs turns
# up: each brings its pydantic models, so a project pays start-up only for its formats.

__all__ = ["LoadedSuites", "SuiteFile", "SuiteLoadErrors", "load_suites"]

_LOADED_FIRST = ("task-suite", "rubric-manifest")
"""They own fixture trees, so `_load_fixture_owners` loads them before every other file."""


@dataclass(frozen=True)
class SuiteFile:
    path: Path
    format: SuiteFormat
    case_count: int


@dataclass(frozen=True)
class LoadedSuites:
    cases: tuple[Case, ...]
    warnings: tuple[ConfigError, ...]
    files: tuple[SuiteFile, ...]
    root: Path
    """The eval root: the configured root, else the directory holding every PATH's root."""
    config: AssayConfig | None
    categories: tuple[tuple[Path, CategoryDefaults], ...] = ()
    """Warden category directories with cases, and what they run with (and from where)."""


class SuiteLoadErrors(ConfigErrors):
    """Every error found while loading; `warnings` are the non-fatal problems found with them."""

    def __init__(self, errors: Sequence[ConfigError], warnings: Sequence[ConfigError]) -> None:
        super().__init__(errors)
        self.warnings = tuple(warnings)


@dataclass
class _Candidate:
    path: Path
    explicit: bool
    """Named on the command line (never dropped as part of a fixture tree)."""
    targets: set[int]
    """The PATH arguments that reached this file."""
    root: Path
    doc: Document | None = None
    error: ConfigError | None = None
    kind: FileKind | str | None = None
    """One of assay's formats (`file_kind.FileKind`) or a plugin's (`formats.FORMATS`)."""
    cases: tuple[Case, ...] = ()


def load_suites(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    strict: bool = False,
    config: AssayConfig | None = None,
    root: str | Path | None = None,
) -> LoadedSuites:
    """Discover, parse and validate suites; raise SuiteLoadErrors (a ConfigErrors) on any error.

    `paths` are suite files or directories (one may be given on its own).

    `root` (`--root`) is the eval root, beating `[tool.assay] root`; without either, each
    PATH implies its own (a directory is one).
    """
    given = as_paths("paths", paths)
    if root is not None:
        root = as_path("root", root)
    problems = Problems(strict=strict)
    targets = [Path(os.path.realpath(p)) for p in given]
    if config is None:
        try:
            config = load_config(targets[0] if targets else Path.cwd())
        except ConfigError as exc:
            problems.add(exc)
            for warning in exc.warnings if isinstance(exc, ConfigErrors) else ():
                problems.unknown_key(
                    warning.message, warning.location or SourcePosition("[tool.assay]")
                )
    if root is not None:
        chosen = Path(os.path.realpath(root))
        if not chosen.is_dir():
            raise SuiteLoadErrors([ConfigError(f"--root {root}: not a directory")], [])
        config = dataclasses.replace(config, root=chosen) if config else _root_only(chosen)
        if not targets and not config.paths:
            targets = [chosen]
    if config is not None:
        for warning in config.warnings:
            problems.unknown_key(warning.message, warning.location or SourcePosition(config.path))
    if not targets and config and config.paths:
        targets = list(config.paths)
        for missing in (t for t in targets if not t.exists()):
            problems.error(
                f"{missing}: no such file or directory (listed in `paths`)",
                SourcePosition(config.path),
            )
        targets = [t for t in targets if t.exists()]
    elif not targets:
        targets = [Path(os.getcwd())]
    ctx = LoadContext(problems=problems, config=config)
    candidates, roots = _gather(targets, config, ctx)
    fixture_trees = _load_fixture_owners(candidates, ctx)
    kept = [c for c in candidates if c.explicit or not _inside_any(c.path, fixture_trees)]
    for candidate in kept:
        for warning in candidate.doc.warnings if candidate.doc else ():
            problems.unknown_key(
                warning.message, warning.location or SourcePosition(candidate.path)
            )
        _load_rest(candidate, ctx)
    _report_empty_targets(targets, kept, problems)
    suite_files = [c for c in kept if c.kind not in (None, "category-defaults") and c.doc]
    _make_ids_unique(suite_files, problems)
    cases = [case for c in suite_files for case in c.cases]
    if config is not None and config.graders:  # the project's graders run first, on every case
        cases = [
            dataclasses.replace(case, graders=(*dict.fromkeys((*config.graders, *case.graders)),))
            for case in cases
        ]
    _check_model_names(cases, config, problems)
    warnings = _in_reading_order(problems.warnings)
    if problems.errors:
        errors = [_with_root_hint(e, config, root) for e in problems.errors]
        raise SuiteLoadErrors(_in_reading_order(errors), warnings)
    return LoadedSuites(
        cases=tuple(cases),
        warnings=tuple(warnings),
        files=tuple(SuiteFile(c.path, c.kind, len(c.cases)) for c in suite_files),  # type: ignore[arg-type]
        root=config.root if config and config.root else _common_root(roots),
        config=config,
        categories=tuple(
            (directory, defaults)
            for directory, runs in sorted(ctx.category_defaults.items())
            for defaults in runs
            if any(
                c.source_path.parent == directory and c.format in ("review-json", "verification")
                for c in cases
            )
        ),
    )


def _root_only(root: Path) -> AssayConfig:
    """A configuration that says nothing but the eval root (`--root` without a config file)."""
    return AssayConfig(path=root / "pyproject.toml", root=root)


def _with_root_hint(
    error: ConfigError, config: AssayConfig | None, root: str | Path | None
) -> ConfigError:
    """A path "not found under the eval root" says where that root came from and how to
    choose another: the same suite is valid or not depending on the root it is read with."""
    if "under the eval root" not in error.message:
        return error
    if root is not None:
        origin = "given by --root"
    elif config is not None and config.root is not None:
        origin = f"set by `root` in {config.path}"
    else:
        origin = "the PATH given"
    how = "choose another with --root DIR or `root` under [tool.assay] in pyproject.toml"
    return ConfigError(f"{error.message} ({origin}; {how})", error.location)


def _load_fixture_owners(candidates: list[_Candidate], ctx: LoadContext) -> list[Path]:
    """Load the task suites and rubric manifests; return the fixture trees they own.

    Each is loaded with its own problem list, merged only if the file is kept: a file
    inside another suite's workspace (a todo app's own `tasks.json`) is fixture data,
    and neither its cases nor its errors belong to the run.
    """
    owned: list[tuple[_Candidate, list[Path], Problems]] = []
    for candidate in candidates:
        if candidate.doc is None or candidate.kind not in ("task-suite", "rubric-manifest"):
            continue
        own = Problems(strict=ctx.problems.strict)
        own_ctx = dataclasses.replace(ctx, problems=own)
        if candidate.kind == "task-suite":
            # lazy: start-up (not loaded with this module)
            from assay.suites.task import load_task_suite

            cases, trees = load_task_suite(candidate.doc, ctx=own_ctx)
        else:
            # lazy: start-up (not loaded with this module)
            from assay.suites.rubric import load_rubric_manifest

            cases, trees = load_rubric_manifest(candidate.doc, ctx=own_ctx)
        candidate.cases = tuple(cases)
        owned.append((candidate, trees, own))
    all_trees = [tree for _, trees, _ in owned for tree in trees]
    kept_trees: list[Path] = []
    for candidate, trees, _ in owned:
        others = [tree for tree in all_trees if tree not in trees]
        if candidate.explicit or not _inside_any(candidate.path, others):
            kept_trees += trees
    for candidate, _, own in owned:
        if candidate.explicit or not _inside_any(candidate.path, kept_trees):
            ctx.problems.errors += own.errors
            ctx.problems.warnings += own.warnings
    return kept_trees


def _gather(
    targets: list[Path], config: AssayConfig | None, ctx: LoadContext
) -> tuple[list[_Candidate], list[Path]]:
    problems = ctx.problems
    candidates: list[_Candidate] = []
    roots: list[Path] = []
    seen: dict[str, _Candidate] = {}
    configured_root = config.root if config and config.root else None
    for number, target in enumerate(targets):
        if not target.exists():
            dangling = os.path.islink(target)  # a loop, or a link to something gone
            problems.error(
                "a symbolic link that leads nowhere" if dangling else "no such file or directory",
                SourcePosition(target),
            )
            continue
        explicit = not target.is_dir()
        files = [target] if explicit else walk_suite_files(target, problems)
        target_kind: FileKind | str | None = None
        for path in files:
            real = os.path.realpath(path)
            if real in seen:
                earlier = seen[real]
                earlier.targets.add(number)
                if target in earlier.root.parents and not configured_root:
                    # The outermost PATH decides the eval root, whatever the order given:
                    # `validate code-review .` must mean what `validate . code-review` does.
                    earlier.root = _root_for(target, earlier.kind)
                continue
            candidate = _Candidate(path=path, explicit=explicit, targets={number}, root=target)
            seen[real] = candidate
            try:
                candidate.doc = read_document(path)
                candidate.kind = classify(candidate.doc) or plugin_format_of(candidate.doc)
            except ConfigError as exc:
                candidate.error = exc
                if path.name.lower() in DEFAULTS_FILE_NAMES:
                    candidate.kind = "category-defaults"
            candidate.root = configured_root or _root_for(target, candidate.kind)
            if candidate.doc is not None and path.name.endswith(".json"):
                _take_declared_kind(candidate, target, configured_root, ctx)
            candidates.append(candidate)
            target_kind = candidate.kind
        roots.append(configured_root or _root_for(target, target_kind))
    return candidates, roots


def _take_declared_kind(
    candidate: _Candidate, target: Path, configured_root: Path | None, ctx: LoadContext
) -> None:
    """A JSON file in a category an eval.ts declares is what the declaring call reads."""
    root = configured_root or (target if target.is_dir() else candidate.path.parent.parent)
    if not ctx.declarations_for(root):  # not Warden's layout: nothing more to import
        return
    from assay.suites.category import declared_kind  # lazy: start-up (not loaded with this module)

    kind = declared_kind(candidate.path.parent, root=root, ctx=ctx)
    if kind is not None:
        candidate.kind, candidate.root = kind, root


def _check_model_names(
    cases: Sequence[Case], config: AssayConfig | None, problems: Problems
) -> None:
    """A model a suite or the config names must have a known provider (`antropic/x` is
    a typo, not an OpenAI-compatible model): one error per file and model."""
    named: dict[tuple[str, str], SourcePosition] = {}
    if config is not None:
        for key in ("model", "judge_model"):
            value = getattr(config, key)
            if value and "/" in value:
                named.setdefault((str(config.path), value), SourcePosition(config.path))
    for case in cases:
        if case.model and "/" in case.model:
            where = SourcePosition(case.source_path, case.source_line)
            named.setdefault((str(case.source_path), case.model), where)
    if not named:
        return
    # lazy: start-up (not loaded with this module)
    from assay.models.registry import unknown_provider

    for (_, model), where in named.items():
        reason = unknown_provider(model)
        if reason is not None:
            problems.error(reason, where)


def _root_for(target: Path, kind: FileKind | str | None) -> Path:
    """The eval root a PATH implies: a directory is one; a file's depends on its format."""
    if target.is_dir():
        return target
    if kind in ("review-json", "verification"):
        return target.parent.parent  # <root>/<category>/<name>.json
    return target.parent


def _load_rest(candidate: _Candidate, ctx: LoadContext) -> None:
    doc, kind, problems = candidate.doc, candidate.kind, ctx.problems
    if kind == "category-defaults":
        # lazy: start-up (not loaded with this module)
        from assay.suites.review import load_category_defaults

        load_category_defaults(candidate.path.parent, root=candidate.root, ctx=ctx)
        return
    if candidate.error is not None:
        problems.add(candidate.error)
        return
    assert doc is not None
    if kind is None:
        if candidate.explicit:
            problems.error(
                "not a suite file: it has none of the keys of any suite format "
                "(see `assay schema` for the formats)",
                SourcePosition(candidate.path),
            )
        return
    if kind not in _LOADED_FIRST:  # task suites and rubric manifests were loaded first
        candidate.cases = load_cases(kind, doc, root=candidate.root, ctx=ctx)


def _report_empty_targets(targets: list[Path], kept: list[_Candidate], problems: Problems) -> None:
    for number, target in enumerate(targets):
        mine = [c for c in kept if number in c.targets]
        if not target.exists() or any(c.error for c in mine) or (mine and mine[0].explicit):
            continue
        if not any(c.kind not in (None, "category-defaults") for c in mine):
            problems.error(
                f"no suites found under {target}{_unrecognised(target, mine)}",
                SourcePosition(target),
            )


_UNRECOGNISED_NAMED = 3
"""How many of a directory's unrecognised YAML/JSON files its "no suites" error names."""


def _unrecognised(target: Path, candidates: list[_Candidate]) -> str:
    """Why a directory holding YAML or JSON files has no suites: the files read that have
    none of any format's keys (a user's mistyped suite would otherwise vanish silently)."""
    names = [
        c.path.relative_to(target).as_posix()
        for c in candidates
        if c.kind is None and c.error is None and c.path.is_relative_to(target)
    ]
    if not names:
        return ""
    shown = ", ".join(names[:_UNRECOGNISED_NAMED])
    if len(names) > _UNRECOGNISED_NAMED:
        shown += f" and {len(names) - _UNRECOGNISED_NAMED} more"
    what = "is not a suite file" if len(names) == 1 else "are not suite files"
    return f": {shown} {what} (none of the keys of any suite format; see `assay schema`)"


# Ids reach terminals, CI logs, file names and reports. Names written in a suite are
# checked by its model; these also cover ids taken from file and directory names.


def _id_problem(case_id: str) -> str | None:
    if has_control(case_id):
        return (
            f"case id {case_id!r} has control characters; rename the case (the id, or the "
            "file or directory it is named after)"
        )
    if case_id.startswith("::"):
        return f"case id {case_id!r} would start a GitHub workflow command; rename it"
    return None


_WARDEN_FORMATS = frozenset({"review-yaml", "review-json", "verification"})
"""Formats whose tool runs two cases of one name both (vitest allows a test name twice)."""


def _make_ids_unique(suite_files: list[_Candidate], problems: Problems) -> None:
    """Refuse ids that cannot be ids; a Warden case whose id an earlier Warden case has
    runs as `<id>#2` (`#3`, ...) with a warning naming both; other clashes are errors."""
    first: dict[str, tuple[SourcePosition, Case]] = {}
    taken = {case.id for candidate in suite_files for case in candidate.cases}
    for candidate in suite_files:
        leftmost = _leftmost_columns(candidate)
        kept: list[Case] = []
        for case in candidate.cases:
            where = SourcePosition(
                case.source_path, case.source_line, leftmost.get(case.source_line, 1)
            )
            bad = _id_problem(case.id)
            if bad is not None:
                problems.error(bad, where)
            elif case.id in first:
                earlier, earlier_case = first[case.id]
                other = display_location(earlier)
                if case.format in _WARDEN_FORMATS and earlier_case.format in _WARDEN_FORMATS:
                    number = 2
                    while f"{case.id}#{number}" in taken:
                        number += 1
                    renamed = f"{case.id}#{number}"
                    problems.unknown_key(
                        f"duplicate case id {case.id!r} (also defined at {other}): both run, "
                        f"this one as {renamed!r}",
                        where,
                    )
                    taken.add(renamed)
                    case = dataclasses.replace(case, id=renamed)
                    first[renamed] = (where, case)
                else:
                    problems.error(
                        f"duplicate case id {case.id!r} (also defined at {other})", where
                    )
            else:
                first[case.id] = (where, case)
            kept.append(case)
        candidate.cases = tuple(kept)


def _leftmost_columns(candidate: _Candidate) -> dict[int, int]:
    """Line -> the leftmost column recorded on it: where a case that starts there starts.

    One pass over the file's positions, not one per case (100k cases in one file made
    that a 10^10-step loop)."""
    assert candidate.doc is not None
    leftmost: dict[int, int] = {}
    for line, column in candidate.doc.positions.by_path.values():
        if column < leftmost.get(line, column + 1):
            leftmost[line] = column
    return leftmost


def _in_reading_order(problems: list[ConfigError]) -> list[ConfigError]:
    """Readable paths, sorted by file, line and column (the order problems were found varies)."""

    def position(problem: ConfigError) -> tuple[str, int, int]:
        location = problem.location
        return (str(location.path), location.line, location.col) if location else ("", 0, 0)

    return sorted((displayed(p) for p in problems), key=position)


def _inside_any(path: Path, directories: list[Path]) -> bool:
    real = real_path(path)
    return any(real != d and is_inside(real, d, resolved=True) for d in directories)


def _common_root(roots: list[Path]) -> Path:
    if not roots:
        return Path(os.getcwd())
    return Path(os.path.commonpath([str(r) for r in roots]))
