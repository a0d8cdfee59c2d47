"""A run's options decided and checked: the one place their precedence is applied.

`assay.run(RunOptions(...))` and `assay run ...` both come here (the command line passes
only what was typed), so they read the same `ASSAY_*` variables, apply the same
configuration and refuse the same values with the same message. Per option, the first
that has a value wins: the option given > `ASSAY_<OPTION>` > `[tool.assay]` > the suite
(the case's own timeout, `runner/resolve.py: case_timeout`) > the default in
`assay.options`. Models, runtime, agent command and judge model are decided per case in
`runner/resolve.py`, from the values decided here.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util.arguments import as_paths, as_texts, expect, is_number, is_path
from assay.core.shards import format_shard
from assay.errors import ConfigError
from assay.options import ENV_OPTIONS, OPTION_CHOICES, RunOptions, RunSettings, options_from_environ
from assay.registry.runtimes import unknown_runtime
from assay.report import read
from assay.report.gate.pass_k import min_pass_problem
from assay.report.gate.stats import gate_option_problems
from assay.runner.arguments import parse_models, parse_shard
from assay.runner.kinds import kind_of
from assay.suites.command import read_agent_command

if TYPE_CHECKING:
    from assay.report.model import Report
    from assay.suites.case import Case
    from assay.suites.config import AssayConfig

__all__ = [
    "DEFAULT",
    "GIVEN",
    "check_settings",
    "check_work_root",
    "resolve_settings",
    "read_baseline",
    "tasks_one_at_a_time",
]

GIVEN = "option"
"""The source of a value given in RunOptions (on the command line, for `assay run`)."""
DEFAULT = "default"

_CONFIG_KEYS = {
    # RunOptions field -> its `[tool.assay]` key, for the options decided once per run.
    # (runtime, agent_command, model and judge_model are per-case fallbacks: resolve.py.)
    "concurrency": "concurrency",
    "timeout_s": "timeout",
    "threshold": "threshold",
    "max_errors": "max_errors",
    "min_pass": "min_pass",
    "require_all": "require_all",
    "gate": "gate",
    "inconclusive": "inconclusive",
    "errors_count_as": "errors_count_as",
    "hidden_changes": "hidden_changes",
    "floor": "floor",
    "report_dir": "report_dir",
    "isolation": "isolation",
    "agent_network": "agent_network",
    "command_network": "command_network",
}
_NOT_DECIDED_HERE = frozenset(
    {"paths", "extra_env", "sandboxing", "pass_env", "quarantine", "affects_all"}
)


def resolve_settings(
    options: RunOptions,
    *,
    config: AssayConfig | None,
    environ: Mapping[str, str] | None = None,
) -> RunSettings:
    """`options` with every unset option decided (environ: default `os.environ`).

    A `RunSettings` may be decided again (with the configuration found by loading): its
    values keep their sources, and those that were defaults are decided anew. Raises
    ConfigError for a malformed `ASSAY_*` value, agent command or shard.
    """

    _check_option_types(options)
    env = options_from_environ(
        os.environ if environ is None else environ, runtime_problem=unknown_runtime
    )
    recorded = options.sources if isinstance(options, RunSettings) else {}
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    warnings: list[str] = []
    for spec in dataclasses.fields(RunOptions):
        name = spec.name
        if name in _NOT_DECIDED_HERE:
            continue
        given = getattr(options, name)
        if recorded.get(name) == DEFAULT:
            given = None
        configured = getattr(config, _CONFIG_KEYS[name], None) if name in _CONFIG_KEYS else None
        if given is not None and given != ():
            values[name], sources[name] = given, recorded.get(name, GIVEN)
        elif name in env:
            values[name], sources[name] = env[name]
        elif configured is not None and _weakens_in_ci(name, configured, environ):
            warnings.append(
                f"{config.path if config else '[tool.assay]'}: {_CONFIG_KEYS[name]} = "
                f"{configured!r} is not taken in GitHub Actions, where the pull request can "
                "change this file; set the Action's `isolation` input (ASSAY_ISOLATION) instead"
            )
            sources[name] = DEFAULT
        elif configured is not None:
            values[name], sources[name] = configured, str(config.path if config else "")
        else:
            sources[name] = DEFAULT
    if isinstance(options, RunSettings) and options.adaptive and sources.get("repeat") != DEFAULT:
        values["repeat"] = "auto"  # decided again: still adaptive, up to its max-repeat
    _normalise(values, warnings)
    pass_env = _pass_env(options, env, config)
    return RunSettings(
        paths=_paths(options.paths),
        extra_env=dict(options.extra_env),
        sandboxing=options.sandboxing,
        pass_env=pass_env,
        quarantine=_joined("quarantine", options.quarantine, env, config),
        affects_all=_joined("affects_all", options.affects_all, env, config),
        **values,
        sources=sources,
        warnings=tuple(warnings),
    )


def _weakens_in_ci(name: str, configured: object, environ: Mapping[str, str] | None) -> bool:
    """Whether the configuration file's `configured` value of `name` turns the OS sandbox
    off inside GitHub Actions, where the file is the pull request's to write: there only
    the job's own settings (the Action's input, ASSAY_ISOLATION) may."""
    env = os.environ if environ is None else environ
    return name == "isolation" and configured == "none" and env.get("GITHUB_ACTIONS") == "true"


def tasks_one_at_a_time(settings: RunSettings) -> bool:
    """Whether task cases run one at a time, beside the others: unless the user chose a
    concurrency (an option, `ASSAY_CONCURRENCY`, `[tool.assay]`), PVYai's rule holds. PVYai
    runs its tasks one after another, and a task that binds a fixed port or shares a /tmp
    path or a cache with another would fail beside it."""
    return settings.concurrency > 1 and settings.sources.get("concurrency", DEFAULT) == DEFAULT


def _paths(paths: object) -> tuple[str, ...]:
    """`paths` as given: a tuple or list of paths, or one path on its own."""
    if isinstance(paths, str | Path):
        return (str(paths),)
    return tuple(str(path) for path in paths)  # type: ignore[attr-defined]


def _normalise(values: dict[str, Any], warnings: list[str]) -> None:
    """Raw forms (text from a variable, a string from a library caller) into their types."""
    if values.get("repeat") == "auto":
        # lazy: start-up (not loaded with this module)
        from assay.runner.adaptive import DEFAULT_MAX_REPEAT

        values["adaptive"] = True
        values["repeat"] = values.get("max_repeat") or DEFAULT_MAX_REPEAT
    if "models" in values:
        raw = values["models"]
        values["models"] = parse_models([raw] if isinstance(raw, str) else list(raw))
    if isinstance(values.get("patterns"), str):
        values["patterns"] = (values["patterns"],)
    elif "patterns" in values:
        values["patterns"] = tuple(values["patterns"])
    if isinstance(values.get("shard"), str):
        values["shard"] = parse_shard(values["shard"])
    for name in ("threshold", "floor"):
        if isinstance(values.get(name), float):
            values[name] += 0.0  # -0.0 (a config's, a library caller's) is 0, shown as 0.00
    if isinstance(values.get("agent_command"), str):
        values["agent_command"] = _agent_command(values["agent_command"], warnings)
    elif values.get("agent_command") is not None:
        values["agent_command"] = tuple(values["agent_command"])
    for name in (
        "root",
        "skill",
        "report_dir",
        "history_dir",
        "work_root",
        "cache_dir",
        "resume_dir",
        "baseline",
    ):
        if name in values:
            values[name] = Path(values[name])


def _agent_command(text: str, warnings: list[str]) -> tuple[str, ...]:
    try:
        # `./agent.sh` given as text means beside the caller, as in a shell.
        argv, typos = read_agent_command(text, base_dir=Path.cwd())
    except ValueError as exc:
        raise ConfigError(f"--agent-command {text!r}: {exc}") from None
    warnings.extend(f"--agent-command: {typo}" for typo in typos)
    return argv


def _pass_env(
    options: RunOptions, env: Mapping[str, tuple[object, str]], config: AssayConfig | None
) -> tuple[str, ...]:
    """Every source's names together: each only lets more through, none overrides another."""
    entries = [*(config.pass_env if config else ()), *as_texts("pass_env", options.pass_env)]
    if "pass_env" in env:
        entries.append(str(env["pass_env"][0]))
    names = [name.strip() for entry in entries for name in entry.split(",")]
    return tuple(dict.fromkeys(name for name in names if name))


def _joined(
    name: str,
    given: str | Sequence[str],
    env: Mapping[str, tuple[object, str]],
    config: AssayConfig | None,
) -> tuple[str, ...]:
    """Every source's entries together (as `pass_env`): quarantine ids, affects_all globs.

    A string given on its own is one entry (`quarantine="bugs/case-00"`), not its letters."""
    entries = [*(getattr(config, name) if config else ()), *as_texts(name, given)]
    if name in env:
        entries.append(str(env[name][0]))
    ids = [case_id.strip() for entry in entries for case_id in entry.split(",")]
    return tuple(dict.fromkeys(case_id for case_id in ids if case_id))


_SEVERAL = frozenset({"patterns", "models", "quarantine", "affects_all", "pass_env"})
"""Options taking several values, where one string on its own is one value."""


def _check_option_types(options: object) -> None:
    """A library caller's RunOptions checked before anything reads it: a value of the wrong
    type is a TypeError naming the field (`RunOptions(threshold="0.8")`), a value outside
    an option's choices a ConfigError, as the same value in its `ASSAY_*` variable is.

    Each option's kind comes from the table its `ASSAY_*` variable is read by
    (`options.ENV_OPTIONS`), so a new option is checked as it is read.
    """
    expect("options", options, RunOptions, "a RunOptions, e.g. assay.RunOptions(paths=('evals',))")
    assert isinstance(options, RunOptions)
    as_paths("RunOptions.paths", options.paths)
    expect("RunOptions.extra_env", options.extra_env, dict, "a dict of str to str")
    for name, _flag, kind in ENV_OPTIONS:
        value = getattr(options, name)
        field = f"RunOptions.{name}"
        if value is None:
            continue
        if name in _SEVERAL or name == "agent_command":
            as_texts(field, value)
        elif name == "shard":
            expect(field, value, _is_shard, 'a str "I/N" or a pair of ints (index, count)')
        elif kind == "path":
            expect(field, value, is_path, "a path (str or os.PathLike)")
        elif kind == "int":
            expect(field, value, int, "an int")
        elif kind == "repeat":
            expect(field, value, _is_repeat, 'an int or "auto"')
        elif kind == "float":
            expect(field, value, is_number, "a number (int or float)")
        elif kind in ("flag", "on_off"):
            expect(field, value, bool, "True or False")
        else:  # text, choice
            expect(field, value, str, "a str")
            choices = OPTION_CHOICES.get(name)
            if choices is not None and value not in choices:
                raise ConfigError(f"{field} must be one of {', '.join(choices)}, got {value!r}")


def _is_repeat(value: object) -> bool:
    return value == "auto" or (isinstance(value, int) and not isinstance(value, bool))


def _is_shard(value: object) -> bool:
    if isinstance(value, str):
        return True
    pair = value if isinstance(value, tuple | list) else ()
    return len(pair) == 2 and all(isinstance(n, int) and not isinstance(n, bool) for n in pair)


MAX_REPEAT = 1000
"""Attempts per case at most: far past where a pass rate's interval stops narrowing, and
a bound the plan (a list of attempts per case) can hold."""


def check_settings(settings: RunSettings) -> None:
    """Reject option values no run can use, before anything is built."""

    problems: list[str] = []
    if settings.concurrency < 1:
        problems.append(f"--concurrency must be at least 1, got {settings.concurrency}")
    # `--repeat auto` runs up to --max-repeat, which is then its repeat count too.
    repeats = {"--max-repeat": settings.max_repeat}
    if not settings.adaptive:
        repeats["--repeat"] = settings.repeat
    for flag, repeat in repeats.items():
        if repeat is not None and not 1 <= repeat <= MAX_REPEAT:
            problems.append(f"{flag} must be between 1 and {MAX_REPEAT}, got {repeat}")
    source = settings.sources.get("min_pass", GIVEN)
    if problem := min_pass_problem(
        settings.min_pass,
        repeat=settings.repeat,
        adaptive=settings.adaptive,
        flag="--min-pass" if source == GIVEN else f"--min-pass (from {source})",
    ):
        problems.append(problem)
    if not settings.timeout_s > 0 or math.isinf(settings.timeout_s):
        problems.append(
            f"--timeout must be a positive number of seconds, got {settings.timeout_s:g}"
        )
    problems += gate_option_problems(threshold=settings.threshold, max_errors=settings.max_errors)
    if settings.floor is not None and not 0.0 <= settings.floor <= 1.0:
        problems.append(f"--floor must be between 0 and 1, got {settings.floor:g}")
    if settings.gate == "regression" and settings.baseline is None and settings.floor is None:
        problems.append("--gate regression needs --baseline REPORT (or at least --floor X)")
    if settings.baseline is not None and not settings.baseline.is_file():
        problems.append(f"--baseline {settings.baseline}: no such report file")
    if settings.max_cost_usd is not None and not settings.max_cost_usd >= 0:
        problems.append(f"--max-cost must be 0 or more, got {settings.max_cost_usd:g}")
    if (
        settings.resume_dir is not None
        and settings.sources.get("report_dir") == GIVEN
        and Path(settings.report_dir).resolve() != Path(settings.resume_dir).resolve()
    ):
        problems.append(
            f"--resume {settings.resume_dir} continues that run in its own directory, so "
            f"--report-dir {settings.report_dir} would be ignored: drop one of them"
        )
    if settings.offline and settings.cache_dir is None:
        problems.append("--offline replays recorded model calls: it needs --cache DIR")
    if settings.cache_dir is not None:
        # lazy: start-up (not loaded with this module)
        from assay.models.cache import cache_dir_problem

        # Before any model is called: a file here used to fail every case after its calls.
        if problem := cache_dir_problem(settings.cache_dir.expanduser(), must_exist=False):
            problems.append(f"--cache {settings.cache_dir}: {problem}")
    if settings.skill is not None and not settings.skill.exists():
        problems.append(f"--skill {settings.skill}: no such file or directory")
    if settings.shard is not None:
        parse_shard(format_shard(settings.shard) or "")
    problems += _unknown_providers(settings)
    if problems:
        raise ConfigError("; ".join(problems))


def _unknown_providers(settings: RunSettings) -> list[str]:
    named = [("--model", m) for m in settings.models if "/" in m]
    if settings.judge_model and "/" in settings.judge_model:
        named.append(("--judge-model", settings.judge_model))
    if not named:
        return []
    # lazy: start-up (not loaded with this module)
    from assay.models.registry import unknown_provider

    return [f"{flag} {reason}" for flag, m in named if (reason := unknown_provider(m))]


def check_work_root(work_root: Path, cases: Sequence[Case]) -> None:
    """Sandboxes copy fixture directories: one made inside such a directory would copy
    itself into itself, level after level, and leave itself behind in the fixture."""

    real_root = Path(os.path.realpath(work_root))
    for case in cases:
        tree = kind_of(case).copied_tree(case.spec)
        if tree is None or not tree.is_dir():
            continue
        real_tree = Path(os.path.realpath(tree))
        if real_root == real_tree or real_tree in real_root.parents:
            raise ConfigError(
                f"--work-root {work_root} is inside the fixture {tree} of {case.id}; "
                "put sandboxes outside the suites' fixtures"
            )


def read_baseline(settings: RunSettings) -> Report | None:
    """The `--baseline` report, read here and only here, when the run is prepared (a
    malformed one is a ConfigError naming the file, before anything runs); the run passes
    this copy to the regression gate and `--repeat auto`."""
    if settings.baseline is None:
        return None

    return read.read_report(settings.baseline)  # through the module: tests count the reads
