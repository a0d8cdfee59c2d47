"""The `{placeholder}` names an agent command template may use, and what else a command
agent is handed.

Suites and `--agent-command` are checked against them (typos get a did-you-mean) and the
command agent fills them, each argv element on its own, never through a shell; each is
also in its environment as `ASSAY_<NAME>`.
"""

from __future__ import annotations

from typing import Final

__all__ = ["AGENT_FILE_VARIABLES", "PLACEHOLDERS"]

PLACEHOLDERS: Final[tuple[str, ...]] = (
    "workspace",
    "prompt",
    "task_id",
    "case_id",
    "model",
    "diff_file",
)

AGENT_FILE_VARIABLES: Final[tuple[str, str, str]] = (
    "ASSAY_PROMPT_FILE",
    "ASSAY_FINDINGS_FILE",
    "ASSAY_CASE_KIND",
)
"""What a command agent gets beside the placeholders: the prompt's file, the answer's, and
the case's kind."""
