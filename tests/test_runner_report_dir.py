"""The report directory: one run at a time writes it, and it is never the cwd by accident."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from pathlib import Path

import pytest

from assay.cli import main
from assay.errors import ConfigError
from assay.runner.lock import LOCK_FILE, report_dir_lock
from tests.test_cli_run import (
    ASSAY,
    kill_leftovers,
    project,
    result_lines,
    run_args,
    started_pids,
    wait_for,
)
from tests.test_runner_e2e import set_plans


def test_the_lock_names_its_holder_and_is_free_again_once_released(tmp_path: Path) -> None:
    with report_dir_lock(tmp_path):
        with pytest.raises(ConfigError) as caught, report_dir_lock(tmp_path):
            pass
        assert str(caught.value).startswith(
            f"another assay run is using {tmp_path} (pid {os.getpid()})"
        )
    with report_dir_lock(tmp_path):  # released: taken again at once
        assert (tmp_path / LOCK_FILE).read_text() == f"{os.getpid()}\n"


@pytest.mark.slow
def test_a_second_run_or_resume_of_a_report_dir_in_use_exits_2_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"slow": {"sleep": 60}, "quick": {}})
    report = root / "report"
    first = subprocess.Popen(
        [*ASSAY, *run_args(root, "--concurrency", "2")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # `quick` has finished and `slow` is running: the stream holds one line and stays so.
        results = report / "results.jsonl"
        wait_for(lambda: results.exists() and len(result_lines(results)) == 1)
        wait_for(lambda: len(started_pids(root)) == 2)
        lines_before = results.read_bytes()
        for extra in ((), ("--resume", str(report))):
            assert main(run_args(root, *extra)) == 2
            err = capsys.readouterr().err
            assert f"another assay run is using {report} (pid {first.pid})" in err
            assert "Traceback" not in err
        assert len(started_pids(root)) == 2  # the refused runs started no agent
        assert results.read_bytes() == lines_before  # nor truncated it

        # A killed holder leaves the lock file, but the kernel has released its lock.
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        first.kill()
        first.wait(timeout=10)
        kill_leftovers(root)
    set_plans(root, {"slow": {}, "quick": {}})
    assert main(run_args(root, "--resume", str(report))) == 0
    capsys.readouterr()
    assert sorted(r.id for r in result_lines(results)) == ["calc/quick", "calc/slow"]


@pytest.mark.slow
def test_an_empty_report_dir_is_refused_and_an_empty_variable_is_unset_never_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"t": {}})
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    args = run_args(root)
    args[args.index("--report-dir") + 1] = ""
    # Typed empty (`--report-dir "$DIR"` with DIR unset) is a usage error, not the default.
    with pytest.raises(SystemExit) as refused:
        main(args)
    assert refused.value.code == 2
    assert "argument --report-dir: empty path" in capsys.readouterr().err
    assert started_pids(root) == [] and list(cwd.iterdir()) == []
    # An empty ASSAY_REPORT_DIR is unset, as GitHub passes an input not given: the default.
    monkeypatch.setenv("ASSAY_REPORT_DIR", "")
    del args[args.index("--report-dir") : args.index("--report-dir") + 2]
    assert main(args) == 0
    capsys.readouterr()
    assert (cwd / "assay-report" / "report.json").is_file()
    # The run history sits beside the report directory (report/history.py).
    assert sorted(p.name for p in cwd.iterdir()) == [".assay-history", "assay-report"]


@pytest.mark.slow
def test_a_directory_holding_someone_elses_summary_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"t": {}})
    report = root / "report"
    report.mkdir()
    (report / "summary.md").write_text("my own notes\n")
    assert main(run_args(root)) == 2
    err = capsys.readouterr().err
    assert f"{report} already holds summary.md, which a report would replace" in err
    assert "(--report-dir)" in err and "Traceback" not in err
    assert started_pids(root) == []  # no agent ran
    assert (report / "summary.md").read_text() == "my own notes\n"
    # A directory assay has written is its own: the next run replaces its files.
    (report / "summary.md").unlink()
    assert main(run_args(root)) == 0
    assert main(run_args(root)) == 0
    # So is one downloaded from CI, whose artifact left the hidden lock file out.
    (report / LOCK_FILE).unlink()
    assert main(run_args(root, "--resume", str(report))) == 0
    capsys.readouterr()


@pytest.mark.slow
def test_merge_never_replaces_files_beside_its_output_that_are_not_assays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"t": {}})
    assert main(run_args(root)) == 0
    mine = tmp_path / "docs"
    mine.mkdir()
    (mine / "report.html").write_text("<p>the team's page</p>\n")
    (mine / "notes.json").write_text("{}\n")
    for output in (mine / "merged.json", mine / "notes.json"):
        assert main(["merge", str(root / "report"), "-o", str(output)]) == 2
        assert "which a report would replace" in capsys.readouterr().err
    assert (mine / "report.html").read_text() == "<p>the team's page</p>\n"
    assert sorted(p.name for p in mine.iterdir()) == ["notes.json", "report.html"]


@pytest.mark.slow
def test_the_history_is_checked_before_any_case_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A history that cannot be written, or a bad ASSAY_HISTORY_KEEP, was found only after
    every case had run, and then no report was written at all."""
    root = project(tmp_path, {"quick": {}})
    blocker = root / "a-file"
    blocker.write_text("")
    assert main(run_args(root, "--history", str(blocker / "history"))) == 2
    assert f"cannot write the run history {blocker / 'history'}" in capsys.readouterr().err
    monkeypatch.setenv("ASSAY_HISTORY_KEEP", "0")
    assert main(run_args(root)) == 2
    assert "ASSAY_HISTORY_KEEP='0'" in capsys.readouterr().err
    assert started_pids(root) == []
    monkeypatch.delenv("ASSAY_HISTORY_KEEP")

    # The default history beside the report directory: the run goes on without it.
    (root / ".assay-history").write_text("not a directory")
    assert main(run_args(root)) == 0
    assert "cannot write the run history" in capsys.readouterr().err
    assert (root / "report" / "report.json").is_file()


@pytest.mark.slow
def test_a_linked_results_file_or_cases_dir_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"quick": {}})
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    report = root / "report"
    assert main(run_args(root)) == 0
    capsys.readouterr()
    (report / "results.jsonl").unlink()
    (report / "results.jsonl").symlink_to(victim)
    assert main(run_args(root)) == 2
    assert "results.jsonl is a symbolic link" in capsys.readouterr().err
    assert victim.read_text() == "keep me"


@pytest.mark.slow
def test_ctrl_c_while_the_report_is_written_prints_the_resume_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import assay.runner.session as session

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    root = project(tmp_path, {"quick": {}})
    write_report_dir = session.write_report_dir
    monkeypatch.setattr(session, "write_report_dir", interrupted)
    assert main(run_args(root)) == 130
    err = capsys.readouterr().err
    assert "assay: interrupted" in err and f"--resume {root / 'report'}" in err
    monkeypatch.setattr(session, "write_report_dir", write_report_dir)
    resume = shlex.split(err.split("continue with: assay ", 1)[1])
    assert main(resume) == 0
    assert (root / "report" / "report.json").is_file()
