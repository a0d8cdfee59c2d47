"""`assay merge` refuses a shard whose cases are not exactly its part of the run's plan.

A shard report that lost cases, with its summary edited to match, merged into a passing
report without them (issue 34): each shard now records the plan (`run.split_cases`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.cli import main
from assay.report.gate.stats import summarize
from assay.report.model import Report
from assay.report.read import read_report
from tests.test_cli_run import project, run_args

NAMES = ["a", "b", "c", "d", "e"]


def sharded_run(tmp_path: Path) -> Path:
    root = project(tmp_path, {name: {} for name in NAMES})
    for index in (1, 2):
        assert main(run_args(root, "--shard", f"{index}/2", report=f"shard{index}")) == 0
    return root


def rewrite(path: Path, report: Report, cases: list | None = None) -> None:
    """`report` with `cases`, its summary made again to count them: edited consistently."""
    cases = report.cases if cases is None else cases
    summary = summarize(cases, threshold=report.run.threshold, max_errors=0, duration_s=1.0)
    edited = report.model_copy(update={"cases": cases, "summary": summary})
    path.write_text(edited.model_dump_json(indent=2))


def merge(root: Path) -> list[str]:
    shards = [str(root / f"shard{i}" / "report.json") for i in (1, 2)]
    return ["merge", *shards, "-o", str(root / "merged")]


def test_each_shard_records_the_whole_plan(tmp_path: Path) -> None:
    root = sharded_run(tmp_path)
    runs = [read_report(root / f"shard{i}" / "report.json").run for i in (1, 2)]
    plan = [f"calc/{name}" for name in NAMES]
    assert [run.split_cases for run in runs] == [plan, plan]
    assert main(merge(root)) == 0


def test_a_shard_that_lost_a_case_is_refused_naming_the_file_and_the_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = sharded_run(tmp_path)
    path = root / "shard1" / "report.json"
    report = read_report(path)
    assert [c.id for c in report.cases] == ["calc/a", "calc/c", "calc/e"]
    rewrite(path, report, [c for c in report.cases if c.id != "calc/c"])
    capsys.readouterr()
    assert main(merge(root)) == 2
    err = capsys.readouterr().err
    assert f"{path}: shard 1/2 is not its part of the run's plan (3 of 5 case(s)): " in err
    assert "missing 1 case(s) (calc/c)" in err and "Traceback" not in err
    assert not (root / "merged" / "report.json").exists()


def test_a_case_moved_between_shards_is_an_extra_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = sharded_run(tmp_path)
    first, second = (read_report(root / f"shard{i}" / "report.json") for i in (1, 2))
    moved = [c for c in second.cases if c.id == "calc/b"]
    rewrite(root / "shard1" / "report.json", first, first.cases + moved)
    rewrite(root / "shard2" / "report.json", second, [c for c in second.cases if c.id != "calc/b"])
    capsys.readouterr()
    assert main(merge(root)) == 2
    assert "shard 1/2 is not its part of the run's plan (3 of 5 case(s)): extra 1 case(s) " \
        "(calc/b)" in capsys.readouterr().err  # fmt: skip


def test_a_plan_edited_to_fit_the_lost_cases_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = sharded_run(tmp_path)
    path = root / "shard1" / "report.json"
    report = read_report(path)
    kept = [c for c in report.cases if c.id != "calc/c"]
    plan = [case_id for case_id in report.run.split_cases or [] if case_id != "calc/c"]
    run = report.run.model_copy(update={"split_cases": plan})
    rewrite(path, report.model_copy(update={"run": run}), kept)
    capsys.readouterr()
    assert main(merge(root)) == 2
    assert f"{path}: run.split_cases does not hash to run.split" in capsys.readouterr().err
