"""The `{placeholder}` names an agent command template may use.

Suites and `--agent-command` are checked against them (typos get a did-you-mean) and the
command agent fills them, each argv element on its own, never through a shell.
"""

from __future__ import annotations

from typing import Final

__all__ = ["PLACEHOLDERS"]

PLACEHOLDERS: Final[tuple[str, ...]] = (
    "workspace",
    "prompt",
    "task_id",
    "case_id",
    "model",
    "diff_file",
)
