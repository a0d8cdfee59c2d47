"""The gate: the two-level interval, errors as misses, modes, inconclusive, quarantine."""

from __future__ import annotations

from typing import Any

import pytest

from assay.report.gate.interval import clustered_interval
from assay.report.gate.policy import GatePolicy, straddles
from assay.report.gate.stats import summarize
from assay.report.model import Attempt, CaseResult, Source


def _attempts(*outcomes: int | str) -> list[Attempt]:
    """1 -> pass, 0 -> fail, "e" -> error."""
    return [
        Attempt(status="error", reason="boom")
        if o == "e"
        else Attempt(status="pass" if o else "fail", score=float(o))
        for o in outcomes
    ]


def _case(case_id: str, *outcomes: int | str, **fields: Any) -> CaseResult:
    attempts = _attempts(*outcomes)
    scored = [a for a in attempts if a.status != "error"]
    if scored:
        status = "pass" if all(a.status == "pass" for a in scored) else "fail"
        score: float | None = sum(a.score or 0.0 for a in scored) / len(scored)
    else:
        status, score = "error", None
    return CaseResult(
        id=case_id,
        suite="s",
        kind="task",
        source=Source(path="s.json", line=1),
        status=status,
        score=score,
        attempts=attempts,
        flaky=len({a.status for a in scored}) > 1,
        **fields,
    )


def _summary(cases: list[CaseResult], threshold: float = 0.5, **policy: Any) -> Any:
    return summarize(
        cases, threshold=threshold, max_errors=99, duration_s=0.0, policy=GatePolicy(**policy)
    )


# --- the interval ------------------------------------------------------------------------------


def test_one_case_at_half_over_five_repeats_has_a_real_interval() -> None:
    low, high = clustered_interval([[1, 0, 1, 0, 1]]) or (0, 0)
    assert low < 0.6 < high
    assert high - low > 0.5  # five coin flips say little


def test_interval_is_deterministic() -> None:
    cases = [[1, 0, 1], [0, 0, 1], [1, 1, 1], [0, 1, 0]]
    assert clustered_interval(cases) == clustered_interval(cases)


def test_attempt_variation_widens_the_interval_over_exact_case_means() -> None:
    # Ten cases at 0.6 each: as exact case means there is no spread at all between
    # cases; the attempts are what carry the doubt.
    cases = [[1, 0, 1, 0, 1]] * 10
    low, high = clustered_interval(cases) or (0, 0)
    assert low < 0.5 and high > 0.7


def test_all_failing_run_has_a_real_interval_from_exactly_zero() -> None:
    low, high = clustered_interval([[0, 0, 0], [0, 0]]) or (1, 1)
    assert low == 0.0 and 0.6 < high < 0.7  # two cases, Wilson over the cases
    low, high = clustered_interval([[0.0]]) or (1, 1)
    assert low == 0.0 and 0.75 < high < 0.8  # one case, one attempt: 0.00-0.79


def test_all_passing_repeats_keep_wilson_over_cases() -> None:
    low, high = clustered_interval([[1, 1, 1]]) or (0, 0)
    assert high == 1.0 and low < 0.25  # one case passing tells little about the next


def test_one_attempt_per_case_is_wilson_as_before() -> None:
    low, high = clustered_interval([[1], [0], [1], [1]]) or (0, 0)
    assert (round(low, 4), round(high, 4)) == (0.3006, 0.9544)


def test_one_case_one_attempt_is_wilson_not_a_point() -> None:
    low, high = clustered_interval([[1]]) or (0, 0)
    assert (round(low, 4), round(high, 4)) == (0.2065, 1.0)
    low, high = clustered_interval([[1], [0]]) or (0, 0)
    assert low < 0.1 and high > 0.9


def test_no_cases_no_interval() -> None:
    assert clustered_interval([]) is None


def test_summary_interval_uses_attempts() -> None:
    summary = _summary([_case("s/a", 1, 0, 1, 0, 1)])
    assert summary.score == pytest.approx(0.6)
    low, high = summary.score_ci
    assert low < 0.5 and high > 0.7
    assert summary.verdict == "inconclusive"


# --- errors ------------------------------------------------------------------------------------


def test_errors_are_reported_as_the_score_they_would_give_as_misses() -> None:
    cases = [_case("s/a", 1), _case("s/b", "e"), _case("s/c", 0), _case("s/d", 1, "e")]
    summary = _summary(cases)
    assert summary.score == pytest.approx(2 / 3)
    # a: 1, b: 0, c: 0, d: 1 of 2 attempts -> 0.5
    assert summary.score_if_errors_failed == pytest.approx(1.5 / 4)
    assert summary.gate == "pass"


def test_errors_count_as_fail_gates_on_that_score() -> None:
    cases = [_case("s/a", 1), _case("s/b", "e"), _case("s/c", 1)]
    summary = _summary(cases, threshold=0.75, errors_count_as="fail")
    assert summary.score == 1.0
    assert summary.gate == "fail"
    assert "score 0.67 < threshold 0.75" in summary.gate_reason


def test_no_errors_no_score_if_errors_failed() -> None:
    assert _summary([_case("s/a", 1)]).score_if_errors_failed is None


def test_the_summary_never_compares_cases_field_by_field(monkeypatch: pytest.MonkeyPatch) -> None:
    """A list's `in` over pydantic models compares them field by field: asked per case, it
    made a 5000-case run with an error spend 35 s summarising (1000 cases: 1.9 s)."""

    def compared(self: CaseResult, other: object) -> bool:
        raise AssertionError("summarize compared two CaseResults")

    cases = [_case(f"s/{n}", "e") if n % 3 == 0 else _case(f"s/{n}", 1, 0) for n in range(30)]
    monkeypatch.setattr(CaseResult, "__eq__", compared)
    summary = _summary(cases)
    assert (summary.errors, summary.score) == (10, 0.5)
    assert summary.score_if_errors_failed == pytest.approx(20 * 0.5 / 30)


# --- inconclusive ------------------------------------------------------------------------------


def test_straddles() -> None:
    assert straddles([0.4, 0.6], 0.5)
    assert not straddles([0.5, 0.6], 0.5)
    assert not straddles([0.2, 0.4], 0.5)
    assert not straddles(None, 0.5)


@pytest.mark.parametrize(
    ("policy", "gate"),
    [("score", "pass"), ("fail", "fail"), ("pass", "pass"), ("neutral", "pass")],
)
def test_inconclusive_above_threshold(policy: str, gate: str) -> None:
    cases = [_case("s/a", 1, 1, 0), _case("s/b", 1, 0, 1)]
    summary = _summary(cases, inconclusive=policy)
    assert summary.verdict == "inconclusive"
    assert summary.gate == gate


@pytest.mark.parametrize(
    ("policy", "gate"),
    [("score", "fail"), ("fail", "fail"), ("pass", "pass"), ("neutral", "pass")],
)
def test_inconclusive_below_threshold(policy: str, gate: str) -> None:
    cases = [_case("s/a", 0, 0, 1), _case("s/b", 1, 0, 0)]
    summary = _summary(cases, inconclusive=policy)
    assert summary.verdict == "inconclusive"
    assert summary.gate == gate


def test_clear_results_are_not_inconclusive() -> None:
    passing = [_case(f"s/{i}", 1, 1, 1) for i in range(20)]
    assert _summary(passing).verdict == "pass"
    failing = [_case(f"s/{i}", 0, 0, 0) for i in range(20)]
    assert _summary(failing, inconclusive="pass").verdict == "fail"
    assert _summary(failing, inconclusive="pass").gate == "fail"


def test_other_problems_are_never_made_inconclusive() -> None:
    cases = [_case("s/a", 1, 1, 0), _case("s/b", "e")]
    summary = summarize(
        cases,
        threshold=0.5,
        max_errors=0,
        duration_s=0.0,
        policy=GatePolicy(inconclusive="pass"),
    )
    assert summary.gate == "fail" and summary.verdict == "fail"


# --- regression mode ---------------------------------------------------------------------------


def _ids(n: int, *outcomes: int) -> list[CaseResult]:
    return [_case(f"s/{i}", *outcomes) for i in range(n)]


def test_regression_fails_when_significantly_worse_than_the_baseline() -> None:
    base = _ids(12, 1)
    head = _ids(12, 0)
    summary = _summary(head, mode="regression", baseline=tuple(base))
    assert summary.gate_mode == "regression"
    assert summary.gate == "fail"
    assert summary.regression is not None and "significantly worse" in summary.regression


def test_regression_passes_an_unchanged_head_whatever_the_threshold() -> None:
    base = _ids(12, 1, 0)
    summary = _summary(_ids(12, 1, 0), threshold=0.9, mode="regression", baseline=tuple(base))
    assert summary.gate == "pass"
    assert summary.regression is not None and "no significant change" in summary.regression


def test_regression_floor() -> None:
    cases = _ids(20, 0)
    summary = _summary(cases, mode="regression", baseline=tuple(cases), floor=0.3)
    assert summary.gate == "fail"
    assert "score 0.00 < floor 0.30" in summary.gate_reason


def test_regression_pairs_only_cases_in_both() -> None:
    base = _ids(3, 1)
    head = [_case("s/new", 0), *_ids(3, 1)]
    summary = _summary(head, mode="regression", baseline=tuple(base))
    assert summary.gate == "pass"


# --- quarantine --------------------------------------------------------------------------------


def test_quarantined_cases_run_and_report_but_do_not_gate() -> None:
    cases = [_case("s/a", 1), _case("s/b", 1), _case("s/flaky", 0, 1, 0)]
    summary = _summary(cases, threshold=0.9, quarantine=frozenset({"s/flaky"}))
    assert summary.total == 3 and summary.failed == 1
    assert summary.quarantined == 1
    assert summary.score == 1.0
    assert summary.gate == "pass"
    assert "1 quarantined case(s) not gated" in summary.gate_reason


def test_a_case_marked_quarantined_stays_out_of_the_gate() -> None:
    cases = [_case("s/a", 1), _case("s/b", "e", quarantined=True)]
    summary = summarize(cases, threshold=0.9, max_errors=0, duration_s=0.0)
    assert summary.gate == "pass"


def test_summary_markdown_carries_the_verdict_errors_and_selection() -> None:
    from assay.report.markdown import render_summary
    from assay.report.model import Report, RunInfo

    cases = [_case("s/a", 1, 0, 1, score_ci=[0.21, 0.94]), _case("s/b", "e")]
    report = Report(
        run=RunInfo(
            id="r",
            started_at="now",
            assay_version="0",
            threshold=0.5,
            selection="affected by main: 2 of 9 case(s) (fixture changed: 2)",
        ),
        summary=summarize(cases, threshold=0.5, max_errors=1, duration_s=0.0),
        cases=cases,
    )
    text = render_summary(report)
    assert "score if errors failed 0.33" in text
    assert "selected: affected by main: 2 of 9 case(s)" in text
    assert "verdict inconclusive" in text
    assert "✅ ❌ ✅ (95% interval 0.21–0.94)" in text
