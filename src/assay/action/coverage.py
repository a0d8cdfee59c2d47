"""Files the results depend on that `trigger-paths` does not cover.

A pull request that changes only the agent under test (its skill, its prompt, the script
its command runs) or only a suite file outside `evals/` is exactly the one whose evals
matter, and with trigger-paths that miss those files it skips them, quietly. After
loading the suites, `assay ci` names every such file in one warning.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from assay.action.globs import first_match
from assay.suites.case import Case, ReviewSpec, VerifySpec

__all__ = ["uncovered_inputs", "uncovered_warning"]

_SHOWN = 5


def _inside(path: Path, workspace: Path) -> str | None:
    """`path` relative to the workspace (POSIX), or None when it is elsewhere."""
    try:
        relative = Path(os.path.realpath(path)).relative_to(os.path.realpath(workspace))
    except ValueError:
        return None
    return relative.as_posix()


def _command_files(argv: Iterable[str], workspace: Path) -> list[Path]:
    """The argv elements that name a file of the workspace (the agent's own script)."""
    found = []
    for token in argv:
        if "{" in token or token.startswith("-"):
            continue  # a placeholder or an option, not a file of the agent
        path = Path(token) if os.path.isabs(token) else workspace / token
        if path.is_file():
            found.append(path)
    return found


def uncovered_inputs(
    cases: Iterable[Case],
    *,
    trigger_paths: tuple[str, ...],
    workspace: Path,
    agent_command: tuple[str, ...] | None,
) -> list[tuple[str, str]]:
    """(workspace-relative path, what it is) for each input no trigger path matches."""
    inputs: dict[str, str] = {}

    def note(path: Path, what: str) -> None:
        relative = _inside(path, workspace)
        if relative is not None:
            inputs.setdefault(relative, what)

    for path in _command_files(agent_command or (), workspace):
        note(path, "the agent command")
    for case in cases:
        note(case.source_path, f"suite {case.suite}")
        if isinstance(case.spec, ReviewSpec | VerifySpec) and case.spec.skill is not None:
            note(case.spec.skill, f"the skill of {case.suite}")
        for path in _command_files(case.agent_command or (), workspace):
            note(path, f"the agent command of {case.suite}")
    return [
        (path, what) for path, what in inputs.items() if first_match((path,), trigger_paths) is None
    ]


def uncovered_warning(uncovered: list[tuple[str, str]]) -> str | None:
    """One warning naming what trigger-paths misses, or None when it misses nothing."""
    if not uncovered:
        return None
    shown = ", ".join(f"{path} ({what})" for path, what in uncovered[:_SHOWN])
    more = f" and {len(uncovered) - _SHOWN} more" if len(uncovered) > _SHOWN else ""
    return (
        f"trigger-paths does not cover {shown}{more}: a pull request that changes only "
        "these skips the evals. Add them (or their directories) to the trigger-paths input; "
        "see docs/github-action.md#trigger-paths"
    )
