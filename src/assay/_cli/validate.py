"""`assay validate [PATH...] [--strict] [--json]`: load every suite, run nothing."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import Any

from assay._util.display import display_path
from assay.core.exit_codes import EXIT_PASS, EXIT_USAGE
from assay.errors import ConfigError
from assay.runner.preflight import preflight
from assay.suites.load import LoadedSuites, SuiteLoadErrors, load_suites
from assay.upstream.warden.evalts import warden_model

__all__ = ["command", "print_warnings", "problem_json"]

EXIT_OK, EXIT_INVALID = EXIT_PASS, EXIT_USAGE


def command(args: argparse.Namespace) -> int:
    try:
        loaded = load_suites(args.paths, strict=args.strict, root=args.root)
    except SuiteLoadErrors as exc:
        if args.json:
            _print_json(ok=False, loaded=None, warnings=exc.warnings, errors=exc.errors)
        else:
            print_warnings(exc.warnings)
            for error in exc.errors:
                print(error, file=sys.stderr)
            print(f"assay: {_plural(len(exc.errors), 'error')}", file=sys.stderr)
        return EXIT_INVALID
    readiness = run_warnings(loaded, args.paths)
    if args.json:
        _print_json(
            ok=True, loaded=loaded, warnings=loaded.warnings, errors=(), run_warnings=readiness
        )
    else:
        print_warnings((*loaded.warnings, *readiness))
        _print_table(loaded)
    return EXIT_OK


def run_warnings(loaded: LoadedSuites, paths: list[str]) -> list[ConfigError]:
    """What `assay run` would refuse or skip here (no agent command, no key), as warnings:
    validate runs nothing, and the machine that runs the suites may have what this one lacks."""

    try:
        planned = preflight(loaded.cases, paths=paths, config=loaded.config)
    except ConfigError as exc:  # a malformed ASSAY_* value: `assay run` says it
        return [ConfigError(f"assay run would stop: {exc.message}", exc.location)]
    return [*planned.problems, *(ConfigError(w) for w in planned.warnings)]


def print_warnings(warnings: tuple[ConfigError, ...] | list[ConfigError]) -> None:
    for warning in warnings:
        where = f"{warning.location}: " if warning.location else ""
        print(f"{where}warning: {warning.message}", file=sys.stderr)


def problem_json(problem: ConfigError) -> dict[str, Any]:
    location = problem.location
    return {
        "path": str(location.path) if location else None,
        "line": location.line if location else 0,
        "col": location.col if location else 0,
        "message": problem.message,
    }


def _counts(loaded: LoadedSuites) -> tuple[Counter[str], Counter[str], Counter[str]]:
    files: Counter[str] = Counter(f.format for f in loaded.files)
    by_format: Counter[str] = Counter(c.format for c in loaded.cases)
    by_kind: Counter[str] = Counter(c.kind for c in loaded.cases)
    return files, by_format, by_kind


def _print_table(loaded: LoadedSuites) -> None:
    files, by_format, by_kind = _counts(loaded)
    width = max([len("format")] + [len(name) for name in files])
    print(f"{'format':<{width}}  {'files':>5}  {'cases':>5}")
    for name in sorted(files):
        print(f"{name:<{width}}  {files[name]:>5}  {by_format[name]:>5}")
    print()
    print(f"{'kind':<{width}}  {'cases':>5}")
    for kind in sorted(by_kind):
        print(f"{kind:<{width}}  {by_kind[kind]:>5}")
    _print_categories(loaded)
    print(f"ok: {_plural(len(loaded.cases), 'case')} in {_plural(len(loaded.files), 'file')}")


_SETTINGS = ("skill", "runtime", "model", "max_turns", "timeout_ms")


def category_settings(loaded: LoadedSuites) -> list[dict[str, Any]]:
    """Per Warden category: each setting's value and where it came from.

    Sources: `<name>.eval.ts:<line>`, `_suite.yaml`, `Warden default`, `default` (assay's
    conventional `skills/<category>.md`), or `unset`. The command line (`--skill`,
    `--runtime`, `--model`) beats all of them when the cases run.
    """
    # lazy: start-up (a command loads only what it runs)
    from assay.models.names import DEFAULT_MODEL

    rows = []
    for directory, defaults in loaded.categories:
        settings: dict[str, dict[str, Any]] = {}
        for name in _SETTINGS:
            value: Any = getattr(defaults, name)
            source = defaults.sources.get(name, "unset")
            if name == "skill" and value is not None:
                value = display_path(value)
            if name == "model" and value is None:
                # What the cases then get: Warden's model for its `pi` runtime, else assay's.
                pi = defaults.runtime == "pi"
                value = warden_model() if pi else DEFAULT_MODEL
                source = "Warden default" if pi else "default"
            if name == "runtime" and value is None:
                value, source = "builtin", "default"
            if value is None and name in ("max_turns", "timeout_ms"):
                continue
            settings[name] = {"value": value, "from": source}
        rows.append({"category": display_path(directory), "settings": settings})
    return rows


def _print_categories(loaded: LoadedSuites) -> None:
    rows = category_settings(loaded)
    if not rows:
        return
    print()
    print("category settings (the command line overrides them at run time):")
    for row in rows:
        print(f"  {row['category']}")
        for name, setting in row["settings"].items():
            value = "(none)" if setting["value"] is None else setting["value"]
            print(f"    {name:<10} {value}  [{setting['from']}]")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _print_json(
    *,
    ok: bool,
    loaded: LoadedSuites | None,
    warnings: tuple[ConfigError, ...],
    errors: tuple[ConfigError, ...] | list[ConfigError],
    run_warnings: list[ConfigError] | None = None,
) -> None:
    files, by_format, by_kind = _counts(loaded) if loaded else (Counter(), Counter(), Counter())
    result = {
        "ok": ok,
        "files": [
            {"path": display_path(f.path), "format": f.format, "cases": f.case_count}
            for f in (loaded.files if loaded else ())
        ],
        "counts": {
            "format": {n: {"files": files[n], "cases": by_format[n]} for n in sorted(files)},
            "kind": dict(sorted(by_kind.items())),
        },
        "categories": category_settings(loaded) if loaded else [],
        "warnings": [problem_json(w) for w in warnings],
        "errors": [problem_json(e) for e in errors],
        # What `assay run` would refuse or skip on this machine (no agent command, no key):
        # kept apart from `warnings`, which are the suites' own problems.
        "run_warnings": [problem_json(w) for w in run_warnings or ()],
    }
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
