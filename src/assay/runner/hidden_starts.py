"""A command whose program or script the OS sandbox hides is refused before any case runs.

An agent command or a verification command can name a file by absolute path that no
confined program can see: a script in /tmp or HOME, a file outside the project, one the
checkout does not track (`isolation/exposure.py` decides what is shown). Run as it is, every
case would end in the program's own "No such file". The run stops at the start instead,
exit 2, naming the file, the mask that hides it and what would show it (commit it in the
project, or `--isolation none`). Other arguments naming hidden files (data the program
may never open) are noted on stderr, not refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assay.core.positions import SourcePosition
from assay.errors import ConfigError, ConfigErrors
from assay.suites.case import TaskSpec
from assay.upstream.pvyai.paths import go_trim_space

if TYPE_CHECKING:
    from assay.isolation.bwrap import Sandboxing
    from assay.runner.plan import PlannedRun

__all__ = ["refuse_hidden_starts"]


def refuse_hidden_starts(sandboxing: Sandboxing | None, runs: Sequence[PlannedRun]) -> None:
    """Raise ConfigError(s) for each command of `runs` that starts a file the sandbox hides."""
    if sandboxing is None or sandboxing.mode == "none":
        return
    problems: dict[str, ConfigError] = {}
    for run in runs:
        if run.skip_reason is not None:
            continue
        if run.agent_command and (hidden := sandboxing.hidden_start(run.agent_command)):
            path, why = hidden
            message = f"the agent command starts {path}, which confined programs cannot see: {why}"
            problems.setdefault(message, ConfigError(message))
        if not isinstance(run.case.spec, TaskSpec):
            continue
        for command in run.case.spec.commands:
            # As it runs: PVYai trims each element and leaves out the blank ones.
            argv = [part for element in command.argv if (part := go_trim_space(element))]
            if hidden := sandboxing.hidden_start(argv):
                path, why = hidden
                message = (
                    f"task {run.case.local_id!r}: verification command {command.id!r} starts "
                    f"{path}, which confined programs cannot see: {why}"
                )
                problems.setdefault(
                    f"{run.case.source_path}: {message}",
                    ConfigError(message, SourcePosition(run.case.source_path)),
                )
    if len(problems) == 1:
        raise next(iter(problems.values()))
    if problems:
        raise ConfigErrors(problems.values())
