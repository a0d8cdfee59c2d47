"""Agent command templates as users write them: a command line string or an argv list."""

from __future__ import annotations

import shlex
import string
from collections.abc import Collection
from pathlib import Path

__all__ = ["PLACEHOLDERS", "parse_agent_command", "unknown_placeholder"]

PLACEHOLDERS = ("workspace", "prompt", "task_id", "case_id", "model", "diff_file")
"""The `{name}`s an agent command may hold; the command runtime fills in each one."""


def parse_agent_command(value: str | list[str], *, base_dir: Path | None) -> tuple[str, ...]:
    """Split a string with shlex (no shell ever runs it) or take a list as argv.

    An element starting with `./` names a script beside the file that configured it, so it
    is made absolute against `base_dir`: the agent runs with the sandbox as its working
    directory, where the relative path would mean nothing. Raises ValueError for a string
    shlex cannot split, that holds no words, or whose placeholders are not all known:
    a template mistake is the user's, found before anything runs.
    """
    argv = shlex.split(value) if isinstance(value, str) else list(value)
    if not argv:
        raise ValueError("the agent command is empty")
    for element in argv:
        unknown = unknown_placeholder(element, PLACEHOLDERS)
        if unknown is not None:
            known = " ".join("{" + name + "}" for name in PLACEHOLDERS)
            raise ValueError(f"unknown placeholder {unknown}; known: {known}")
    if base_dir is not None:
        argv = [str(base_dir / arg[2:]) if arg.startswith("./") else arg for arg in argv]
    return tuple(argv)


def unknown_placeholder(element: str, known: Collection[str]) -> str | None:
    """The first `{...}` in `element` that is not a plain `{name}` from `known`, or None.

    ValueError for braces that do not pair up (`{{` and `}}` are literal braces).
    """
    try:
        parts = list(string.Formatter().parse(element))
    except ValueError as exc:
        raise ValueError(f"{element!r}: {exc} (write {{{{ and }}}} for literal braces)") from None
    for _, field, spec, conversion in parts:
        if field is not None and (field not in known or spec or conversion):
            return element[element.find("{" + field) :].split("}", 1)[0] + "}"
    return None
