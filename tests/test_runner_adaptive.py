"""`--repeat auto`: the stopping rule (runner/adaptive.py) and the runner driving it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from assay.cli import main
from assay.runner.adaptive import (
    CaseKnowledge,
    aggregate_bounds,
    max_looks,
    next_round,
    reversal_chance,
)
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


@pytest.mark.slow
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


def test_a_run_that_more_attempts_cannot_reverse_stops_while_the_interval_straddles() -> None:
    # 12 cases the baseline saw pass, passing again, 4 flaky ones at K: the bound still
    # straddles 0.66, but finishing the 12 to K cannot plausibly pull 0.72 under it.
    scores = {f"s{i}": [1.0] for i in range(12)}
    scores |= {f"f{i}": [1.0, 0.0, 1.0, 0.0, 1.0] for i in range(4)}
    scores |= {f"z{i}": [0.0] for i in range(4)}
    known = {c: CaseKnowledge(baseline_pass=True, baseline_attempts=3) for c in scores}
    known |= {f"z{i}": CaseKnowledge(baseline_pass=False, baseline_attempts=3) for i in range(4)}
    known |= {f"f{i}": CaseKnowledge(known_flaky=True) for i in range(4)}
    low, high = aggregate_bounds(scores, knowledge=known, max_repeat=5)
    assert low < 0.66 <= high
    chance = reversal_chance(scores, threshold=0.66, knowledge=known, max_repeat=5)
    assert chance < 0.01
    assert next_round(scores, threshold=0.66, max_repeat=5, knowledge=known) == []


def test_the_reversal_chance_is_high_near_the_threshold_and_for_what_is_unknown() -> None:
    close = {f"c{i}": [1.0, 0.0] for i in range(10)}
    assert reversal_chance(close, threshold=0.5, knowledge={}, max_repeat=5) > 0.2
    # One attempt each and nothing known: a case that passed once may well be flaky.
    fresh = {f"c{i}": [1.0] for i in range(7)} | {f"d{i}": [0.0] for i in range(3)}
    assert reversal_chance(fresh, threshold=0.6, knowledge={}, max_repeat=5) > 0.01
    assert sorted(next_round(fresh, threshold=0.6, max_repeat=5, knowledge={})) == sorted(fresh)
    # Every case at K: nothing can change.
    done = {f"c{i}": [1.0, 0.0, 1.0] for i in range(4)}
    assert reversal_chance(done, threshold=0.6, knowledge={}, max_repeat=3) == 0.0


def test_one_round_below_the_threshold_does_not_stop_a_suite_of_flaky_cases() -> None:
    # The probe: 20 cases right 4 times in 5, threshold 0.75, and a first round of 14/20.
    # Each failed case's own prior put it at 0.25, so finishing to K looked hopeless (0.9%)
    # and the run failed; `--repeat 5` from those attempts passes about 4 times in 5.
    # Learnt from the suite, a case that failed once may well be a 0.8 case.
    first = {f"c{i:02d}": [float(i < 14)] for i in range(20)}
    assert reversal_chance(first, threshold=0.75, knowledge={}, max_repeat=5) > 0.1
    assert next_round(first, threshold=0.75, max_repeat=5, knowledge={}) == sorted(first)


def test_a_quarantined_case_decides_nothing_but_is_watched() -> None:
    passing = {f"c{i}": [1.0, 1.0, 1.0] for i in range(10)}
    quarantined = {f"q{i}": [0.0] for i in range(4)}
    known = {q: CaseKnowledge(known_flaky=True, quarantined=True) for q in quarantined}
    # The gate's score leaves the quarantined cases out: 1.0, sure above 0.8 (with them
    # counted it would be 0.71, and the run would go on for them).
    assert next_round(passing | quarantined, threshold=0.8, max_repeat=5, knowledge=known) == []
    # While the decision is open, they get their attempt beside the cases that decide it.
    first = {c: [1.0] for c in passing}
    chosen = next_round(first | quarantined, threshold=0.8, max_repeat=5, knowledge=known)
    assert chosen == sorted(first) + sorted(quarantined)


def test_what_auto_knows_counts_the_baselines_passes_and_marks_the_quarantined() -> None:
    from types import SimpleNamespace
    from typing import Any

    from assay.report.model import Attempt
    from assay.runner.adaptive_inputs import case_key, knowledge_of
    from tests.test_merge import make_case, make_report

    flaky = make_case("calc/a", attempts=3, flaky=True).model_copy(
        update={
            "attempts": [
                Attempt(status=s, score=float(s == "pass"), duration_s=1.0)
                for s in ("pass", "fail", "pass")
            ]
        }
    )
    baseline = make_report([flaky, make_case("calc/b", "fail", line=2, attempts=3)])
    settings: Any = SimpleNamespace(quarantine=["calc/b"])
    known = knowledge_of(settings, [("calc/a", None), ("calc/b", None)], baseline=baseline)
    a, b = known[case_key("calc/a", None)], known[case_key("calc/b", None)]
    assert a.known_flaky and not a.quarantined and a.baseline_counts() == (2.0, 1.0)
    assert b.quarantined and b.known_flaky and b.baseline_counts() == (0.0, 3.0)


def test_a_case_with_two_agreeing_attempts_joins_the_pool_and_is_no_longer_open() -> None:
    scores = {f"c{i}": [1.0, 1.0] for i in range(6)} | {"x": [1.0], "y": [1.0, 0.0]}
    chosen = next_round(scores, threshold=0.8, max_repeat=5, knowledge={})
    assert chosen == ["x", "y"]


@pytest.mark.slow
def test_stopping_early_agrees_with_what_repeat_k_would_decide() -> None:
    # Stochastic curtailment: the run's decision is the one finishing every case to K
    # would give (from the same first attempts) in all but a few runs.
    rng = random.Random(11)
    probabilities = [0.98] * 12 + [0.02] * 4 + [0.5] * 4
    threshold = 0.65
    disagree = 0
    runs = 300
    for _ in range(runs):
        draws = {
            f"c{i}": [float(rng.random() < p) for _ in range(5)]
            for i, p in enumerate(probabilities)
        }
        scores = {c: d[:1] for c, d in draws.items()}
        while chosen := next_round(scores, threshold=threshold, max_repeat=5, knowledge={}):
            for case_id in chosen:
                scores[case_id].append(draws[case_id][len(scores[case_id])])

        def failed(run: dict[str, list[float]]) -> bool:
            return sum(sum(s) / len(s) for s in run.values()) / len(run) < threshold

        disagree += failed(scores) != failed(draws)
    assert disagree / runs < 0.05


@pytest.mark.slow
def test_repeat_auto_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = [f"t{i}" for i in range(4)]
    root = project(tmp_path, {**{n: {} for n in names}, "flaky": {"alternate": True}})
    code = main(run_args(root, "--repeat", "auto", "--max-repeat", "3", "--threshold", "0.8"))
    capsys.readouterr()
    report = load_report(root / "report" / "report.json")
    assert report.run.repeat_auto and report.run.repeat == 3
    attempts = {c.id: len(c.attempts) for c in report.cases}
    # Five cases against 0.8 stay uncertain: the flaky case gets more first, and once no
    # case is open the others do too (every case is looked at in every round).
    assert attempts["calc/flaky"] == 3
    assert all(1 < count <= 3 for count in attempts.values())  # none closed unlooked-at
    flaky = next(c for c in report.cases if c.id == "calc/flaky")
    assert flaky.flaky and flaky.score_ci is not None
    assert code in (0, 1) and report.summary.gate in ("pass", "fail")
    # Far from the threshold the first round is enough for all of them.
    main(run_args(root, "--repeat", "auto", "--max-repeat", "3", "--threshold", "0.1"))
    capsys.readouterr()
    clear = load_report(root / "report" / "report.json")
    assert sum(len(c.attempts) for c in clear.cases) < 3 * len(clear.cases)


@pytest.mark.slow
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
    assert "--max-repeat must be between 1 and 1000" in capsys.readouterr().err
    monkeypatch.delenv("ASSAY_REPEAT")
    with pytest.raises(SystemExit) as exc:
        main(run_args(root, "--repeat", "sometimes"))
    assert exc.value.code == 2


def test_the_limit_auto_stops_against_is_the_one_the_gate_decides_on() -> None:
    from types import SimpleNamespace
    from typing import Any

    from assay.runner.adaptive_inputs import gate_limit
    from tests.test_merge import make_case, make_report

    baseline = make_report([make_case("calc/a"), make_case("calc/b", "fail", line=2)])
    assert baseline.summary.score == 0.5

    def limit(gate: str, floor: float | None, base: Any) -> float:
        settings: Any = SimpleNamespace(gate=gate, floor=floor, threshold=0.8)
        return gate_limit(settings, baseline=base)

    assert limit("threshold", None, baseline) == 0.8
    assert limit("regression", 0.3, baseline) == 0.3  # the floor
    assert limit("regression", None, baseline) == 0.5  # judged against the baseline
    assert limit("regression", None, None) == 0.8
