"""Reading a rubric verdict the way Cassandra does: Go's `json.Unmarshal` into its struct.

Cassandra (core/eval/runner.go) decodes the judge's answer into
`EvaluationResult{Score int; Rationale string; Findings []string; MetRubric bool}` and
checks nothing more. So, exactly as there:

- keys match field names case-insensitively, by Go's folding (`go_json.go_fold`: `SCORE`,
  `Met_Rubric`, `ſcore`); every key that matches is decoded in turn, so of two spellings
  of one field the later wins; extra keys are ignored;
- a missing field keeps Go's zero value: `findings` null, `met_rubric` false,
  `rationale` "", `score` 0; `null` leaves a field as it was, except `findings`, which it
  empties (Go sets a slice to nil); a `null` answer is all zero values;
- the score is kept as given, even outside 1..5: Cassandra neither clamps nor refuses it
  (its schema's `minimum`/`maximum` only guide the model). assay keeps that raw score in
  the verdict and in `--cassandra-report`, and clamps it to 1..5 only for the case score;
- anything but an object is an error (a tool input that is a JSON string is a string,
  never read as JSON text: Go cannot unmarshal a string into the struct);
- a value of the wrong JSON type is an error, wherever it is among the keys: a float
  score (`4.5`, and `4.0` too, which Go will not put in an int), a string score, one
  past Go's 64-bit int, a non-boolean `met_rubric`, a `findings` that is not a list of
  strings (a `null` in it is `""`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.upstream.go.json import go_fold

__all__ = ["CassandraVerdict", "read_cassandra_verdict"]

_INT64 = range(-(2**63), 2**63)
_JSON_KINDS = {str: "string", list: "array", bool: "bool", int: "number", float: "number"}
"""Go's names of the JSON values that are no object, as its decoder's errors say them."""
_FIELDS = {go_fold(name): name for name in ("score", "rationale", "findings", "met_rubric")}


class CassandraVerdict(BaseModel):
    """Cassandra's `EvaluationResult`, as decoded (no range check on `score`)."""

    model_config = ConfigDict(frozen=True)
    score: int = 0
    rationale: str = ""
    findings: list[str] | None = None
    met_rubric: bool = False


def _decoded(name: str, value: Any) -> tuple[Any, str | None]:
    """`value` as Go stores it in field `name` (not None), or what Go refuses in it."""
    if name == "score":
        if isinstance(value, int) and not isinstance(value, bool) and value in _INT64:
            return value, None
        return None, f"score must be a whole number, got {value!r}"
    if name == "rationale":
        if isinstance(value, str):
            return value, None
        return None, f"rationale must be a string, got {value!r}"
    if name == "met_rubric":
        if isinstance(value, bool):
            return value, None
        return None, f"met_rubric must be true or false, got {value!r}"
    if isinstance(value, list):
        items = ["" if item is None else item for item in value]
        if all(isinstance(item, str) for item in items):
            return items, None
        return None, "findings must be a list of strings"
    return None, f"findings must be a list of strings, got {value!r}"


def read_cassandra_verdict(arguments: Any) -> tuple[CassandraVerdict | None, list[str]]:
    """The verdict and no problems, or None and what Go's decoder would have refused."""
    if arguments is None:
        return CassandraVerdict(), []
    if not isinstance(arguments, dict):
        kind = _JSON_KINDS.get(type(arguments), type(arguments).__name__)
        return None, [f"cannot unmarshal {kind} into the verdict: it must be a JSON object"]
    fields: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in arguments.items():
        name = _FIELDS.get(go_fold(key)) if isinstance(key, str) else None
        if name is None:
            continue
        if value is None:
            if name == "findings":
                fields.pop(name, None)
            continue
        decoded, problem = _decoded(name, value)
        if problem is not None:
            problems.append(problem)  # Go goes on decoding, then reports the first
        else:
            fields[name] = decoded
    if problems:
        return None, problems
    return CassandraVerdict(**fields), []
