"""Reading a rubric verdict the way Cassandra does: Go's `json.Unmarshal` into its struct.

Cassandra (core/eval/runner.go) decodes the judge's answer into
`EvaluationResult{Score int; Rationale string; Findings []string; MetRubric bool}` and
checks nothing more. So, exactly as there:

- keys match case-insensitively (an exact match first), extra keys are ignored;
- a missing or null field keeps Go's zero value: `findings` stays null, `met_rubric`
  false, `rationale` "", `score` 0;
- the score is kept as given, even outside 1..5: Cassandra neither clamps nor refuses it
  (its schema's `minimum`/`maximum` only guide the model). assay keeps that raw score in
  the verdict and in `--cassandra-report`, and clamps it to 1..5 only for the case score;
- a value of the wrong JSON type is an error: a float score (`4.5`, and `4.0` too, which
  Go will not put in an int), a string score, a non-boolean `met_rubric`, a `findings`
  that is not a list of strings.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["CassandraVerdict", "read_cassandra_verdict"]


class CassandraVerdict(BaseModel):
    """Cassandra's `EvaluationResult`, as decoded (no range check on `score`)."""

    model_config = ConfigDict(frozen=True)
    score: int = 0
    rationale: str = ""
    findings: list[str] | None = None
    met_rubric: bool = False


def _field(data: dict[str, Any], name: str) -> Any:
    if name in data:
        return data[name]
    # Go's encoding/json: without an exact match, the last case-insensitive match wins.
    matches = [key for key in data if key.lower() == name]
    return data[matches[-1]] if matches else None


def read_cassandra_verdict(arguments: Any) -> tuple[CassandraVerdict | None, list[str]]:
    """The verdict and no problems, or None and what Go's decoder would have refused."""
    if not isinstance(arguments, dict):
        return None, [f"the verdict must be a JSON object, not {type(arguments).__name__}"]
    problems: list[str] = []
    score = _field(arguments, "score")
    if score is None:
        score = 0
    elif isinstance(score, bool) or not isinstance(score, int):
        problems.append(f"score must be a whole number, got {score!r}")
    rationale = _field(arguments, "rationale")
    if rationale is None:
        rationale = ""
    elif not isinstance(rationale, str):
        problems.append(f"rationale must be a string, got {rationale!r}")
    findings = _field(arguments, "findings")
    if findings is not None:
        if not isinstance(findings, list):
            problems.append(f"findings must be a list of strings, got {findings!r}")
        else:
            # Go leaves a null element as "" in a []string.
            findings = ["" if item is None else item for item in findings]
            if not all(isinstance(item, str) for item in findings):
                problems.append("findings must be a list of strings")
    met = _field(arguments, "met_rubric")
    if met is None:
        met = False
    elif not isinstance(met, bool):
        problems.append(f"met_rubric must be true or false, got {met!r}")
    if problems:
        return None, problems
    return CassandraVerdict(score=score, rationale=rationale, findings=findings, met_rubric=met), []
