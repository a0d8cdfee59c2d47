"""The judges' typed verdicts: what the judge model must return through its tool call.

The findings verdict has Warden's shape (one entry per assertion, indexed); the rubric
verdict is Cassandra's `EvaluationResultSchema`. Shape is checked by jsonschema and these
models; the `*_problems` functions add what a schema cannot say (array lengths, indexes
in range, each assertion answered once).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay._util.json_schema import tool_input_schema

__all__ = [
    "FindingsVerdict",
    "RubricVerdict",
    "ShouldFindVerdict",
    "ShouldNotFindVerdict",
    "bounded_findings_schema",
    "findings_verdict_problems",
]


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShouldFindVerdict(_Verdict):
    index: int = Field(ge=0)
    """The should_find assertion's index, as numbered in the prompt."""
    met: bool
    """True when one of the agent's findings reports this issue."""
    matchedFindingIndex: int | None = Field(default=None, ge=0)  # noqa: N815 - Warden's wire name
    """Index of the agent's finding that reports it; null when not met."""
    reasoning: str
    """One or two sentences: which finding matches and why, or why none does."""


class ShouldNotFindVerdict(_Verdict):
    index: int = Field(ge=0)
    """The should_not_find assertion's index, as numbered in the prompt."""
    violated: bool
    """True when one of the agent's findings reports this as an issue."""
    violatingFindingIndex: int | None = Field(default=None, ge=0)  # noqa: N815
    """Index of the agent's finding that reports it; null when not violated."""
    reasoning: str
    """One or two sentences explaining the decision."""


class FindingsVerdict(_Verdict):
    """Record the verdict on every assertion: one entry per should_find and per should_not_find."""

    should_find: list[ShouldFindVerdict]
    """Exactly one entry per should_find assertion, in index order."""
    should_not_find: list[ShouldNotFindVerdict]
    """Exactly one entry per should_not_find assertion, in index order (empty when none)."""


class RubricVerdict(_Verdict):
    """Record the evaluation of the review against the rubric."""

    score: int = Field(ge=1, le=5)
    """A score from 1 to 5, where 5 is an excellent, accurate, and helpful review, and 1 is a
    poor or misleading review."""
    rationale: str
    """A detailed explanation of why this score was given, referencing the rubric and the diff."""
    findings: list[str]
    """Specific strengths or weaknesses identified in the review."""
    met_rubric: bool
    """Whether the review successfully addressed the primary requirements of the rubric."""


def findings_verdict_problems(
    verdict: FindingsVerdict, *, should_find: int, should_not_find: int, findings: int
) -> list[str]:
    """What makes `verdict` unusable for a case with these counts; empty when it is sound."""
    problems: list[str] = []
    for key, entries, expected in (
        ("should_find", verdict.should_find, should_find),
        ("should_not_find", verdict.should_not_find, should_not_find),
    ):
        indexes = sorted(entry.index for entry in entries)
        if len(entries) != expected:
            problems.append(f"{key} has {len(entries)} entries; expected exactly {expected}")
        elif indexes != list(range(expected)):
            problems.append(f"{key} indexes are {indexes}; expected each of 0..{expected - 1} once")
    for entry in verdict.should_find:
        problems += _finding_reference(
            f"should_find[{entry.index}]", entry.met, entry.matchedFindingIndex, findings, "met"
        )
    for bad in verdict.should_not_find:
        problems += _finding_reference(
            f"should_not_find[{bad.index}]",
            bad.violated,
            bad.violatingFindingIndex,
            findings,
            "violated",
        )
    return problems


def _finding_reference(
    where: str, claimed: bool, index: int | None, findings: int, flag: str
) -> list[str]:
    """An index a claim (`met`/`violated`) names must exist; it is checked in code after.

    A null index is Warden's answer too (`met: true` for "no findings expected" matches no
    finding): it passes unless a severity is required, which then cannot be checked.
    """
    if not claimed or index is None:
        return []
    field = "matchedFindingIndex" if flag == "met" else "violatingFindingIndex"
    if index >= findings:
        valid = f"0..{findings - 1}" if findings else "none: the agent reported no findings"
        return [f"{where}.{field} is {index}, out of range (valid: {valid})"]
    return []


@functools.lru_cache(maxsize=256)
def bounded_findings_schema(
    *, should_find: int, should_not_find: int, findings: int
) -> dict[str, Any]:
    """FindingsVerdict's tool schema narrowed to one case's counts.

    Each array holds exactly one entry per assertion, each `index` lies within its
    assertions, and a finding index within the agent's findings (null only when there are
    none), so a judge that follows the schema cannot answer out of range. Cached by the
    three counts, which few cases differ in; the shared static schema is copied, not changed.
    """
    schema = copy.deepcopy(tool_input_schema(FindingsVerdict))
    for key, count, finding_field in (
        ("should_find", should_find, "matchedFindingIndex"),
        ("should_not_find", should_not_find, "violatingFindingIndex"),
    ):
        array = schema["properties"][key]
        array["minItems"] = array["maxItems"] = count
        entry = array["items"]["properties"]
        entry["index"]["maximum"] = max(count - 1, 0)
        reference = entry[finding_field]
        if findings:
            for option in reference["anyOf"]:
                if option.get("type") == "integer":
                    option["maximum"] = findings - 1
        else:
            reference.pop("anyOf")
            reference["type"] = "null"
    return schema
