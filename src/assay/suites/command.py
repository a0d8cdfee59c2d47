"""Agent command templates as users write them: a command line string or an argv list."""

from __future__ import annotations

import shlex
from pathlib import Path

__all__ = ["parse_agent_command"]


def parse_agent_command(value: str | list[str], *, base_dir: Path | None) -> tuple[str, ...]:
    """Split a string with shlex (no shell ever runs it) or take a list as argv.

    An element starting with `./` names a script beside the file that configured it, so it
    is made absolute against `base_dir`: the agent runs with the sandbox as its working
    directory, where the relative path would mean nothing. Raises ValueError for a string
    shlex cannot split or that holds no words.
    """
    argv = shlex.split(value) if isinstance(value, str) else list(value)
    if not argv:
        raise ValueError("the agent command is empty")
    if base_dir is not None:
        argv = [str(base_dir / arg[2:]) if arg.startswith("./") else arg for arg in argv]
    return tuple(argv)
