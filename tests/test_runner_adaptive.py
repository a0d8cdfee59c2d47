"""`--repeat auto`: the stopping rule (runner/adaptive.py) and the runner driving it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from assay.cli import main
from assay.runner.adaptive import CaseKnowledge, aggregate_bounds, max_looks, next_round
from tests.test_cli_run import load_report, project, run_args


def test_a_clear_result_stops_after_one_round() -> None:
    scores = {f"c{i}": [1.0] for i in range(40)}
    known = {c: CaseKnowledge(baseline_pass=True, baseline_attempts=3) for c in scores}
    assert next_round(scores, threshold=0.5, max_repeat=5, knowledge=known) == []


def test_a_straddling_result_gives_the_uncertain_cases_more() -> None:
    scores = {"stable": [1.0], "changed": [0.0], "flaky": [1.0, 0.0], "new": [1.0]}
    known = {
        "stable": CaseKnowledge(baseline_pass=True, baseline_attempts=3),
        "changed": CaseKnowledge(baseline_pass=True, baseline_attempts=3),
        "new": CaseKnowledge(known_flaky=True),
    }
    chosen = next_round(scores, threshold=0.6, max_repeat=5, knowledge=known)
    assert chosen == ["changed", "flaky", "new"]


def test_when_no_uncertain_case_is_left_every_case_below_k_gets_one() -> None:
    scores = {"a": [1.0, 0.0, 1.0], "b": [1.0], "c": [0.0]}
    chosen = next_round(scores, threshold=0.5, max_repeat=3, knowledge={})
    assert chosen == ["b", "c"]


def test_nothing_more_at_max_repeat() -> None:
    scores = {"a": [1.0, 0.0], "b": [0.0, 1.0]}
    assert next_round(scores, threshold=0.5, max_repeat=2, knowledge={}) == []


def test_unscored_cases_get_no_more() -> None:
    assert next_round({"a": []}, threshold=0.5, max_repeat=5, knowledge={}) == []


def test_bounds_are_look_corrected_and_narrow_with_attempts() -> None:
    cases = {f"c{i}": [1.0, 0.0] for i in range(10)}
    one = aggregate_bounds(cases, knowledge={}, max_repeat=1)
    five = aggregate_bounds(cases, knowledge={}, max_repeat=5)
    assert five[1] - five[0] > one[1] - one[0]  # more looks, each at a stricter level
    more = aggregate_bounds({c: [1.0, 0.0] * 5 for c in cases}, knowledge={}, max_repeat=5)
    assert more[1] - more[0] < five[1] - five[0]
    assert max_looks(5) == 9


def test_stopping_keeps_its_error_rate_under_optional_stopping() -> None:
    # A suite whose true score sits 0.05 above the threshold: stopping at the first
    # look that excludes the threshold must rarely stop on the wrong side.
    rng = random.Random(7)
    probabilities = [0.98] * 10 + [0.5] * 10
    threshold = sum(probabilities) / len(probabilities) - 0.05
    wrong = 0
    runs = 300
    for _ in range(runs):
        scores = {f"c{i}": [float(rng.random() < p)] for i, p in enumerate(probabilities)}
        while chosen := next_round(scores, threshold=threshold, max_repeat=5, knowledge={}):
            for case_id in chosen:
                scores[case_id].append(float(rng.random() < probabilities[int(case_id[1:])]))
        low, high = aggregate_bounds(scores, knowledge={}, max_repeat=5)
        if high < threshold:  # it stopped sure of the wrong answer
            wrong += 1
    assert wrong / runs < 0.05


def test_repeat_auto_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = [f"t{i}" for i in range(4)]
    root = project(tmp_path, {**{n: {} for n in names}, "flaky": {"alternate": True}})
    code = main(run_args(root, "--repeat", "auto", "--max-repeat", "3", "--threshold", "0.7"))
    capsys.readouterr()
    report = load_report(root / "report" / "report.json")
    assert report.run.repeat_auto and report.run.repeat == 3
    attempts = {c.id: len(c.attempts) for c in report.cases}
    # 4 of 5 passing against 0.7 straddles at first; the flaky case is what gets more.
    assert attempts["calc/flaky"] == 3
    assert sum(attempts.values()) < 3 * len(attempts)
    flaky = next(c for c in report.cases if c.id == "calc/flaky")
    assert flaky.flaky and flaky.score_ci is not None
    assert code in (0, 1) and report.summary.gate in ("pass", "fail")


def test_repeat_auto_from_the_environment_and_bad_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, {"a": {}})
    monkeypatch.setenv("ASSAY_REPEAT", "auto")
    assert main(run_args(root, "--threshold", "0.5")) == 0
    report = load_report(root / "report" / "report.json")
    # One case that passed once says little about 0.5: it gets more, never past 5.
    assert report.run.repeat_auto and 1 < len(report.cases[0].attempts) <= 5
    assert main(run_args(root, "--max-repeat", "0")) == 2
    assert "--max-repeat must be at least 1" in capsys.readouterr().err
    monkeypatch.delenv("ASSAY_REPEAT")
    with pytest.raises(SystemExit) as exc:
        main(run_args(root, "--repeat", "sometimes"))
    assert exc.value.code == 2
