"""What report.html shows, as one JSON-ready document: the report, explained, plus the
diffs and transcripts of the attempts read from `cases/` (each capped, and the whole
bounded, so a large run still opens at once), and the comparison with a baseline when
there is one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util import json_text
from assay.core.files import ATTEMPT_DIFF_FILE, MODEL_CALLS_FILE, artifacts_dir
from assay.core.paths import is_inside, real_path
from assay.report.explain import explain_check, finding_marks, reason_with_source
from assay.report.gate.significance import explain
from assay.report.model import CaseResult, Report
from assay.report.model_calls import model_calls_view

if TYPE_CHECKING:
    from assay.report.compare import Comparison

__all__ = [
    "MAX_ARTIFACT_CHARS",
    "MAX_TOTAL_ARTIFACT_CHARS",
    "ArtifactBudget",
    "EncodedJSON",
    "viewer_cases",
    "viewer_data",
    "viewer_head",
    "viewer_tail",
]

MAX_ARTIFACT_CHARS = 100_000
"""One diff or transcript embedded is cut to this (the artifact itself stays whole)."""
MAX_TOTAL_ARTIFACT_CHARS = 8_000_000
"""Past this, diffs and transcripts are left out (the page says so): report.html must open."""


class ArtifactBudget:
    """What is left of MAX_TOTAL_ARTIFACT_CHARS, and how many artifacts it left out."""

    def __init__(self, chars: int = MAX_TOTAL_ARTIFACT_CHARS) -> None:
        self.left = chars
        self.dropped = 0

    def take(self, text: str) -> str | None:
        text = text if len(text) <= MAX_ARTIFACT_CHARS else text[:MAX_ARTIFACT_CHARS] + "\n[…cut]"
        if len(text) > self.left:
            self.dropped += 1
            return None
        self.left -= len(text)
        return text


def viewer_data(
    report: Report,
    report_dir: Path | None,
    *,
    history: list[dict[str, Any]] | None = None,
    comparison: Comparison | None = None,
) -> dict[str, Any]:
    """The whole document at once (report.html writes it in parts: `viewer_head`, each
    of `viewer_cases`, `viewer_tail`, which together are this, key for key)."""
    budget = ArtifactBudget()
    cases = list(viewer_cases(report, report_dir, budget))
    return {
        **viewer_head(report),
        "cases": cases,
        **viewer_tail(budget, history=history, comparison=comparison),
    }


def viewer_head(report: Report) -> dict[str, Any]:
    """The keys before the cases: the run and its summary."""
    return {
        "run": report.run.model_dump(mode="json"),
        "summary": report.summary.model_dump(mode="json"),
    }


def viewer_cases(
    report: Report, report_dir: Path | None, budget: ArtifactBudget
) -> Iterator[dict[str, Any]]:
    """Each case as the page shows it, its artifacts read from `report_dir` as it comes."""
    real_dir = real_path(report_dir) if report_dir is not None else None  # once, not per file
    for case in report.cases:
        yield _case(case, real_dir, budget)


def viewer_tail(
    budget: ArtifactBudget,
    *,
    history: list[dict[str, Any]] | None = None,
    comparison: Comparison | None = None,
) -> dict[str, Any]:
    """The keys after the cases (once they are all read: what the budget left out)."""
    return {
        "history": history or [],
        "comparison": _comparison(comparison) if comparison is not None else None,
        "artifacts_dropped": budget.dropped,
    }


def _comparison(comparison: Comparison) -> dict[str, Any]:
    """The baseline comparison: the totals, the significance in words, and per case the
    base and head status side by side (every case of either report)."""
    return {
        "base": {
            "run_id": comparison.base.run_id,
            "git_sha": comparison.base.git_sha,
            "score": comparison.base.summary.score,
        },
        "head": {"run_id": comparison.head.run_id, "score": comparison.head.summary.score},
        "score_delta": comparison.delta.score,
        "paired_delta": comparison.delta.paired_score,
        "verdict": comparison.significance.verdict,
        "explanation": explain(comparison.significance),
        "counts": dict(comparison.counts),
        "changes": [
            {
                "id": c.id,
                "model": c.model or "",
                "change": c.change,
                "base_status": c.base_status,
                "head_status": c.head_status,
                "base_score": c.base_score,
                "head_score": c.head_score,
                "score_delta": c.score_delta,
            }
            for c in comparison.changes
        ],
    }


def _check(check: Any) -> dict[str, Any]:
    explained = explain_check(check)
    extra = check.model_extra or {}
    return {
        "id": check.id,
        "kind": check.kind,
        "status": check.status,
        "expected": explained.expected,
        "finding": explained.finding,
        "reason": explained.reason,
        "reason_label": explained.reason_label,
        "output": explained.output_tail,
        "exit_code": extra.get("exitCode"),
    }


def _case(case: CaseResult, report_dir: Path | None, budget: ArtifactBudget) -> dict[str, Any]:
    marks = {mark.index: mark.mark for mark in finding_marks(case)}
    findings = []
    for index, finding in enumerate(case.findings):
        location = finding.get("location") if isinstance(finding.get("location"), dict) else {}
        findings.append(
            {
                "title": str(finding.get("title", "")),
                "severity": str(finding.get("severity", "")),
                "description": str(finding.get("description", "")),
                "path": location.get("path") if location else None,
                "line": location.get("startLine") if location else None,
                "mark": marks.get(index, "unmatched"),
            }
        )
    attempts = []
    diff = None
    for index, attempt in enumerate(case.attempts):
        folder = artifacts_dir(report_dir, case.id, case.model, index) if report_dir else None
        if diff is None and folder is not None and report_dir is not None:
            diff = _read(folder / ATTEMPT_DIFF_FILE, report_dir, budget)
        transcript = None
        if attempt.transcript and report_dir is not None:
            transcript = _read(report_dir / attempt.transcript, report_dir, budget)
        attempts.append(
            {
                "status": attempt.status,
                "score": attempt.score,
                "reason": attempt.reason,
                "duration_s": attempt.duration_s,
                "checks": [_check(c) for c in attempt.checks],
                "transcript": _transcript(transcript),
                "model_calls": model_calls_view(
                    _read(folder / MODEL_CALLS_FILE, report_dir, budget)
                    if folder is not None and report_dir is not None
                    else None
                ),
            }
        )
    verdict = case.judge.get("verdict") if isinstance(case.judge, dict) else None
    return {
        "id": case.id,
        "suite": case.suite,
        "kind": case.kind,
        "model": case.model or "",
        "status": case.status,
        "score": case.score,
        "reason": reason_with_source(case),
        "flaky": case.flaky,
        "source": f"{case.source.path}:{case.source.line}",
        "duration_s": case.duration_s,
        "usage": case.usage.model_dump(mode="json"),
        "checks": [_check(c) for c in case.checks],
        "findings": findings,
        "judge": {
            "model": case.judge.get("model") if isinstance(case.judge, dict) else None,
            "rationale": verdict.get("rationale") if isinstance(verdict, dict) else None,
        },
        "attempts": attempts,
        "diff": diff,
    }


def _read(path: Path, real_dir: Path, budget: ArtifactBudget) -> str | None:
    """An artifact's text, when it is a file inside the report directory (`real_dir`, its
    symlinks resolved)."""
    if not path.is_file() or not is_inside(real_path(path), real_dir, resolved=True):
        return None
    # No more than is embedded: an agent's stdout may be its whole 64 MiB capture.
    with path.open(encoding="utf-8", errors="replace") as file:
        return budget.take(file.read(MAX_ARTIFACT_CHARS + 1))


def _transcript(text: str | None) -> dict[str, Any] | None:
    """A builtin agent's transcript as its messages; any other artifact as its text.

    A command agent's stdout is a transcript too, and the agent chooses what it prints:
    only a well-formed conversation is shown as one.
    """
    if text is None:
        return None
    try:
        document = json_text.loads(text)
    except ValueError:
        return {"text": text}
    if _is_conversation(document):
        # Kept encoded: a run's parsed transcripts, all held until the page is written,
        # cost several times their text (20 MiB at 1000 review cases).
        shown: dict[str, Any] = {
            "messages": EncodedJSON(document["messages"]),
            "error": document.get("error"),
        }
        activity = _activity(document)
        if activity is not None:
            shown["activity"] = activity
        return shown
    return {"text": text}


def _activity(document: dict[str, Any]) -> dict[str, Any] | None:
    """A command agent's or preset CLI's summary line (`agents/cli_transcript.py`): its
    runtime, turns, tool calls and tokens, each kept only when it has the type it should."""
    result = document.get("result")
    activity = result.get("activity") if isinstance(result, dict) else None
    if not isinstance(activity, dict):
        return None
    usage = activity.get("usage")
    usage = usage if isinstance(usage, dict) else {}

    def count(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return {
        "runtime": str(activity.get("runtime", ""))[:100],
        "turns": count(activity.get("turns")),
        "tool_calls": count(activity.get("tool_calls")),
        "input_tokens": count(usage.get("input_tokens")),
        "output_tokens": count(usage.get("output_tokens")),
    }


def _is_conversation(document: Any) -> bool:
    """`{"messages": [...], "error": ...}` as the builtin agent writes it: each message an
    object with a string `role` and, as `content`, a string or a list of objects with a
    string `type`; `error` a string or absent."""
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        return False
    error = document.get("error")
    return (error is None or isinstance(error, str)) and all(
        _is_message(message) for message in document["messages"]
    )


def _is_message(message: Any) -> bool:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return False
    content = message.get("content")
    return isinstance(content, str) or (
        isinstance(content, list)
        and all(isinstance(part, dict) and isinstance(part.get("type"), str) for part in content)
    )


class EncodedJSON:
    """A value held as its compact JSON text; `report.html.embed_json` writes it as it is."""

    __slots__ = ("text",)

    def __init__(self, value: Any) -> None:
        self.text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
