"""Whose call failed when an attempt is an `error`: the one rule, by exception and phase.

A reason such as "connection refused" or "timeout after 60s" does not say whether the
agent under test, the judge model, the grading or assay itself failed; `error_source` in
the attempt and the case says so. The reason texts stay as they are (PVYai's and
Cassandra's words are compared as they are).
"""

from __future__ import annotations

from assay.core.statuses import ErrorSource
from assay.errors import AgentError, AssayError, JudgeError, ModelError, SandboxError

__all__ = ["error_source"]


def error_source(exc: BaseException, *, phase: str, plugin_runtime: bool = False) -> ErrorSource:
    """The source of `exc`, raised while the attempt was in `phase` (`sandbox`, `agent`, or
    the kind's grading phase: `judge`, `checks`, `grading`).

    `plugin_runtime`: the agent is a plugin's, so what it raises is the agent's failure,
    not a bug of assay's.
    """
    if isinstance(exc, SandboxError):
        return "sandbox"
    if isinstance(exc, AgentError):
        return "agent"
    if isinstance(exc, JudgeError):
        return "judge"
    in_phase = _by_phase(phase)
    if isinstance(exc, ModelError):  # the model of whoever called it
        return "agent" if phase == "agent" else "judge"
    if isinstance(exc, Exception) and not _assay_knew(exc):
        # a bug: in a plugin's agent it is the agent's, anywhere else assay's own
        return "agent" if phase == "agent" and plugin_runtime else "harness"
    return in_phase


def _by_phase(phase: str) -> ErrorSource:
    if phase in ("sandbox", "agent", "judge"):
        return phase  # type: ignore[return-value]
    return "grader"  # a task's checks, a verify verdict, a user grader


def _assay_knew(exc: BaseException) -> bool:

    return isinstance(exc, AssayError)
