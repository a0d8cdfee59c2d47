"""`assay compare`: per-case changes, McNemar and bootstrap tests, text, JSON and Markdown."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from assay._util.docstrings import DocumentedJsonSchema
from assay.cli import main
from assay.report.compare import CHANGE_ORDER, Comparison, compare_reports
from assay.report.compare_markdown import render_comparison
from assay.report.gate.significance import mcnemar_exact_p, paired_bootstrap
from assay.report.model import Attempt, CaseResult, Report
from tests.test_merge import make_case, make_report, write, write_tampered


def attempts_case(case_id: str, outcomes: str, **fields: Any) -> CaseResult:
    """A case with one attempt per letter of `outcomes` (p = pass, f = fail), combined."""
    attempts = [
        Attempt(status="pass" if o == "p" else "fail", score=float(o == "p")) for o in outcomes
    ]
    score = sum(a.score or 0.0 for a in attempts) / len(attempts)
    status = "pass" if set(outcomes) == {"p"} else "fail"
    case = make_case(case_id, status, score=score, **fields)
    return case.model_copy(update={"attempts": attempts, "flaky": len(set(outcomes)) > 1})


def flips(worse: int, better: int, same: int = 0) -> tuple[Report, Report]:
    """Base and head where `worse` cases go pass -> fail and `better` go fail -> pass."""
    base, head = [], []
    for n in range(worse):
        base.append(make_case(f"s/worse{n:03}"))
        head.append(make_case(f"s/worse{n:03}", "fail"))
    for n in range(better):
        base.append(make_case(f"s/better{n:03}", "fail"))
        head.append(make_case(f"s/better{n:03}"))
    for n in range(same):
        base.append(make_case(f"s/same{n:03}"))
        head.append(make_case(f"s/same{n:03}"))
    return make_report(base), make_report(head)


# -- per-case changes ------------------------------------------------------------------------


def test_every_kind_of_change_is_labelled_and_newly_failing_comes_first() -> None:
    transitions = {
        "still-passing": ("pass", "pass"),
        "newly-failing": ("pass", "fail"),
        "pass-to-error": ("pass", "error"),
        "newly-passing": ("fail", "pass"),
        "error-to-pass": ("error", "pass"),
        "still-failing": ("fail", "fail"),
        "still-error": ("error", "error"),
        "now-error": ("fail", "error"),
        "no-longer-error": ("error", "fail"),
        "now-skipped": ("pass", "skipped"),
        "no-longer-skipped": ("skipped", "fail"),
        "still-skipped": ("skipped", "skipped"),
    }
    base = [make_case(f"s/{name}", b) for name, (b, _) in transitions.items()]
    base.append(make_case("s/removed"))
    head = [
        make_case(f"s/{name}", h, reason=f"{name} reason") for name, (_, h) in transitions.items()
    ]
    head.append(make_case("s/added", "fail"))
    comparison = compare_reports(make_report(base), make_report(head))

    change = {c.id.removeprefix("s/"): c.change for c in comparison.changes}
    assert change == {
        "still-passing": "still_passing",
        "newly-failing": "newly_failing",
        "pass-to-error": "newly_failing",
        "newly-passing": "newly_passing",
        "error-to-pass": "newly_passing",
        "still-failing": "still_failing",
        "still-error": "still_failing",
        "now-error": "now_error",
        "no-longer-error": "no_longer_error",
        "now-skipped": "now_skipped",
        "no-longer-skipped": "no_longer_skipped",
        "still-skipped": "still_skipped",
        "added": "added",
        "removed": "removed",
    }
    assert [c.change for c in comparison.changes] == sorted(
        (c.change for c in comparison.changes), key=CHANGE_ORDER.index
    )
    assert [c.id for c in comparison.changes[:2]] == ["s/newly-failing", "s/pass-to-error"]
    assert comparison.counts["newly_failing"] == 2 and "still_passing" in comparison.counts
    added = comparison.of("added")[0]
    assert (added.base_status, added.head_status, added.head_score) == (None, "fail", 0.0)
    removed = comparison.of("removed")[0]
    assert (removed.base_status, removed.head_status, removed.score_delta) == ("pass", None, None)
    assert comparison.changes[0].reason == "newly-failing reason"


def test_score_deltas_pair_cases_by_id_and_model() -> None:
    base = make_report(
        [attempts_case("s/a", "ppp", model="m1"), attempts_case("s/a", "ppf", model="m2")]
    )
    head = make_report(
        [attempts_case("s/a", "pff", model="m1"), attempts_case("s/a", "ppp", model="m2")]
    )
    comparison = compare_reports(base, head)
    deltas = {(c.id, c.model): c.score_delta for c in comparison.changes}
    assert deltas[("s/a", "m1")] == pytest.approx(-2 / 3)
    assert deltas[("s/a", "m2")] == pytest.approx(1 / 3)
    assert comparison.delta.paired_score == pytest.approx((-2 / 3 + 1 / 3) / 2)
    assert comparison.delta.score == pytest.approx(head.summary.score - base.summary.score)


def test_cost_tokens_and_duration_deltas() -> None:
    base = make_report([make_case("s/a", cost=0.02), make_case("s/b", cost=0.03)], duration_s=10.0)
    head = make_report([make_case("s/a", cost=0.01)], duration_s=4.5)
    delta = compare_reports(base, head).delta
    assert delta.cost_usd == pytest.approx(-0.04)
    assert (delta.input_tokens, delta.output_tokens, delta.duration_s) == (-100, -10, -5.5)
    unknown = make_report([make_case("s/a", cost=None)])
    assert compare_reports(base, unknown).delta.cost_usd is None


# -- significance ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("worse", "better", "p"),
    [
        (10, 2, 0.03857421875),  # 2 * (1 + 12 + 66) / 4096
        (2, 10, 0.03857421875),
        (0, 6, 0.03125),
        (0, 5, 0.0625),
        (3, 3, 1.0),
        (0, 0, 1.0),
        (1, 0, 1.0),
        (12, 3, 0.03515625),  # 2 * 576 / 32768
    ],
)
def test_mcnemar_exact_p_values(worse: int, better: int, p: float) -> None:
    assert mcnemar_exact_p(worse, better) == pytest.approx(p, abs=1e-12)


def test_mcnemar_stays_exact_for_thousands_of_flips() -> None:
    flips_, fewer = 1350, 650
    exact = 2 * sum(math.comb(flips_, k) for k in range(fewer + 1)) / 2**flips_
    assert mcnemar_exact_p(flips_ - fewer, fewer) == pytest.approx(exact, rel=1e-9)
    # The normal approximation (z = 2000 / sqrt(118000) = 5.82) agrees to two digits.
    assert mcnemar_exact_p(60_000, 58_000) == pytest.approx(5.9e-9, rel=0.01)
    assert mcnemar_exact_p(5000, 0) == 0.0


def test_a_significant_regression_by_mcnemar() -> None:
    comparison = compare_reports(*flips(10, 2, same=20))
    significance = comparison.significance
    assert significance.verdict == "significantly worse" and significance.method == "mcnemar"
    assert significance.mcnemar is not None
    assert (significance.mcnemar.worse, significance.mcnemar.better) == (10, 2)
    assert significance.mcnemar.cases == 32
    assert round(significance.mcnemar.p_value, 4) == 0.0386
    assert significance.bootstrap is None  # single pass/fail attempts: McNemar says it all


def test_few_flips_are_no_significant_change() -> None:
    significance = compare_reports(*flips(4, 1, same=30)).significance
    assert significance.verdict == "no significant change"
    assert significance.mcnemar is not None and significance.mcnemar.p_value == 0.375
    improvement = compare_reports(*flips(0, 8)).significance
    assert improvement.verdict == "significantly better"


def test_nothing_scored_in_both_has_no_test() -> None:
    base = make_report([make_case("s/a"), make_case("s/b", "error", score=None)])
    head = make_report([make_case("s/c"), make_case("s/b", "skipped", score=None)])
    significance = compare_reports(base, head).significance
    assert significance.verdict == "no cases scored in both"
    assert significance.mcnemar is None and significance.bootstrap is None


def test_repeats_get_a_deterministic_paired_bootstrap() -> None:
    names = [f"s/c{n:02}" for n in range(12)]
    base = make_report([attempts_case(n, "ppf") for n in names])
    head = make_report([attempts_case(n, "pff" if i % 3 else "fff") for i, n in enumerate(names)])
    first = compare_reports(base, head).significance
    second = compare_reports(base, head).significance
    assert first.bootstrap is not None and first.bootstrap == second.bootstrap
    assert first.method == "bootstrap" and first.verdict == "significantly worse"
    assert first.bootstrap.cases == 12
    assert first.bootstrap.mean_delta == pytest.approx(-(8 * 1 / 3 + 4 * 2 / 3) / 12)
    low, high = first.bootstrap.interval
    assert -1.0 <= low < first.bootstrap.mean_delta < high < 0.0
    # Every case fails in both: McNemar sees no flip at all, the bootstrap sees the drop.
    assert first.mcnemar is not None
    assert (first.mcnemar.worse, first.mcnemar.better, first.mcnemar.p_value) == (0, 0, 1.0)


def test_graded_scores_get_the_bootstrap_without_repeats() -> None:
    # Rubric scores (score-1)/4: every case passes in both, yet each lost a rubric point.
    names = [f"rubric/c{n}" for n in range(10)]
    base = make_report([make_case(n, score=1.0, kind="rubric") for n in names])
    head = make_report([make_case(n, score=0.75, kind="rubric") for n in names])
    significance = compare_reports(base, head).significance
    assert significance.method == "bootstrap" and significance.verdict == "significantly worse"
    assert significance.bootstrap is not None
    assert significance.bootstrap.interval == pytest.approx([-0.25, -0.25])
    assert significance.mcnemar is not None and significance.mcnemar.p_value == 1.0


def test_the_bootstrap_interval_covers_zero_when_deltas_cancel() -> None:
    boot = paired_bootstrap([1 / 3, -1 / 3, 0.0, 2 / 3, -2 / 3, 0.0, 1 / 3, -1 / 3])
    assert boot is not None and boot.mean_delta == pytest.approx(0.0)
    assert boot.interval[0] < 0.0 < boot.interval[1]
    assert paired_bootstrap([]) is None


# -- the command line ------------------------------------------------------------------------


def write_pair(tmp_path: Path, base: Report, head: Report) -> tuple[str, str]:
    return (
        str(write(tmp_path / "base" / "report.json", base)),
        str(write(tmp_path / "head" / "report.json", head)),
    )


def regression_pair() -> tuple[Report, Report]:
    base = make_report([make_case("s/a"), make_case("s/b", "fail"), make_case("s/c")])
    head = make_report(
        [make_case("s/a"), make_case("s/b"), make_case("s/c", "fail", reason="broke")]
    )
    return base, head


def test_cli_text_lists_newly_failing_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base_path, head_path = write_pair(tmp_path, *regression_pair())
    assert main(["compare", base_path, head_path]) == 0
    out = capsys.readouterr().out
    table = out[out.index("CHANGE") :].splitlines()
    assert table[0].split() == ["CHANGE", "CASE", "MODEL", "BASE", "HEAD", "SCORE"]
    assert table[1].split()[:6] == ["newly", "failing", "s/c", "-", "pass", "fail"]
    assert table[2].split()[:3] == ["newly", "passing", "s/b"]
    assert "1.00 -> 0.00 (-1.00)" in table[1]
    assert table[3] == "(1 case(s) unchanged)"
    assert "verdict: no significant change - McNemar exact p = 1 (1 pass → fail" in out


def test_cli_fail_on_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, head = regression_pair()
    base_path, head_path = write_pair(tmp_path, base, head)
    assert main(["compare", base_path, head_path, "--fail-on-regression"]) == 1
    # Only improvements (and an error that was a failure before): exit 0 even with the flag.
    better = make_report([make_case("s/a"), make_case("s/b"), make_case("s/c", "error")])
    better_path = str(write(tmp_path / "better.json", better))
    assert main(["compare", base_path, better_path, "--fail-on-regression"]) == 1
    fixed = make_report([make_case("s/a"), make_case("s/b"), make_case("s/c")])
    fixed_path = str(write(tmp_path / "fixed.json", fixed))
    assert main(["compare", base_path, fixed_path, "--fail-on-regression"]) == 0
    capsys.readouterr()


def test_cli_json_is_the_comparison_and_matches_its_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base_path, head_path = write_pair(tmp_path, *regression_pair())
    # Directories holding one report work as well as the files.
    assert (
        main(["compare", str(Path(base_path).parent), str(Path(head_path).parent), "--json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, Comparison.model_json_schema())
    comparison = Comparison.model_validate(data)
    assert data["contract"] == "assay.comparison.v1"
    assert [c.id for c in comparison.of("newly_failing")] == ["s/c"]
    assert set(data) == {"contract", "base", "head", "delta", "counts", "significance", "changes"}
    schema = Comparison.model_json_schema(schema_generator=DocumentedJsonSchema)
    assert schema["additionalProperties"] is False
    assert "Every case of either report" in schema["properties"]["changes"]["description"]


def test_cli_invalid_inputs_exit_2_naming_both_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "base.json"
    base.write_text("[1, 2")
    head = tmp_path / "head.json"
    head.write_text(json.dumps({"contract": "assay.report.v1"}))
    assert main(["compare", str(base), str(head)]) == 2
    err = capsys.readouterr().err
    assert f"{base}:1:6: not a report: invalid JSON" in err
    assert f"{head}:1:1: run: Field required" in err and "Traceback" not in err

    assert main(["compare", str(tmp_path / "nope.json"), str(head)]) == 2
    assert "nope.json: no such file" in capsys.readouterr().err

    both = tmp_path / "both"
    write(both / "one" / "report.json", make_report([]))
    write(both / "two" / "report.json", make_report([]))
    assert main(["compare", str(both), str(both / "one")]) == 2
    assert "holds 2 reports" in capsys.readouterr().err


@pytest.mark.parametrize("score", [math.nan, 7.5])
def test_cli_refuses_a_report_with_a_score_outside_0_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], score: float
) -> None:
    # It used to print `score change +nan` and a verdict computed from it.
    base, head = regression_pair()
    base_path, _ = write_pair(tmp_path, base, head)
    tampered = write_tampered(tmp_path / "tampered.json", head, score)
    assert main(["compare", base_path, str(tampered)]) == 2
    err = capsys.readouterr().err
    assert f"{tampered}:" in err and "cases[0].score: Input should be" in err
    assert "Traceback" not in err


def test_cli_text_strips_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = make_report([make_case("s/\x1b[31mred")])
    head = make_report([make_case("s/\x1b[31mred", "fail")])
    assert main(["compare", *write_pair(tmp_path, base, head)]) == 0
    assert "\x1b" not in capsys.readouterr().out


# -- markdown --------------------------------------------------------------------------------


def test_markdown_headline_lists_and_significance() -> None:
    base, head = flips(10, 2, same=20)
    head.cases[0] = head.cases[0].model_copy(update={"reason": "test: exit code 1\nlong tail"})
    text = render_comparison(compare_reports(base, head), max_bytes=65_000)
    lines = text.splitlines()
    assert lines[0] == "## 📉 Compared with base: score 0.94 → 0.69 (-0.25)"
    assert lines[2].startswith("**Significantly worse** · McNemar exact p = 0.0386 (10 pass → fail")
    assert "| Passed | 30 | 22 | -8 |" in lines
    assert "| Cost | $0.3200 | $0.3200 | +$0.0000 |" in lines
    assert "### ❌ Newly failing" in lines and "### ✅ Newly passing" in lines
    assert "- `s/worse000`: ✅ → ❌ newly failing · score 1.00 → 0.00 — test: exit code 1" in lines
    assert text.index("Newly failing") < text.index("Newly passing")
    assert "`run-all`" in lines[-1]


def test_markdown_escapes_untrusted_text_and_neutralises_mentions() -> None:
    hostile = "s/evil ``tick`` @octocat"
    reason = "<img src=x onerror=alert(1)> @admin [link](https://x.test) |pipe| *bold*\nmore"
    base = make_report([make_case(hostile, model="@team/<b>model</b>")])
    head = make_report([make_case(hostile, "fail", model="@team/<b>model</b>", reason=reason)])
    text = render_comparison(compare_reports(base, head), max_bytes=65_000)
    assert "<img" not in text and "<b>" not in text
    for name in ("octocat", "admin", "team"):
        assert f"@{name}" not in text and f"@\u200d{name}" in text
    line = next(line for line in text.splitlines() if "newly failing ·" in line)
    assert line.startswith("- ```s/evil ``tick`` @\u200doctocat``` \\[@\u200dteam/&lt;b&gt;")
    assert "&lt;img src=x onerror=alert(1)&gt;" in line
    assert "\\[link\\](https://x.test) \\|pipe\\| \\*bold\\*" in line
    assert "more" not in line  # only the first line of a reason


def test_markdown_fits_the_byte_budget_and_keeps_the_headline() -> None:
    base, head = flips(400, 0, same=0)
    text = render_comparison(compare_reports(base, head), max_bytes=4_000)
    assert len(text.encode()) <= 4_000
    assert text.startswith("## 📉 Compared with base")
    assert "Truncated:" in text and "### ❌ Newly failing" in text


# -- nothing to compare ----------------------------------------------------------------------


def run_id(report: Report, new_id: str) -> Report:
    return report.model_copy(update={"run": report.run.model_copy(update={"id": new_id})})


def disjoint_pair() -> tuple[Report, Report]:
    base = run_id(make_report([make_case("s/a"), make_case("s/b", "fail")]), "base-run")
    head = run_id(make_report([make_case("s/c", "fail")]), "head-run")
    return base, head


def test_reports_without_a_case_in_common_say_there_is_nothing_to_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It used to lead with `score change -0.50`, two scores of different cases.
    base, head = disjoint_pair()
    comparison = compare_reports(base, head)
    reason = "no case is in both reports (base has 2, head 1)"
    assert comparison.nothing_compared() == reason
    assert comparison.warnings() == [f"nothing to compare: {reason}"]
    paths = write_pair(tmp_path, base, head)
    assert main(["compare", *paths]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == f"nothing to compare: {reason}"
    assert "score change" not in captured.out and "verdict" not in captured.out
    assert lines[1].startswith("base  run base-run  score 0.50")
    assert captured.err == f"warning: nothing to compare: {reason}\n"

    assert main(["compare", *paths, "--fail-on-regression"]) == 1  # as a gate scoring nothing
    err = capsys.readouterr().err
    assert "--fail-on-regression: exit 1, since nothing was compared" in err
    assert main(["compare", *paths, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["significance"]["verdict"] == "no cases scored in both"
    assert "nothing to compare" in captured.err


def test_cases_in_both_but_skipped_on_one_side_are_nothing_to_compare() -> None:
    base = run_id(make_report([make_case("s/a", "skipped", score=None)]), "base-run")
    head = run_id(make_report([make_case("s/a"), make_case("s/b")]), "head-run")
    comparison = compare_reports(base, head)
    assert comparison.nothing_compared() == (
        "the 1 case(s) in both reports are skipped in one of them"
    )
    # A pass that became an error is compared (it newly fails), though not scored in both.
    errored = run_id(make_report([make_case("s/a", "error", score=None)]), "head-run")
    comparison = compare_reports(run_id(make_report([make_case("s/a")]), "base-run"), errored)
    assert comparison.nothing_compared() is None
    assert comparison.significance.verdict == "no cases scored in both"


def test_a_run_compared_with_itself_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = regression_pair()
    path = str(write(tmp_path / "report.json", base))
    assert main(["compare", path, path]) == 0
    assert capsys.readouterr().err == (
        "warning: base and head are the same run (run-all): every case is compared with itself\n"
    )


def test_markdown_with_nothing_to_compare_shows_no_score_change() -> None:
    text = render_comparison(compare_reports(*disjoint_pair()), max_bytes=65_000)
    lines = text.splitlines()
    assert lines[0] == "## ➖ Compared with base: nothing to compare"
    assert lines[2] == "**Nothing to compare** · no case is in both reports (base has 2, head 1)"
    assert "| Score | 0.50 | 0.00 | – |" in lines
