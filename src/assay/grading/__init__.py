"""Grading: LLM judges and deterministic checks.

Each case kind has one grader; its module is imported only when a case of that kind
runs (the judges pull in the model layer, the task checks do not).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from assay.grading.base import Grade, Grader

if TYPE_CHECKING:
    from assay.options import RunOptions
    from assay.suites.case import Case

__all__ = ["Grade", "Grader", "grader_for"]

_GRADERS = {
    "task": ("assay.grading.task_checks", "TaskGrader"),
    "verify": ("assay.grading.verify_grader", "VerdictGrader"),
    "review": ("assay.grading.findings_judge", "FindingsJudge"),
    "rubric": ("assay.grading.rubric_judge", "RubricJudge"),
}


def grader_for(case: Case, *, options: RunOptions) -> Grader:
    """The grader of `case`'s kind: task checks, verdict match, findings or rubric judge."""
    module_name, class_name = _GRADERS[case.kind]
    grader: Grader = getattr(importlib.import_module(module_name), class_name)(options=options)
    return grader
