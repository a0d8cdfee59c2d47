"""A run killed before its report is written leaves no earlier run's report behind.

A second run into the same report directory, SIGKILLed after its first result, used to
leave the first run's passing report.json, summary.md, junit.xml and report.html beside
its own partial results.jsonl; `assay compare` and `assay view` read them without a word
(issue 34).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli import main
from assay.core.files import HTML_FILE, JUNIT_FILE, REPORT_FILE, RESULTS_FILE, SUMMARY_FILE
from tests.cli.test_run import project, run_args, set_plans, started_pids, wait_for

RUN = "import sys; from assay.cli import main; sys.exit(main(sys.argv[1:]))"
REPORTS = (REPORT_FILE, SUMMARY_FILE, JUNIT_FILE, HTML_FILE)


def test_a_killed_rerun_leaves_no_report_of_the_earlier_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"a": {}, "b": {}})
    report = root / "report"
    assert main(run_args(root, "--concurrency", "1")) == 0
    assert all((report / name).is_file() for name in REPORTS)

    set_plans(root, {"a": {}, "b": {"sleep": 120}})
    rerun = subprocess.Popen(
        [sys.executable, "-c", RUN, *run_args(root, "--concurrency", "1")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: (report / RESULTS_FILE).read_text().count("\n") == 1, timeout_s=60)
        wait_for(lambda: len(started_pids(root)) == 4)  # 2 of run 1, a and b of run 2
    finally:
        os.killpg(rerun.pid, signal.SIGKILL)
        rerun.wait(timeout=30)
    assert (report / RESULTS_FILE).read_text().count("\n") == 1  # its partial results
    left = [name for name in REPORTS if (report / name).exists()]
    assert left == [], f"run 1's {left} stand beside run 2's partial results"

    capsys.readouterr()
    for argv in (["view", str(report)], ["compare", str(report), str(report)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "a run that stopped before writing its report" in err, err
        assert f"assay run --resume {report}" in err and "Traceback" not in err
