"""Subjects: the agents under test (command runtime, builtin reviewer/verifier)."""

from assay.agents.base import Agent, AgentOutput, AttemptContext

__all__ = ["Agent", "AgentOutput", "AttemptContext"]
