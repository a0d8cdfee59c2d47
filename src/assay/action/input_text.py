"""The raw text of the Action's inputs, as the runner hands it over (standard library only).

A JavaScript action sees input `max-errors` as `INPUT_MAX-ERRORS`; a composite action sees
no inputs at all unless its steps pass them on, which action.yml does as `INPUT_MAX_ERRORS`.
Both spellings are read, then `ASSAY_MAX_ERRORS` (the variable `assay run` reads). An empty
value means "not given", as GitHub passes unset inputs.

inputs.py validates every input for `assay ci`; the decision step (decide.py) runs before
pydantic is installed and reads the few it needs through these functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.errors import SourcePosition

__all__ = [
    "DEFAULT_LABEL",
    "DEFAULT_TRIGGER_PATHS",
    "input_location",
    "raw_input",
    "split_list",
]

DEFAULT_LABEL = "run-evals"

DEFAULT_TRIGGER_PATHS: tuple[str, ...] = (
    "evals/**",
    "fixtures/**",
    "assay.toml",
    ".github/workflows/*eval*",
    # The agent under test is half of every result: a PR that changes only its prompts or
    # skills must run the evals too. Its code lives wherever the repository keeps it, so
    # workflows add that path themselves (docs/github-action.md#trigger-paths).
    "skills/**",
    "prompts/**",
    "**/SKILL.md",
    "AGENTS.md",
    "CLAUDE.md",
)
"""Suites, fixtures, assay's config, the eval workflow, and the usual homes of an agent's
prompts and skills."""

_SEPARATORS = re.compile(r"[\n,]")


def split_list(value: Any) -> tuple[str, ...]:
    """`a, b` or one item per line -> ("a", "b"); blanks dropped."""
    if isinstance(value, str):
        return tuple(item.strip() for item in _SEPARATORS.split(value) if item.strip())
    return tuple(value)


def raw_input(env: Mapping[str, str], name: str) -> str | None:
    """The value of input `name` (kebab-case) from the environment; None when unset or empty."""
    upper = name.upper()
    for variable in (f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}", _assay_variable(name)):
        value = env.get(variable)
        if value is not None and value.strip():
            return value
    return None


def _assay_variable(name: str) -> str:
    return "ASSAY_" + name.upper().replace("-", "_")


def input_location(workflow_file: Path | None, name: str) -> SourcePosition | None:
    """The line setting input `name` in the workflow file, if it can be found."""
    if workflow_file is None:
        return None
    try:
        lines = workflow_file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    pattern = re.compile(rf"^(\s*){re.escape(name)}\s*:")
    for number, line in enumerate(lines, start=1):
        match = pattern.match(line)
        if match:
            return SourcePosition(workflow_file, number, len(match.group(1)) + 1)
    return None
