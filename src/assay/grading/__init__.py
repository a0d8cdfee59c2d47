"""Grading: LLM judges and deterministic checks."""

from assay.grading.base import Grade, Grader

__all__ = ["Grade", "Grader"]
