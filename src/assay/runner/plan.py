"""Turning selected cases into planned runs: shard, model matrix, credentials, repeats.

A `PlannedRun` is one (case, model) pair; it becomes one CaseResult and one line of
results.jsonl. Its `repeat` attempts are the units the executor schedules.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay.agents import RUNTIMES, known_runtimes, runtime_spec
from assay.core import shards as core_shards
from assay.core.shards import format_shard
from assay.errors import ConfigError, ConfigErrors, SourcePosition
from assay.models.names import missing_credentials
from assay.runner.defaults import moved_notes, serve_defaults
from assay.runner.kinds import kind_of
from assay.runner.planned import ModelCalls, PlannedRun, model_calls
from assay.runner.resolve import (
    case_timeout,
    resolve_agent_command,
    resolve_runtime,
    subject_models,
)
from assay.runner.settings import tasks_one_at_a_time

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.suites.case import Case
    from assay.suites.config import AssayConfig

__all__ = [
    "ModelCalls",
    "agent_command_problems",
    "commandless_suites",
    "PlannedRun",
    "format_shard",
    "model_calls",
    "model_notes",
    "models_needed",
    "run_notes",
    "TASKS_ONE_AT_A_TIME_NOTE",
    "plan_runs",
    "shard_cases",
    "split_fingerprint",
]


def shard_cases(cases: Sequence[Case], shard: tuple[int, int] | None) -> list[Case]:
    """Every N-th case id in sorted order, starting at I-1.

    Sorting makes the split independent of discovery order, machine and file system;
    striding (rather than slicing) balances suites across shards. Models and repeats
    play no part, so every shard runs the full matrix for its cases.
    """
    if shard is None:
        return list(cases)
    chosen = core_shards.shard_part((case.id for case in cases), shard)
    return [case for case in cases if case.id in chosen]


def split_fingerprint(cases: Sequence[Case]) -> str:
    """What every shard of one split shares: a hash of the case ids it was cut from."""
    return core_shards.split_fingerprint_of(case.id for case in cases)


def models_needed(case: Case, *, options: RunSettings, config: AssayConfig | None) -> set[str]:
    """Every model `case` would call in this run (empty for a task case)."""
    runtime = resolve_runtime(case, options=options, config=config)
    needed: set[str] = set()
    for subject in subject_models(case, runtime=runtime, options=options, config=config):
        calls = model_calls(case, subject=subject, runtime=runtime, options=options, config=config)
        if options.cache_dir is None:  # as `plan_runs` serves a keyless default elsewhere
            _, calls, _ = serve_defaults(
                case, subject, calls, runtime=runtime, options=options, config=config
            )
        needed.update(m for m in (calls.subject, calls.judge) if m)
    return needed


def plan_runs(
    cases: Sequence[Case],
    *,
    options: RunSettings,
    config: AssayConfig | None,
    check_commands: bool = True,
) -> list[PlannedRun]:
    """Expand the model matrix and decide runtime, command, judge and skips per case.

    `check_commands=False` leaves the agent commands unchecked (`agent_command_problems`):
    a preview that reports them instead of stopping."""
    # With a record/replay cache the provider decides per call (a hit needs no key).
    check_keys = options.cache_dir is None
    runs: list[PlannedRun] = []
    unknown: list[ConfigError] = []
    for case in cases:
        runtime = resolve_runtime(case, options=options, config=config)
        spec = runtime_spec(runtime)
        if spec is None:
            unknown.append(
                ConfigError(
                    f"{case.id}: unknown runtime {runtime!r}{RUNTIMES.did_you_mean(runtime)} "
                    f"(known: {', '.join(known_runtimes())})",
                    SourcePosition(case.source_path, case.source_line),
                )
            )
            continue
        command = resolve_agent_command(case, options=options, config=config)
        timeout_s = case_timeout(case, settings=options)
        for model in subject_models(case, runtime=runtime, options=options, config=config):
            calls = model_calls(
                case, subject=model, runtime=runtime, options=options, config=config
            )
            moved: tuple[tuple[str, str], ...] = ()
            if check_keys:
                model, calls, moved = serve_defaults(
                    case, model, calls, runtime=runtime, options=options, config=config
                )
            reason = None
            if check_keys and calls.subject is not None:
                reason = missing_credentials(calls.subject)
            if check_keys and reason is None and calls.judge is not None:
                missing = missing_credentials(calls.judge)
                reason = f"judge: {missing}" if missing else None
            runs.append(
                PlannedRun(case, model, runtime, command, calls.judge, reason, timeout_s, moved)
            )
    if unknown:
        raise ConfigErrors(unknown)
    if check_commands:
        problems = agent_command_problems(runs, options=options)
        if problems:
            raise ConfigErrors(problems)
    return runs


def run_notes(runs: Sequence[PlannedRun], *, options: RunSettings) -> list[str]:
    """What the run says once (`run.notes`): the models agent CLIs could not run
    (`model_notes`), and that its task cases run one at a time."""
    notes = model_notes(runs) + moved_notes(runs)
    tasks = sum(1 for run in runs if kind_of(run.case).one_at_a_time and run.skip_reason is None)
    if tasks * options.repeat > 1 and tasks_one_at_a_time(options):
        notes.append(TASKS_ONE_AT_A_TIME_NOTE.format(concurrency=options.concurrency))
    return notes


TASKS_ONE_AT_A_TIME_NOTE = (
    "task cases run one at a time, as PVYai runs them (a task that binds a fixed port or "
    "shares /tmp paths or caches would fail beside another); other cases still run up to "
    "{concurrency} at a time. Set --concurrency (or ASSAY_CONCURRENCY, or [tool.assay] "
    "concurrency) to run tasks side by side"
)
"""The run's note when its task cases run one at a time (`settings.tasks_one_at_a_time`)."""


def model_notes(runs: Sequence[PlannedRun]) -> list[str]:
    """What the run says once about the models its agents get: each runtime that is not
    given a subject model it cannot run (an agent CLI preset asked for another provider's
    model), which then runs its own default model (`RuntimeSpec.model_problem`)."""
    notes: dict[str, None] = {}
    asked: set[tuple[str, str]] = set()
    for run in runs:
        spec = runtime_spec(run.runtime)
        if run.model is None or spec is None or spec.model_problem is None:
            continue
        if (run.runtime, run.model) in asked:
            continue
        asked.add((run.runtime, run.model))
        problem = spec.model_problem(run.model)
        if problem is not None:
            notes.setdefault(problem, None)
    return list(notes)


def agent_command_problems(
    runs: Sequence[PlannedRun], *, options: RunSettings
) -> list[ConfigError]:
    """An agent command that no case will run, that is missing, or whose program does not
    exist, is the user's mistake: said now, before a sandbox is built, not once per case
    as `error`."""
    commands = [run for run in runs if _runs_command(run.runtime)]
    if options.agent_command and options.runtime and not commands:
        suites = _some(list(dict.fromkeys(run.case.suite for run in runs)))
        return [
            ConfigError(
                f"--agent-command is never used: --runtime {options.runtime} runs every selected "
                f"case (suites {suites}) with assay's own agent; drop --runtime to run the agent "
                "command, or drop --agent-command (or ASSAY_AGENT_COMMAND)"
            )
        ]
    problems: list[ConfigError] = []
    missing: dict[str, list[str]] = {}
    for run in commands:
        program = run.agent_command[0] if run.agent_command else None
        if program is not None and not _runnable(program):
            missing.setdefault(program, []).append(run.case.id)
    problems += _missing_preset_programs(runs)
    problems += [
        ConfigError(
            f"agent command {program!r} not found"
            + (" on PATH" if os.sep not in program else "")
            + f" (needed by {_some(ids)}): install it or fix --agent-command / agent_command"
        )
        for program, ids in missing.items()
    ]
    return problems


def commandless_suites(runs: Sequence[PlannedRun]) -> list[ConfigError]:
    """A suite whose cases run an agent command and that has none (a task suite: PVYai's
    format has no place for one): every case would be an `error`, so it is said once, now."""

    suites: dict[Path, list[str]] = {}
    for run in runs:
        if _runs_command(run.runtime) and not run.agent_command:
            suites.setdefault(run.case.source_path, []).append(run.case.id)
    presets = [name for name in known_runtimes() if (spec := runtime_spec(name)) and spec.program]
    return [
        ConfigError(
            f"no agent command for {_cases(len(ids))} of this suite ({_some(ids)}): pass "
            "--agent-command, set agent_command in [tool.assay] (pyproject.toml or "
            f"assay.toml), or run an agent CLI with --runtime <preset> ({', '.join(presets)})",
            SourcePosition(path),
        )
        for path, ids in suites.items()
    ]


def _cases(count: int) -> str:
    return f"{count} case{'' if count == 1 else 's'}"


def _missing_preset_programs(runs: Sequence[PlannedRun]) -> list[ConfigError]:
    """A runtime that runs its own program (an agent CLI preset) needs it on PATH."""
    missing: dict[tuple[str, str], list[str]] = {}
    for run in runs:
        spec = runtime_spec(run.runtime)
        if spec is not None and spec.program is not None and not _runnable(spec.program):
            missing.setdefault((spec.name, spec.program), []).append(run.case.id)
    return [
        ConfigError(
            f"runtime {name} runs {program!r}, which is not on PATH (needed by {_some(ids)}): "
            f"install {program} or choose another runtime"
        )
        for (name, program), ids in missing.items()
    ]


def _runs_command(runtime: str) -> bool:
    spec = runtime_spec(runtime)
    return spec is not None and spec.runs_agent_command


def _runnable(program: str) -> bool:
    if "{" in program:  # filled in per attempt (`{workspace}/agent.sh`): known only then
        return True
    if os.path.isabs(program):
        return os.path.isfile(program) and os.access(program, os.X_OK)
    if os.sep in program or (os.altsep and os.altsep in program):
        return True  # relative to the sandbox the agent runs in, which does not exist yet
    return shutil.which(program) is not None


def _some(ids: Sequence[str]) -> str:
    shown = ", ".join(dict.fromkeys(ids[:3]))
    return shown + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
