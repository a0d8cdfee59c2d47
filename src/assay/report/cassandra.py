"""Cassandra's results JSON (`--cassandra-report`): what `cmd/eval --output` writes.

A JSON list, one entry per rubric case result, in Cassandra's layout (core/eval/types.go,
checked against the files in menny/cassandra `core/eval/results/`):

    [{"case_id", "case_name",
      "subject_result": {"score", "rationale", "findings", "met_rubric"},
      "metrics": {"tokens": {"input", "output", "thinking", "cached", "total_input",
                             "total_output"},
                  "iterations", "tool_calls": {"total", "by_tool"}},
      "error"}]                       # only when the case failed to run (omitempty)

`case_id` and `case_name` are what Cassandra's loader reads (`RubricSpec.cassandra_id`,
`cassandra_name`): a manifest case without `id` has `""`, a case without `name` `""`
(`assay merge`, which has no cases, writes assay's own ids). `subject_result` is the
judge's verdict as Cassandra decodes it (the raw score, `findings` null when the judge
gave none); a case that errored has Go's zero values, as Cassandra writes them, and an
`error` that says where it failed in Cassandra's words: `failed to create sandbox: ...`
(a rubric sandbox's own message), `judge failed: ...` (the judge's call or its answer, or
the timeout while judging), `subject failed: ...` (the agent under test). `metrics.tokens`
are the subject's own (the judge's usage left out), counted as Cassandra counts them
(`_metrics`); assay's report keeps no turn, per-tool or thinking counts, so `iterations`
and `thinking` are 0 and `tool_calls.by_tool` is empty. The file is encoded as Go's
encoder writes it (`cassandra_json`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from assay.core.files import CASSANDRA_FILE
from assay.report.model import CaseResult, Report
from assay.suites.case import Case, RubricSpec
from assay.upstream.go.fmt import go_json_indent
from assay.workspace.rubric import SANDBOX_FAILURE

__all__ = ["CASSANDRA_FILE", "cassandra_json", "cassandra_names", "to_cassandra_results"]


def cassandra_names(cases: Iterable[Case]) -> dict[str, tuple[str, str]]:
    """Each rubric case's Cassandra (`case_id`, `case_name`), by assay case id."""
    names: dict[str, tuple[str, str]] = {}
    for case in cases:
        spec = case.spec
        if isinstance(spec, RubricSpec):
            case_id = case.local_id if spec.cassandra_id is None else spec.cassandra_id
            names[case.id] = (
                case_id,
                case.name if spec.cassandra_name is None else spec.cassandra_name,
            )
    return names


def to_cassandra_results(
    report: Report, names: Mapping[str, tuple[str, str]]
) -> list[dict[str, Any]]:
    """The rubric cases of `report`; `names` is `cassandra_names` of the run's cases."""
    return [_entry(case, names) for case in report.cases if case.kind == "rubric"]


def _entry(case: CaseResult, names: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    local_id = case.id.removeprefix(f"{case.suite}/")
    case_id, case_name = names.get(case.id, (local_id, local_id))
    entry: dict[str, Any] = {"case_id": case_id, "case_name": case_name}
    verdict = case.judge.get("verdict") if case.status in ("pass", "fail") else None
    if isinstance(verdict, dict):
        entry["subject_result"] = {
            "score": verdict.get("score", 0),
            "rationale": verdict.get("rationale", ""),
            "findings": verdict.get("findings"),
            "met_rubric": bool(verdict.get("met_rubric", False)),
        }
        entry["metrics"] = _metrics(case)
    else:
        entry["subject_result"] = {
            "score": 0,
            "rationale": "",
            "findings": None,
            "met_rubric": False,
        }
        entry["metrics"] = _metrics(None)
        entry["error"] = _error(case)
    return entry


def _error(case: CaseResult) -> str:
    """The case's reason, prefixed as Cassandra's runner says where a case failed."""
    reason = case.reason or case.status
    if case.status != "error" or reason.startswith((SANDBOX_FAILURE, "internal error")):
        return reason  # a skip, a sandbox (already in Cassandra's words), a bug in assay
    if "error" in case.judge or reason.endswith(" in judge"):  # its answer, its call, its time
        return f"judge failed: {reason}"
    return f"subject failed: {reason}"


def _metrics(case: CaseResult | None) -> dict[str, Any]:
    """`core.SessionMetrics` of the subject: its usage per attempt (the mean when a case ran
    several), the judge's left out. Cassandra's Anthropic provider counts prompt tokens as
    the uncached input plus what was written to the cache, and the cache reads apart:
    `input` = input + cache writes, `cached` = cache reads, `total_input` = their sum."""
    tokens_in = tokens_out = cached = 0
    by_tool: dict[str, int] | None = None
    if case is not None:
        attempts = max(len(case.attempts), 1)
        raw_usage = case.judge.get("usage")
        judge: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}

        def subject(field: str) -> int:
            return max(getattr(case.usage, field) // attempts - int(judge.get(field) or 0), 0)

        tokens_in = subject("input_tokens") + subject("cache_write_tokens")
        tokens_out = subject("output_tokens")
        cached = subject("cache_read_tokens")
        by_tool = {}
    return {
        "tokens": {
            "input": tokens_in,
            "output": tokens_out,
            "thinking": 0,
            "cached": cached,
            "total_input": tokens_in + cached,
            "total_output": tokens_out,
        },
        "iterations": 0,
        "tool_calls": {"total": 0, "by_tool": by_tool},
    }


def cassandra_json(entries: list[dict[str, Any]]) -> str:
    """`entries` as `cmd/eval` writes its results file: Go's `json.MarshalIndent(results,
    "", "  ")`, no newline at the end."""
    return go_json_indent(entries)
