"""What a run of loaded suites would do here, planned without running anything.

`assay validate` shows its problems as warnings (validate runs nothing, so a missing key
or agent command is not an error of the suite); `assay doctor` shows the whole plan. Both
plan with the settings `assay run` would decide with no options typed (ASSAY_*, the
`[tool.assay]` config, the defaults), so they say what a plain `assay run` would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import ConfigError, ConfigErrors
from assay.options import RunOptions
from assay.runner.defaults import missing_key_warnings
from assay.runner.plan import (
    PlannedRun,
    agent_command_problems,
    commandless_suites,
    plan_runs,
    run_notes,
)
from assay.runner.settings import resolve_settings

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.suites.case import Case
    from assay.suites.config import AssayConfig

__all__ = ["Preflight", "preflight"]


@dataclass(frozen=True)
class Preflight:
    runs: tuple[PlannedRun, ...]
    """Every planned (case, model) run; `skip_reason` says which would be skipped."""
    problems: tuple[ConfigError, ...]
    """What `assay run` would refuse with exit 2 (agent commands, unknown runtimes)."""
    warnings: tuple[str, ...]
    """The keys that would let skipped runs run."""
    notes: tuple[str, ...]
    """What the run would say once (default models served elsewhere, ...)."""

    @property
    def scored(self) -> int:
        """How many runs would be scored (not skipped)."""
        return sum(1 for run in self.runs if run.skip_reason is None)


def preflight(
    cases: Sequence[Case],
    *,
    paths: Sequence[str | Path] = (),
    config: AssayConfig | None,
    options: RunOptions | None = None,
    environ: Mapping[str, str] | None = None,
) -> Preflight:
    """Plan `cases` as `assay run` would (with `options`, default none typed)."""

    given = options or RunOptions(paths=tuple(str(p) for p in paths))
    settings: RunSettings = resolve_settings(given, config=config, environ=environ)
    try:
        runs = plan_runs(cases, options=settings, config=config, check_commands=False)
    except ConfigErrors as exc:
        return Preflight((), tuple(exc.errors), (), ())
    except ConfigError as exc:
        return Preflight((), (exc,), (), ())
    problems = commandless_suites(runs) + agent_command_problems(runs, options=settings)
    warnings = missing_key_warnings(runs, options=settings, config=config)
    notes = run_notes(runs, options=settings)
    return Preflight(tuple(runs), tuple(problems), tuple(warnings), tuple(notes))
