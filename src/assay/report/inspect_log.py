"""A finished run as an inspect eval log: the JSON log format of inspect_ai (`version: 2`),
which `inspect_ai.log.read_eval_log` reads and `inspect view` shows.

Written from the report directory alone (report.json and each attempt's transcript under
`cases/`), so `assay export --inspect` turns any finished run into a log and `assay run
--inspect-log` writes the same file. The writer follows inspect's published log schema
(`inspect log schema`), not inspect's code: inspect_ai is not needed to write it.

One sample per case and attempt: the case is the sample, its attempts are the epochs.
Each sample has two scores, `status` (C for a passing attempt, I for a failing one) and
`score` (the attempt's score in [0, 1]), whose explanation is the attempt's reason; an
errored attempt is the sample's error instead. The log's results are those scores reduced
as inspect reduces epochs (the mean of a case's attempts), then averaged over the cases.
docs/inspect.md maps every field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from assay._util import json_text
from assay.core.files import ATTEMPT_PROMPT_FILE, artifacts_dir
from assay.core.paths import is_inside, real_path
from assay.core.usage import Usage, sum_usage
from assay.report.inspect_messages import Conversation, conversation_of, text_conversation
from assay.report.model import Attempt, CaseResult, Report

__all__ = [
    "INSPECT_LOG_VERSION",
    "MAX_TRANSCRIPT_CHARS",
    "inspect_log_chunks",
    "inspect_log_name",
    "sample_count",
]

INSPECT_LOG_VERSION: Final = 2
"""The version of inspect's log format this file is written in."""
MAX_TRANSCRIPT_CHARS: Final = 16 * 1024 * 1024
"""The most of one transcript read (the builtin agent's are bounded well below it)."""
MAX_ANSWER_CHARS: Final = 200_000
"""Another agent's output kept as its answer: its end, where the answer is."""
STATUS_SCORER: Final = "status"
SCORE_SCORER: Final = "score"
_NO_MODEL: Final = "none"
"""inspect's name for no model (a task run by a command agent calls none of assay's)."""


def sample_count(report: Report) -> int:
    """Samples the log holds: one per attempt, and one for a case with none (skipped)."""
    return sum(max(1, len(case.attempts)) for case in report.cases)


def inspect_log_name(report: Report) -> str:
    """The file name inspect gives a log (`<created>_<task>_<id>.json`): `inspect view`
    lists a `.json` log in a directory only under such a name."""
    created = _iso(report.run.started_at)[:19].replace(":", "-")
    task = "".join(c if c.isalnum() or c in "-." else "-" for c in _task_name(report))
    return f"{created}+00-00_{task}_{_task_id(report)}.json"


def inspect_log_chunks(report: Report, report_dir: Path | None) -> Iterator[str]:
    """The log's JSON text in pieces: its header, then each sample as it is read (a case's
    transcripts are read when its turn comes), then the end."""
    real_dir = real_path(report_dir) if report_dir is not None else None
    ids = _sample_ids(report.cases)
    usage_by_model: dict[str, list[Usage]] = {}
    for case in report.cases:
        for usage_model, usage in _case_usage(report, case):
            usage_by_model.setdefault(usage_model, []).append(usage)
    header: dict[str, Any] = {
        "version": INSPECT_LOG_VERSION,
        "status": "cancelled" if report.run.interrupted else "success",
        "eval": _eval_spec(report, ids),
        "plan": _plan(report),
        "results": _results(report),
        "stats": {
            "started_at": _iso(report.run.started_at),
            "completed_at": _iso(report.run.finished_at) if report.run.finished_at else "",
            "model_usage": {m: _model_usage(sum_usage(u)) for m, u in usage_by_model.items()},
            "role_usage": {},
            "connection_limit_history": [],
        },
        "invalidated": False,
        "tags": [],
        "metadata": {"assay": {"contract": report.contract, "summary": _summary(report)}},
    }
    head = json.dumps(header, ensure_ascii=False)
    yield head[:-1] + ', "samples": ['
    first = True
    for case, sample_id in zip(report.cases, ids, strict=True):
        for sample in _samples(report, case, sample_id, real_dir):
            yield ("" if first else ", ") + json.dumps(sample, ensure_ascii=False)
            first = False
    yield "]}\n"


# -- the header -----------------------------------------------------------------------------------


def _task_name(report: Report) -> str:
    """The run's one suite, else `assay`: inspect groups logs by task."""
    suites = {case.suite for case in report.cases}
    return suites.pop() if len(suites) == 1 else "assay"


def _task_id(report: Report) -> str:
    """inspect's task id is its run's, as long as its own ids (22 characters)."""
    return report.run.id[:22]


def _subject_model(report: Report) -> str:
    models = report.run.models
    return models[0] if len(models) == 1 else (_NO_MODEL if not models else "assay/matrix")


def _eval_spec(report: Report, ids: Sequence[str]) -> dict[str, Any]:
    run = report.run
    task = _task_name(report)
    spec: dict[str, Any] = {
        "eval_id": run.id,
        "run_id": run.id,
        "created": _iso(run.started_at),
        "task": task,
        "task_id": _task_id(report),
        "task_version": 0,
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        "dataset": {"name": task, "samples": len(ids), "sample_ids": list(ids)},
        "model": _subject_model(report),
        "model_generate_config": {},
        "model_args": {},
        "model_roles": None,
        "config": {"epochs": run.repeat, "epochs_reducer": ["mean"]},
        "packages": {"assay": run.assay_version},
        "metadata": {
            "models": run.models,
            "judge_model": run.judge_model,
            "threshold": run.threshold,
            "shard": run.shard,
            "gate_mode": run.gate_mode,
        },
        "scorers": [{"name": STATUS_SCORER}, {"name": SCORE_SCORER}],
    }
    if run.git_sha:
        spec["revision"] = {"type": "git", "origin": "", "commit": run.git_sha}
    return spec


def _plan(report: Report) -> dict[str, Any]:
    """One step per agent runtime the run used (the builtin agent, a command, a preset)."""
    runtimes = dict.fromkeys(case.runtime or "none" for case in report.cases)
    steps = [{"solver": r, "params": {}, "params_passed": {}} for r in runtimes]
    return {"name": "plan", "steps": steps, "config": {}}


def _results(report: Report) -> dict[str, Any]:
    """inspect's reduction: each case's attempts reduced to their mean, then the metrics
    over the cases scored."""
    statuses: list[float] = []
    scores: list[float] = []
    for case in report.cases:
        graded = [a for a in _attempts(case) if a.status in ("pass", "fail")]
        if graded:
            statuses.append(sum(a.status == "pass" for a in graded) / len(graded))
        scored = [a.score for a in _attempts(case) if a.score is not None]
        if scored:
            scores.append(sum(scored) / len(scored))
    completed = sum(
        1 for case in report.cases for a in _attempts(case) if a.status in ("pass", "fail")
    )
    summary = report.summary
    return {
        "total_samples": sample_count(report),
        "completed_samples": completed,
        "scores": [
            _eval_score(STATUS_SCORER, {"accuracy": statuses}, len(statuses)),
            _eval_score(
                SCORE_SCORER,
                {"mean": scores},
                len(scores),
                metadata={"assay_score": summary.score, "assay_score_ci": summary.score_ci},
            ),
        ],
        "metadata": {"gate": summary.gate, "gate_reason": summary.gate_reason},
    }


def _eval_score(
    name: str,
    values: dict[str, list[float]],
    scored: int,
    *,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for metric, numbers in values.items():
        if numbers:
            metrics[metric] = {"name": metric, "value": _mean(numbers), "params": {}}
            metrics["stderr"] = {"name": "stderr", "value": _stderr(numbers), "params": {}}
    return {
        "name": name,
        "scorer": name,
        "reducer": "mean",
        "scored_samples": scored,
        "params": {},
        "metrics": metrics,
        "metadata": metadata,
    }


def _summary(report: Report) -> dict[str, Any]:
    return report.summary.model_dump(mode="json")


# -- the samples ----------------------------------------------------------------------------------


def _attempts(case: CaseResult) -> list[Attempt]:
    """The case's attempts; a case that never ran one (skipped) is one, of the case."""
    if case.attempts:
        return list(case.attempts)
    return [
        Attempt(
            status=case.status,
            score=case.score,
            reason=case.reason,
            error_source=case.error_source,
            duration_s=case.duration_s,
            usage=case.usage,
            checks=case.checks,
        )
    ]


def _sample_ids(cases: Sequence[CaseResult]) -> list[str]:
    """The case id; with a model matrix, one case runs per model: the model is added."""
    counts: dict[str, int] = {}
    for case in cases:
        counts[case.id] = counts.get(case.id, 0) + 1
    return [
        f"{case.id} [{case.model}]" if counts[case.id] > 1 and case.model else case.id
        for case in cases
    ]


def _usage_model(report: Report, case: CaseResult) -> str:
    """Whose tokens an attempt's are: the subject's model, else the judge's (report.json
    keeps one total per attempt: the agent's and the judge's calls together)."""
    return case.model or report.run.judge_model or _NO_MODEL


def _case_usage(report: Report, case: CaseResult) -> Iterator[tuple[str, Usage]]:
    for attempt in _attempts(case):
        if _spent(attempt.usage):
            yield _usage_model(report, case), attempt.usage


def _spent(usage: Usage) -> bool:
    return bool(
        usage.input_tokens
        or usage.output_tokens
        or usage.cache_read_tokens
        or usage.cache_write_tokens
        or usage.cost_usd
    )


def _model_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "input_tokens_cache_read": usage.cache_read_tokens or None,
        "input_tokens_cache_write": usage.cache_write_tokens or None,
        "total_cost": usage.cost_usd,
    }


def _samples(
    report: Report, case: CaseResult, sample_id: str, real_dir: Path | None
) -> Iterator[dict[str, Any]]:
    for index, attempt in enumerate(_attempts(case)):
        conversation = _conversation(case, index, attempt, real_dir)
        yield _sample(report, case, sample_id, index, attempt, conversation)


def _sample(
    report: Report,
    case: CaseResult,
    sample_id: str,
    index: int,
    attempt: Attempt,
    conversation: Conversation,
) -> dict[str, Any]:
    model = case.model or _NO_MODEL
    usage = (
        {_usage_model(report, case): _model_usage(attempt.usage)} if _spent(attempt.usage) else {}
    )
    output_usage = _model_usage(attempt.usage) if _spent(attempt.usage) else None
    expected = [c.expected for c in attempt.checks if c.expected]
    sample: dict[str, Any] = {
        "id": sample_id,
        "epoch": index + 1,
        "uuid": _uuid(report.run.id, sample_id, index),
        "input": conversation.input or _described(case),
        "target": expected,
        "messages": conversation.messages,
        "output": {
            "model": model,
            "choices": [
                {"message": conversation.last_assistant, "stop_reason": conversation.stop_reason}
            ],
            "completion": conversation.completion,
            "usage": output_usage,
            "time": attempt.duration_s,
        },
        "scores": _scores(attempt),
        "metadata": _metadata(case, attempt),
        "store": {},
        "events": [],
        "model_usage": usage,
        "role_usage": {},
        "total_time": attempt.duration_s,
        "working_time": attempt.duration_s,
        "attachments": {},
    }
    if attempt.status == "error":
        sample["error"] = {"message": attempt.reason, "traceback": "", "traceback_ansi": ""}
    return sample


def _scores(attempt: Attempt) -> dict[str, Any] | None:
    """C/I and the numeric score, each explained by the attempt's reason; an errored or
    skipped attempt was not graded and has none."""
    if attempt.status not in ("pass", "fail"):
        return None
    explanation = attempt.reason or None
    scores: dict[str, Any] = {
        STATUS_SCORER: {
            "value": "C" if attempt.status == "pass" else "I",
            "explanation": explanation,
            "history": [],
        }
    }
    if attempt.score is not None:
        scores[SCORE_SCORER] = {"value": attempt.score, "explanation": explanation, "history": []}
    return scores


def _metadata(case: CaseResult, attempt: Attempt) -> dict[str, Any]:
    return {
        "case_id": case.id,
        "suite": case.suite,
        "kind": case.kind,
        "model": case.model,
        "runtime": case.runtime,
        "source": f"{case.source.path}:{case.source.line}",
        "status": attempt.status,
        "reason": attempt.reason,
        "error_source": attempt.error_source,
        "case_status": case.status,
        "case_score": case.score,
        "flaky": case.flaky,
        "quarantined": case.quarantined,
        "transcript": attempt.transcript,
        "checks": [
            {"id": c.id, "kind": c.kind, "status": c.status, "message": c.message}
            for c in attempt.checks
        ],
    }


def _described(case: CaseResult) -> str:
    """The sample's input when the attempt kept neither a conversation nor its prompt
    (an older run, an attempt that failed before its agent started): which case it was."""
    return f"assay {case.kind} case {case.id} ({case.source.path}:{case.source.line})"


def _conversation(
    case: CaseResult, index: int, attempt: Attempt, real_dir: Path | None
) -> Conversation:
    text = _artifact_text(real_dir, attempt.transcript)
    if text is not None:
        try:
            document = json_text.loads(text)
        except ValueError:
            document = None
        if isinstance(document, dict) and isinstance(document.get("messages"), list):
            return conversation_of(document, model=case.model)
    answer = text or ""
    if len(answer) > MAX_ANSWER_CHARS:
        answer = "[…cut]\n" + answer[-MAX_ANSWER_CHARS:]
    if not answer and case.findings:
        answer = json.dumps({"findings": case.findings}, ensure_ascii=False, indent=2)
    prompt = None
    if real_dir is not None:
        folder = artifacts_dir(Path(), case.id, case.model, index)
        prompt = _artifact_text(real_dir, (folder / ATTEMPT_PROMPT_FILE).as_posix())
    return text_conversation(prompt or _described(case), answer, model=case.model)


def _artifact_text(real_dir: Path | None, relative: str | None) -> str | None:
    """A file of the attempt's artifacts (its path relative to the report directory), when
    it is a file inside the report directory."""
    if not relative or real_dir is None:
        return None
    path = real_dir / relative
    if not path.is_file() or not is_inside(real_path(path), real_dir, resolved=True):
        return None
    with path.open(encoding="utf-8", errors="replace") as file:
        return file.read(MAX_TRANSCRIPT_CHARS)


# -- numbers and names ----------------------------------------------------------------------------


def _iso(stamp: str) -> str:
    """report.json's `...Z` as inspect writes times (`+00:00`)."""
    return stamp[:-1] + "+00:00" if stamp.endswith("Z") else stamp


def _uuid(run_id: str, sample_id: str, index: int) -> str:
    return hashlib.sha256(f"{run_id}\0{sample_id}\0{index}".encode()).hexdigest()[:22]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _stderr(values: Sequence[float]) -> float:
    """The standard error of the mean (sample standard deviation / sqrt(n)), as inspect's
    `stderr` metric reports it; 0 for fewer than two values."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = _mean(values)
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return float((variance / n) ** 0.5)
