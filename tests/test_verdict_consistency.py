"""A self-contradictory rubric verdict (score 1-2 with met_rubric true, 4-5 with false) is
flagged in the case's reason and judge record and counted in one run note; its pass/fail
stays Cassandra's (met_rubric decides). Also: plurals in the summary, and
--keep-workspaces saying where the workspaces are."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.grading.rubric_judge import RubricJudge
from assay.grading.verdict_consistency import (
    CONTRADICTION_KEY,
    contradiction,
    contradiction_note,
)
from assay.report.model import CaseResult
from assay.suites.case import RubricSpec
from tests import test_model_e2e as e2e
from tests.fakes.anthropic_api import FakeAnthropic, tool_use_reply
from tests.test_model_e2e import Script, _case, attempt, call, run_case
from tests.test_report_renderers import _case as _result

fake = e2e.fake  # the loopback fake Anthropic server, as test_model_e2e starts it


@pytest.mark.parametrize(
    "score,met,flagged",
    [
        (1, True, True),
        (2, True, True),
        (3, True, False),
        (3, False, False),
        (4, False, True),
        (5, False, True),
        (5, True, False),
        (1, False, False),
    ],
)
def test_which_verdicts_contradict_themselves(score: int, met: bool, flagged: bool) -> None:
    assert (contradiction(score, met) is not None) is flagged


def test_a_contradictory_verdict_passes_as_cassandra_says_and_is_flagged(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    base = tmp_path / "case" / "base"
    base.mkdir(parents=True)
    (base / "config.go").write_text("package config\n")
    diff = tmp_path / "case" / "input.diff"
    diff.write_text("--- a/config.go\n+++ b/config.go\n@@ -1 +1,2 @@\n package config\n+x\n")
    spec = RubricSpec(rubric="MUST find it.", diff=diff, base=base, description="d")
    evaluation = {"score": 1, "rationale": "Nothing.", "findings": [], "met_rubric": True}
    fake.responder = Script(
        [call("submit_findings", {"review": "ok", "findings": []})],
        [tool_use_reply("record_evaluation", evaluation)],
    )
    _, grade = run_case(attempt(_case("rubric", spec, tmp_path), tmp_path), RubricJudge)
    assert (grade.status, grade.score) == ("pass", 0.0)  # Cassandra's rule: met_rubric decides
    assert grade.reason == (
        "judge score 1/5, rubric met; self-contradictory verdict: score 1/5 with met_rubric "
        "true (met_rubric decides)"
    )
    assert grade.judge["contradiction"] == (
        "self-contradictory verdict: score 1/5 with met_rubric true"
    )


def test_the_run_counts_contradictory_verdicts_in_one_note() -> None:
    def case(name: str, judge: dict[str, str]) -> CaseResult:
        return _result(f"r/{name}", "pass", kind="rubric", judge=judge)

    def note(cases: list[CaseResult]) -> str | None:  # as the run picks them (session.py)
        return contradiction_note([c.id for c in cases if c.judge.get(CONTRADICTION_KEY)])

    flagged = {"contradiction": "self-contradictory verdict: score 1/5 with met_rubric true"}
    assert note([case("a", {})]) is None
    said = note([case("a", flagged), case("b", {}), case("c", flagged)])
    assert said is not None and said.startswith("2 cases got a self-contradictory rubric")
    assert said.endswith("(r/a, r/c)")
    assert note([case("a", flagged)]).startswith("1 case got")  # type: ignore[union-attr]


def test_a_run_flags_the_contradiction_in_every_output(
    fake: FakeAnthropic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    import assay
    from assay.options import RunOptions
    from assay.report.terminal import print_summary

    base = tmp_path / "case" / "base"
    base.mkdir(parents=True)
    (base / "config.go").write_text("package config\n")
    diff = tmp_path / "case" / "input.diff"
    diff.write_text("--- a/config.go\n+++ b/config.go\n@@ -1 +1,2 @@\n package config\n+x\n")
    spec = RubricSpec(rubric="MUST find it.", diff=diff, base=base, description="d")
    evaluation = {"score": 5, "rationale": "Great.", "findings": [], "met_rubric": False}
    fake.responder = Script(
        [call("submit_findings", {"review": "ok", "findings": []})],
        [tool_use_reply("record_evaluation", evaluation)],
    )
    report_dir = tmp_path / "report"
    options = RunOptions(models=(e2e.MODEL,), report_dir=report_dir, isolation="none")
    report = assay.run(options, cases=[_case("rubric", spec, tmp_path)])
    (case,) = report.cases
    assert (case.status, case.score) == ("fail", 1.0)  # met_rubric decides, as in Cassandra
    assert "self-contradictory verdict: score 5/5 with met_rubric false" in case.reason
    note = (
        "1 case got a self-contradictory rubric verdict (score 1-2 with met_rubric true, or "
        "4-5 with false)"
    )
    assert [n for n in report.run.notes if n.startswith(note)]
    assert note in (report_dir / "summary.md").read_text().replace("\\", "")
    assert note in (report_dir / "report.html").read_text()
    assert "self-contradictory verdict" in (report_dir / "report.json").read_text()
    print_summary(report, report_dir=str(report_dir), stream=sys.stdout)
    assert f"note: {note}" in capsys.readouterr().out
