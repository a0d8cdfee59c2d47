"""Agent command templates as users write them: a command line string or an argv list.

`read_agent_command` is the one reading of an agent command, wherever it is written: a
suite file (`suite_agent_command`), `[tool.assay] agent_command`, `--agent-command` /
`ASSAY_AGENT_COMMAND`. Each gets the same argv and the same placeholder-typo warnings.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.core.placeholders import PLACEHOLDERS
from assay.suites.document import Document, Problems

__all__ = [
    "PLACEHOLDERS",
    "fill_placeholders",
    "parse_agent_command",
    "placeholder_typos",
    "read_agent_command",
    "suite_agent_command",
]


def parse_agent_command(value: str | list[str], *, base_dir: Path | None) -> tuple[str, ...]:
    """Split a string with shlex (no shell ever runs it) or take a list as argv.

    An element starting with `./` names a script beside the file that configured it, so it
    is made absolute against `base_dir`: the agent runs with the sandbox as its working
    directory, where the relative path would mean nothing. Raises ValueError for a string
    shlex cannot split or that holds no words. A `{...}` that is no placeholder stays as
    written, as PVYai leaves it (`fill_placeholders`).
    """
    argv = shlex.split(value) if isinstance(value, str) else list(value)
    if not argv:
        raise ValueError("the agent command is empty")
    if base_dir is not None:
        argv = [str(base_dir / arg[2:]) if arg.startswith("./") else arg for arg in argv]
    return tuple(argv)


def read_agent_command(
    value: str | list[str], *, base_dir: Path | None
) -> tuple[tuple[str, ...], list[str]]:
    """The agent command `value` as argv (`parse_agent_command`), with a warning for each
    `{name}` in it that looks like a mistyped placeholder (`placeholder_typos`). Raises
    ValueError when it cannot be read."""
    argv = parse_agent_command(value, base_dir=base_dir)
    return argv, placeholder_typos(argv)


def suite_agent_command(
    value: str | list[str], doc: Document, key_path: tuple[Any, ...], problems: Problems
) -> tuple[str, ...] | None:
    """A suite file's `agent_command` at `key_path`, a script beside the file taken as
    such; its error (then None) or typo warnings are reported at that line."""
    try:
        argv, typos = read_agent_command(value, base_dir=doc.path.parent)
    except ValueError as exc:
        problems.error(f"agent_command: {exc}", doc.location(key_path))
        return None
    for typo in typos:
        problems.warn(f"agent_command: {typo}", doc.location(key_path))
    return argv


_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill_placeholders(element: str, values: Mapping[str, str]) -> str:
    """`element` with each `{name}` of `values` replaced, in one pass (no value is rescanned).

    Any other `{...}`, and a brace that does not pair up, is left as is, as PVYai's
    replacer leaves it; `{{` and `}}` stand for literal braces (assay's escape).
    """

    def replace(match: re.Match[str]) -> str:
        token, name = match.group(0), match.group(1)
        if name is None:
            return token[0]
        return values.get(name, token)

    return _TOKEN.sub(replace, element)


def placeholder_typos(argv: tuple[str, ...] | list[str]) -> list[str]:
    """A warning for each `{name}` that is no placeholder but looks like one mistyped."""
    warnings = []
    for element in argv:
        for match in _TOKEN.finditer(element):
            name = match.group(1)
            if name is None or name in PLACEHOLDERS:
                continue
            close = difflib.get_close_matches(name, PLACEHOLDERS, n=1, cutoff=0.75)
            if close:
                warnings.append(
                    f"{{{name}}} is no placeholder and is passed as written; "
                    f"did you mean {{{close[0]}}}?"
                )
    return warnings
