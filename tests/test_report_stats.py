"""Combining repeats, intervals, the aggregate score and the gate."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from assay.report.gate.interval import confidence_interval
from assay.report.gate.stats import combine_attempts, summarize
from assay.report.model import Attempt, CaseResult, RunInfo, Source, Summary, Usage


def _attempt(status: str, score: float | None = None) -> Attempt:
    if score is None and status in ("pass", "fail"):
        score = 1.0 if status == "pass" else 0.0
    return Attempt.model_validate({"status": status, "score": score})


def _case(status: str, score: float | None = None, **fields: Any) -> CaseResult:
    if score is None and status in ("pass", "fail"):
        score = 1.0 if status == "pass" else 0.0
    return CaseResult.model_validate(
        {
            "id": fields.pop("id", f"s/{status}"),
            "suite": "s",
            "kind": "task",
            "source": Source(path="s.json", line=1),
            "status": status,
            "score": score,
            **fields,
        }
    )


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["pass", "pass"], ("pass", 1.0, False)),
        (["pass", "fail", "pass"], ("fail", 2 / 3, True)),
        (["fail", "fail"], ("fail", 0.0, False)),
        (["skipped", "skipped"], ("skipped", None, False)),
        ([], ("skipped", None, False)),
        (["error", "skipped"], ("error", None, False)),
        (["error", "pass"], ("pass", 1.0, False)),
        (["error", "fail", "skipped"], ("fail", 0.0, False)),
    ],
)
def test_combine_attempts(statuses: list[str], expected: tuple[str, float | None, bool]) -> None:
    status, score, flaky = combine_attempts([_attempt(s) for s in statuses])
    assert (status, flaky) == (expected[0], expected[2])
    assert score == pytest.approx(expected[1]) if expected[1] is not None else score is None


def test_combine_attempts_averages_graded_scores() -> None:
    status, score, flaky = combine_attempts([_attempt("pass", 0.75), _attempt("pass", 1.0)])
    assert (status, score, flaky) == ("pass", 0.875, False)


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),
        (10, 20, 0.2993, 0.7007),
        (0, 10, 0.0, 0.2775),  # all zero: a real upper end
        (1, 1, 0.2065, 1.0),
        (45, 50, 0.7864, 0.9565),
    ],
)
def test_wilson_interval_matches_known_values(
    successes: int, n: int, low: float, high: float
) -> None:
    interval = confidence_interval([1.0] * successes + [0.0] * (n - successes))
    assert interval is not None
    assert interval[0] == pytest.approx(low, abs=5e-4)
    assert interval[1] == pytest.approx(high, abs=5e-4)


def test_bootstrap_interval_is_deterministic_and_sensible() -> None:
    scores = [0.25, 0.5, 0.75, 1.0, 1.0, 0.5, 0.0, 0.75]
    first = confidence_interval(scores)
    assert first == confidence_interval(list(scores))
    assert first is not None
    mean = sum(scores) / len(scores)
    assert 0.0 <= first[0] < mean < first[1] <= 1.0
    assert confidence_interval([0.5]) == (0.5, 0.5)
    assert confidence_interval([0.0] * 7)[0] == 0.0  # type: ignore[index]  # exactly, not 2.8e-17
    low, _ = confidence_interval([1.0] + [0.0] * 3)  # type: ignore[misc]
    assert low == 0.0 or low > 1e-6
    assert confidence_interval([]) is None


def test_summary_counts_score_and_passing_gate() -> None:
    cases = [_case("pass", id="s/a"), _case("pass", id="s/b"), _case("fail", id="s/c")]
    cases += [_case("pass", id="s/d"), _case("skipped", id="s/e")]
    summary = summarize(cases, threshold=0.75, max_errors=0, duration_s=3.5)
    assert (summary.total, summary.passed, summary.failed, summary.errors, summary.skipped) == (
        5,
        3,
        1,
        0,
        1,
    )
    assert summary.score == 0.75  # skipped cases are not scored
    assert summary.gate == "pass"
    assert (
        summary.gate_reason
        == "score 0.75 >= threshold 0.75; 1 of 5 case(s) skipped (no reason given: 1)"
    )
    assert summary.score_ci is not None and len(summary.score_ci) == 2
    assert summary.duration_s == 3.5


@pytest.mark.parametrize(
    ("cases", "max_errors", "reason"),
    [
        ([("pass", 1.0), ("fail", 0.0), ("fail", 0.0)], 0, "score 0.33 < threshold 0.75"),
        (
            [("skipped", None), ("error", None)],
            5,
            "nothing was scored; 1 of 2 case(s) skipped (no reason given: 1)",
        ),
        ([("pass", 1.0), ("error", None), ("error", None)], 1, "errors 2 > max-errors 1"),
        (
            [("fail", 0.0), ("error", None)],
            0,
            "score 0.00 < threshold 0.75; errors 1 > max-errors 0",
        ),
        ([("pass", 0.749), ("pass", 0.749)], 0, "score 0.7490 < threshold 0.7500"),
    ],
)
def test_gate_failure_reasons(
    cases: list[tuple[str, float | None]], max_errors: int, reason: str
) -> None:
    results = [_case(s, score, id=f"s/{i}") for i, (s, score) in enumerate(cases)]
    summary = summarize(results, threshold=0.75, max_errors=max_errors, duration_s=0)
    assert (summary.gate, summary.gate_reason) == ("fail", reason)


def test_tokens_and_cost() -> None:
    priced = Usage(input_tokens=100, output_tokens=10, cost_usd=0.25)
    unpriced = Usage(input_tokens=5, output_tokens=1, cost_usd=None)
    cases = [_case("pass", id="s/a", usage=priced), _case("pass", id="s/b", usage=unpriced)]
    summary = summarize(cases, threshold=0.5, max_errors=0, duration_s=0)
    assert (summary.tokens.input, summary.tokens.output) == (105, 11)
    assert summary.cost_usd == 0.25
    only_unpriced = summarize([cases[1]], threshold=0.5, max_errors=0, duration_s=0)
    assert only_unpriced.cost_usd is None


# -- scores the gate cannot compare ------------------------------------------------------------


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 7.5, -0.5])
@pytest.mark.parametrize("model", [CaseResult, Attempt])
def test_report_models_refuse_a_score_outside_0_1(model: type[Any], bad: float) -> None:
    fields: dict[str, Any] = {"status": "pass", "score": bad}
    if model is CaseResult:
        fields |= {"id": "s/a", "suite": "s", "kind": "task", "source": {"path": "s", "line": 1}}
    with pytest.raises(ValidationError, match="score"):
        model.model_validate(fields)


def test_summary_and_run_refuse_numbers_the_gate_cannot_compare() -> None:
    summary = summarize([_case("pass")], threshold=0.75, max_errors=0, duration_s=0).model_dump()
    for field, bad in [("score", math.nan), ("score", 3.75), ("score_ci", [0.5, math.nan])]:
        with pytest.raises(ValidationError, match=field):
            Summary.model_validate({**summary, field: bad})
    run = {"id": "r", "started_at": "2025-01-01T00:00:00Z", "assay_version": "0"}
    with pytest.raises(ValidationError, match="threshold"):
        RunInfo.model_validate({**run, "threshold": math.nan})


@pytest.mark.parametrize("bad", [math.nan, 7.5])
def test_the_gate_fails_closed_on_a_score_that_slipped_past_validation(bad: float) -> None:
    # model_copy does not validate: the one way such a score can still reach summarize.
    cases = [_case("pass", id="s/a"), _case("pass", id="s/b").model_copy(update={"score": bad})]
    summary = summarize(cases, threshold=0.75, max_errors=0, duration_s=0)
    assert summary.gate == "fail"
    assert summary.gate_reason == f"score {(1.0 + bad) / 2} is not a number between 0 and 1"
    assert summary.score is None and summary.score_ci is None


def test_a_nan_threshold_fails_the_gate() -> None:
    summary = summarize([_case("pass")], threshold=math.nan, max_errors=0, duration_s=0)
    assert summary.gate == "fail"


def test_an_empty_shard_passes_with_a_note_but_an_empty_run_does_not() -> None:
    summary = summarize([], threshold=0.75, max_errors=0, duration_s=0, shard="3/3")
    assert summary.gate == "pass" and summary.score is None and summary.total == 0
    assert summary.gate_reason.startswith("shard 3/3 has no cases")
    assert summarize([], threshold=0.75, max_errors=0, duration_s=0).gate == "fail"
    # A shard whose cases were all skipped still scored nothing: that fails as before.
    skipped = summarize([_case("skipped")], threshold=0.75, max_errors=0, duration_s=0, shard="1/2")
    assert skipped.gate == "fail"
    assert skipped.gate_reason == "nothing was scored; 1 of 1 case(s) skipped (no reason given: 1)"
