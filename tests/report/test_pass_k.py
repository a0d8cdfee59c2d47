"""pass@1, pass@k, pass^k over repeats and `--min-pass`: the estimators against hand-computed
values, the fold of attempts, the interval under the rule, and `assay run --repeat 5
--min-pass N` end to end with a command agent whose attempts pass by a script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main
from assay.report.gate.interval import clustered_interval, confidence_interval
from assay.report.gate.pass_k import PassCounts, pass_at_k, pass_hat_k, pass_rates
from assay.report.gate.policy import GatePolicy
from assay.report.gate.stats import summarize
from assay.report.model import Attempt, CaseResult
from assay.runner.combine import fold_attempts
from assay.runner.outcome import AttemptOutcome
from assay.suites.case import Case, VerifySpec
from tests.cli.test_run import load_report, project, run_args


def test_the_estimators_match_hand_computed_values() -> None:
    # n=5, c=3, k=2: C(2,2)/C(5,2) = 1/10 -> pass@2 = 0.9; pass^2 = C(3,2)/C(5,2) = 3/10.
    assert pass_at_k(5, 3, 2) == pytest.approx(0.9)
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)
    # k = n: any attempt passed / every attempt passed.
    assert (pass_at_k(5, 3, 5), pass_hat_k(5, 3, 5)) == (1.0, 0.0)
    assert (pass_at_k(5, 0, 5), pass_hat_k(5, 5, 5)) == (0.0, 1.0)
    # k = 1 is the pass rate: 3/5 either way.
    assert pass_at_k(5, 3, 1) == pytest.approx(0.6) == pass_hat_k(5, 3, 1)
    # n=10, c=4, k=3: pass@3 = 1 - C(6,3)/C(10,3) = 1 - 20/120; pass^3 = C(4,3)/120 = 4/120.
    assert pass_at_k(10, 4, 3) == pytest.approx(5 / 6)
    assert pass_hat_k(10, 4, 3) == pytest.approx(1 / 30)
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(2, 1, 3)


def test_the_run_rates_are_means_over_cases_leaving_out_cases_below_k() -> None:
    cases = [PassCounts(3, 5), PassCounts(5, 5), PassCounts(1, 2), PassCounts(0, 0)]
    rates = pass_rates(cases, 5)
    # pass@1 over every case with a scored attempt: (0.6 + 1 + 0.5) / 3.
    assert rates.pass_at_1 == pytest.approx(0.7)
    # pass@5 and pass^5 over the two cases with 5 attempts: (1 + 1) / 2, (0 + 1) / 2.
    assert (rates.pass_at_k, rates.pass_hat_k) == (1.0, 0.5)
    assert pass_rates([PassCounts(1, 2)], 5).pass_at_k is None


def _case(statuses: list[str], *, min_pass: int | None = None) -> CaseResult:
    spec = VerifySpec(given="", files=(), candidate={}, expect_verdict="keep")
    case = Case(
        id="s/a",
        suite="s",
        name="a",
        kind="verify",
        format="assay",
        source_path=Path("s.yaml"),
        source_line=1,
        spec=spec,
    )
    outcomes = [
        AttemptOutcome(Attempt(status=s, reason=f"attempt {n} {s}"))  # type: ignore[arg-type]
        for n, s in enumerate(statuses, 1)
    ]
    return fold_attempts(case, model=None, runtime=None, outcomes=outcomes, min_pass=min_pass)


def test_the_fold_counts_attempts_and_applies_min_pass() -> None:
    three_of_five = ["pass", "pass", "pass", "fail", "fail"]
    plain = _case(three_of_five)
    assert (plain.status, plain.score, plain.flaky) == ("fail", 0.6, True)
    assert (plain.attempts_passed, plain.attempts_total) == (3, 5)

    strict = _case(three_of_five, min_pass=4)
    assert (strict.status, strict.score) == ("fail", 0.0)
    assert strict.reason == "3 of 5 attempts passed, --min-pass 4: attempt 5 fail"
    lenient = _case(three_of_five, min_pass=3)
    assert (lenient.status, lenient.score, lenient.reason) == ("pass", 1.0, "attempt 3 pass")
    assert lenient.flaky  # the attempts still disagree

    # An errored attempt is not a pass, and not a scored attempt either.
    errored = _case(["pass", "pass", "pass", "error", "fail"], min_pass=4)
    assert (errored.status, errored.attempts_passed, errored.attempts_total) == ("fail", 3, 4)
    # A case with nothing scored stays what it was.
    assert _case(["error", "error"], min_pass=1).status == "error"


def test_one_attempt_leaves_the_counts_out_of_the_report() -> None:
    single = _case(["pass"])
    assert single.attempts_passed is None
    dumped = json.loads(single.model_dump_json())
    assert "attempts_passed" not in dumped and "attempts_total" not in dumped
    assert json.loads(_case(["pass", "fail"]).model_dump_json())["attempts_total"] == 2


def test_the_interval_follows_the_rule_in_use() -> None:
    a = _case(["pass", "pass", "pass", "fail", "fail"])
    b = _case(["pass"] * 5)
    plain = summarize([a, b], threshold=0.5, max_errors=0, duration_s=0.0, pass_k=5)
    # Without the rule: the two-level bootstrap over the attempts of the two cases.
    expected = clustered_interval([[1.0, 1.0, 1.0, 0.0, 0.0], [1.0] * 5])
    assert plain.score == pytest.approx(0.8)
    assert plain.score_ci == pytest.approx(list(expected or ()))
    assert (plain.k, plain.pass_at_1, plain.pass_at_k, plain.pass_hat_k) == (5, 0.8, 1.0, 0.5)

    a4 = _case(["pass", "pass", "pass", "fail", "fail"], min_pass=4)
    b4 = _case(["pass"] * 5, min_pass=4)
    policy = GatePolicy(min_pass=4)
    ruled = summarize(
        [a4, b4], threshold=0.75, max_errors=0, duration_s=0.0, pass_k=5, policy=policy
    )
    # Under --min-pass each case is one Bernoulli outcome: Wilson over the 2 cases, 1 passed.
    assert ruled.score == 0.5 and ruled.gate == "fail"
    assert ruled.score_ci == pytest.approx(list(confidence_interval([0.0, 1.0]) or ()))
    # pass@k and pass^k still come from the attempts, whatever the rule.
    assert (ruled.pass_at_1, ruled.pass_hat_k) == (0.8, 0.5)

    unrepeated = summarize([_case(["pass"])], threshold=0.5, max_errors=0, duration_s=0.0)
    assert unrepeated.k is None
    assert not {"k", "pass_at_1", "pass_at_k", "pass_hat_k"} & set(
        json.loads(unrepeated.model_dump_json())
    )


def _clear_counters(root: Path) -> None:
    for counter in root.glob("count-*"):
        counter.unlink()


@pytest.mark.slow
def test_repeat_5_with_min_pass_reports_pass_hat_k_and_gates_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Case a passes its first 3 attempts and fails the other 2; case b passes all 5.
    root = project(tmp_path, {"a": {"solve_first": 3}, "b": {}})
    strict = ("--repeat", "5", "--min-pass", "4", "--threshold", "0.75")
    assert main(run_args(root, *strict)) == 1
    out = capsys.readouterr().out
    report = load_report(root / "report" / "report.json")
    a, b = sorted(report.cases, key=lambda c: c.id)
    assert (a.status, a.attempts_passed, a.attempts_total) == ("fail", 3, 5)
    assert (b.status, b.attempts_passed, b.attempts_total) == ("pass", 5, 5)
    summary = report.summary
    assert report.run.min_pass == 4 and summary.k == 5
    assert (summary.pass_at_1, summary.pass_at_k, summary.pass_hat_k) == (0.8, 1.0, 0.5)
    assert summary.score == 0.5 and summary.gate == "fail"
    assert summary.score_ci == pytest.approx(list(confidence_interval([0.0, 1.0]) or ()))
    assert "repeats: pass@1 0.80 · pass@5 1.00 · pass^5 0.50 · min-pass 4 of 5" in out
    assert "3/5 passed" in out
    # summary.md keeps `@1` from reading as a mention with a zero-width joiner.
    md = (root / "report" / "summary.md").read_text().replace("\u200d", "")
    assert "pass@1 0.80 · pass@5 1.00 · pass^5 0.50 · min-pass 4 of 5" in md
    assert (
        'id="pass-k">pass@1 0.80 · pass@5 1.00 · pass^5 0.50'
        in (root / "report" / "report.html").read_text()
    )

    _clear_counters(root)
    assert main(run_args(root, "--repeat", "5", "--min-pass", "3", "--threshold", "0.75")) == 0
    capsys.readouterr()
    report = load_report(root / "report" / "report.json")
    assert {c.id: c.status for c in report.cases} == {"calc/a": "pass", "calc/b": "pass"}
    assert report.summary.score == 1.0 and report.summary.pass_hat_k == 0.5

    # Without the rule the same attempts give the mean: a scores 0.6, the run 0.8.
    _clear_counters(root)
    assert main(run_args(root, "--repeat", "5", "--threshold", "0.75")) == 0
    capsys.readouterr()
    report = load_report(root / "report" / "report.json")
    assert report.summary.score == pytest.approx(0.8) and report.run.min_pass is None
    assert "min_pass" not in json.loads((root / "report" / "report.json").read_text())["run"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--repeat", "3", "--min-pass", "4"), "--min-pass must be between 1 and --repeat (3)"),
        (("--min-pass", "2"), "--min-pass must be between 1 and --repeat (1), got 2"),
        (("--repeat", "3", "--min-pass", "0"), "got 0"),
        (("--repeat", "auto", "--min-pass", "2"), "--min-pass needs a fixed --repeat K"),
    ],
)
def test_a_min_pass_the_repeats_cannot_reach_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], message: str
) -> None:
    root = project(tmp_path, {"a": {}})
    assert main(run_args(root, *extra)) == 2
    assert message in capsys.readouterr().err


def test_min_pass_comes_from_the_environment_and_the_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, {"a": {"solve_first": 3}})
    (root / "assay.toml").write_text("min_pass = 3\n")
    assert main(run_args(root, "--repeat", "5", "--threshold", "1")) == 0
    assert load_report(root / "report" / "report.json").run.min_pass == 3
    _clear_counters(root)
    monkeypatch.setenv("ASSAY_MIN_PASS", "4")
    assert main(run_args(root, "--repeat", "5", "--threshold", "1")) == 1
    capsys.readouterr()
    assert load_report(root / "report" / "report.json").run.min_pass == 4
    # Without --repeat the configured rule cannot be met: exit 2, saying where it came from.
    assert main(run_args(root)) == 2
    message = "--min-pass (from ASSAY_MIN_PASS) must be between 1 and --repeat (1), got 4"
    assert message in capsys.readouterr().err


def test_the_action_input_min_pass_reaches_the_run_like_repeat(tmp_path: Path) -> None:
    from assay._cli.ci import _run_args
    from assay._cli.run import build_options
    from assay.action.environment import RunnerEnvironment
    from assay.action.inputs import read_inputs
    from assay.errors import ConfigErrors

    inputs = read_inputs({"INPUT_REPEAT": "5", "INPUT_MIN_PASS": " 4 "})
    assert (inputs.repeat, inputs.min_pass) == (5, 4)
    environ = {"GITHUB_EVENT_NAME": "push", "RUNNER_TEMP": str(tmp_path)}
    options = build_options(_run_args(inputs, RunnerEnvironment.from_environ(environ)))
    assert (options.repeat, options.min_pass) == (5, 4)
    assert read_inputs({"INPUT_MIN_PASS": ""}).min_pass is None
    with pytest.raises(ConfigErrors, match="min-pass"):
        read_inputs({"INPUT_MIN_PASS": "0"})


def test_resume_runs_a_case_again_when_min_pass_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its result was folded under the old rule: reusing it would gate on the wrong outcome.
    root = project(tmp_path, {"a": {}})
    resume = ("--resume", str(root / "report"), "--repeat", "2")
    assert main(run_args(root, "--repeat", "2")) == 0
    assert main(run_args(root, *resume)) == 0
    assert "runs again" not in capsys.readouterr().err  # nothing changed: reused
    assert main(run_args(root, *resume, "--min-pass", "1")) == 0
    assert "calc/a: the case or the settings that shape it changed" in capsys.readouterr().err
    assert load_report(root / "report" / "report.json").run.min_pass == 1


def test_merged_shards_keep_the_rule_and_give_the_same_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"a": {"solve_first": 3}, "b": {}})
    rule = ("--repeat", "5", "--min-pass", "4", "--threshold", "0.75")
    for index in (1, 2):
        shard = ("--shard", f"{index}/2")
        main(run_args(root, *rule, *shard, report=f"shard-{index}"))
    merged = root / "merged.json"
    args = ["merge", str(root / "shard-1"), str(root / "shard-2"), "-o", str(merged)]
    assert main(args) == 1
    assert "repeats: pass@1 0.80 · pass@5 1.00 · pass^5 0.50 · min-pass 4 of 5" in (
        capsys.readouterr().out
    )
    report = load_report(merged)
    assert report.run.min_pass == 4 and report.summary.score == 0.5
    assert report.summary.score_ci == pytest.approx(list(confidence_interval([0.0, 1.0]) or ()))

    # The rule is read from each report: a min_pass edited after the run contradicts the
    # status its attempts were combined to, and the merge refuses it.
    shard_1 = root / "shard-1" / "report.json"
    raw = json.loads(shard_1.read_text())
    raw["run"]["min_pass"] = 3
    shard_1.write_text(json.dumps(raw))
    assert main(args) == 2
    assert "calc/a: it is fail but its attempts make it pass" in capsys.readouterr().err
