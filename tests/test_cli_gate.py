"""The gate's modes through `assay run`: regression against a baseline, inconclusive, quarantine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.cli import main
from tests.test_cli_run import load_report, project, run_args
from tests.test_runner_e2e import set_plans


@pytest.mark.slow
def test_regression_gate_fails_a_head_worse_than_its_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [f"t{i}" for i in range(6)]
    root = project(tmp_path, {name: {} for name in names})
    assert main(run_args(root, report="base")) == 0
    baseline = root / "base" / "report.json"

    set_plans(root, {name: {"solve": False} for name in names})
    code = main(run_args(root, "--gate", "regression", "--baseline", str(baseline)))
    capsys.readouterr()
    report = load_report(root / "report" / "report.json")
    assert code == 1
    assert report.run.gate_mode == "regression" and report.summary.gate_mode == "regression"
    assert report.summary.regression is not None
    assert "significantly worse" in report.summary.regression
    # summary.md and report.html compare the run with its baseline, what changed first.
    summary = (root / "report" / "summary.md").read_text()
    assert summary.index("Compared with baseline") < summary.index("### ❌ Newly failing")
    assert summary.count("<details>") == 6  # each failing case once
    assert '"newly_failing":6' in (root / "report" / "report.html").read_text()

    # The same head against itself: no change, and no threshold in regression mode.
    shutil.copy(root / "report" / "report.json", tmp_path / "head.json")
    code = main(run_args(root, "--gate", "regression", "--baseline", str(tmp_path / "head.json")))
    assert code == 0


@pytest.mark.slow
def test_the_baseline_is_read_once_for_the_gate_and_repeat_auto(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.report import read

    root = project(tmp_path, {"a": {}, "b": {}})
    assert main(run_args(root, report="base")) == 0
    baseline = root / "base" / "report.json"
    reads: list[Path] = []
    real = read.read_report

    def counted(path: Path) -> object:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(read, "read_report", counted)
    args = ("--gate", "regression", "--baseline", str(baseline), "--repeat", "auto")
    assert main(run_args(root, *args)) == 0
    capsys.readouterr()
    assert reads == [baseline]


@pytest.mark.slow
def test_quarantine_from_the_command_line_adds_to_the_environment_and_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ("solves", "a", "b", "c")
    root = project(tmp_path, {"solves": {}, **{n: {"solve": False} for n in names[1:]}})
    (root / "assay.toml").write_text('quarantine = ["calc/a"]\n')
    monkeypatch.setenv("ASSAY_QUARANTINE", "calc/b")
    # Without the flag calc/c fails the 0.9 gate; quarantined by --quarantine, it does not.
    assert main(run_args(root, "--threshold", "0.9")) == 1
    code = main(run_args(root, "--threshold", "0.9", "--quarantine", "calc/c,calc/nope"))
    assert "quarantine: 'calc/nope' names no case" in capsys.readouterr().err
    report = load_report(root / "report" / "report.json")
    assert code == 0
    assert report.run.quarantine == ["calc/a", "calc/c", "calc/nope", "calc/b"]
    assert {c.id for c in report.cases if c.quarantined} == {"calc/a", "calc/b", "calc/c"}
    assert report.summary.quarantined == 3 and report.summary.score == 1.0


@pytest.mark.slow
def test_inconclusive_fail_and_neutral_through_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, {"a": {"alternate": True}, "b": {}})
    monkeypatch.setenv("ASSAY_INCONCLUSIVE", "fail")
    assert main(run_args(root, "--repeat", "2", "--threshold", "0.5")) == 1
    report = load_report(root / "report" / "report.json")
    assert report.summary.verdict == "inconclusive"
    assert report.run.inconclusive == "fail"
    flaky = next(c for c in report.cases if c.id == "calc/a")
    assert flaky.flaky and flaky.score_ci is not None and flaky.score_ci[0] < 0.5
    assert (
        main(run_args(root, "--repeat", "2", "--threshold", "0.5", "--inconclusive", "neutral"))
        == 0
    )
    capsys.readouterr()


@pytest.mark.slow
def test_quarantine_from_the_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"solves": {}, "gives-up": {"solve": False}})
    (root / "assay.toml").write_text('quarantine = ["calc/gives-up"]\n')
    assert main(run_args(root)) == 0
    capsys.readouterr()
    report = load_report(root / "report" / "report.json")
    gave_up = next(c for c in report.cases if c.id == "calc/gives-up")
    assert gave_up.quarantined and gave_up.status == "fail"
    assert report.summary.quarantined == 1 and report.run.quarantine == ["calc/gives-up"]
