"""Cassandra's results JSON (`--cassandra-report`): what `cmd/eval --output` writes.

A JSON list, one entry per rubric case result, in Cassandra's layout (core/eval/types.go,
checked against the files in menny/cassandra `core/eval/results/`):

    [{"case_id", "case_name",
      "subject_result": {"score", "rationale", "findings", "met_rubric"},
      "metrics": {"tokens": {"input", "output", "thinking", "cached", "total_input",
                             "total_output"},
                  "iterations", "tool_calls": {"total", "by_tool"}},
      "error"}]                       # only when the case failed to run (omitempty)

`subject_result` is the judge's verdict as Cassandra decodes it (the raw score, `findings`
null when the judge gave none); a case that errored has Go's zero values, as Cassandra
writes them. `metrics.tokens` are the subject's own (the judge's usage left out);
assay's report keeps no turn or per-tool counts, so `iterations` is 0 and
`tool_calls.by_tool` is empty.
"""

from __future__ import annotations

from typing import Any

from assay.core.files import CASSANDRA_FILE
from assay.report.model import CaseResult, Report

__all__ = ["CASSANDRA_FILE", "to_cassandra_results"]


def to_cassandra_results(report: Report, names: dict[str, str]) -> list[dict[str, Any]]:
    """The rubric cases of `report`; `names` maps case id to Cassandra's (id, name)."""
    return [_entry(case, names) for case in report.cases if case.kind == "rubric"]


def _entry(case: CaseResult, names: dict[str, str]) -> dict[str, Any]:
    local_id = case.id.removeprefix(f"{case.suite}/")
    entry: dict[str, Any] = {
        "case_id": local_id,
        "case_name": names.get(case.id, local_id),
    }
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
        entry["error"] = case.reason or case.status
    return entry


def _metrics(case: CaseResult | None) -> dict[str, Any]:
    tokens_in = tokens_out = 0
    by_tool: dict[str, int] | None = None
    if case is not None:
        attempts = max(len(case.attempts), 1)
        raw_usage = case.judge.get("usage")
        judge_usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        tokens_in = max(case.usage.input_tokens // attempts - judge_usage.get("input_tokens", 0), 0)
        tokens_out = max(
            case.usage.output_tokens // attempts - judge_usage.get("output_tokens", 0), 0
        )
        by_tool = {}
    return {
        "tokens": {
            "input": tokens_in,
            "output": tokens_out,
            "thinking": 0,
            "cached": 0,
            "total_input": tokens_in,
            "total_output": tokens_out,
        },
        "iterations": 0,
        "tool_calls": {"total": 0, "by_tool": by_tool},
    }
