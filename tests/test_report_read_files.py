"""Report files named by the user: a link is followed, but only to a regular file, read
under a bound; `assay view` finds the page of the report a file belongs to.

(`assay compare r1 /dev/zero` used to read until memory ran out; a FIFO blocked for good.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import assay
from assay.cli import main
from assay.report.read import MAX_REPORT_BYTES
from tests.test_merge import make_case, make_report, write


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return write(tmp_path / "good" / "report.json", make_report([make_case("s/a")]))


def compare_with(good: Path, other: Path) -> subprocess.CompletedProcess[str]:
    # A real process with a timeout: what used to hang must not hang the test suite.
    return subprocess.run(
        [sys.executable, "-m", "assay.cli", "compare", str(good), str(other)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.slow
def test_a_fifo_or_a_device_is_refused_not_read(good: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    done = compare_with(good, fifo)
    assert done.returncode == 2
    assert f"{fifo}: not a report: the file is a FIFO (named pipe), not a regular file" in (
        done.stderr
    )
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")  # followed (a user's own link), to a device: refused
    done = compare_with(good, link)
    assert done.returncode == 2
    assert "not a report: the file is a character device, not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_report_past_the_bound_is_refused_unread(
    good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:  # sparse: no disk, and never read
        handle.truncate(MAX_REPORT_BYTES + 1)
    assert main(["compare", str(good), str(huge)]) == 2
    err = capsys.readouterr().err
    assert f"is {MAX_REPORT_BYTES + 1} bytes, over the {MAX_REPORT_BYTES} byte limit" in err
    assert "of a report (512 MiB, room for about 100,000 cases); not read" in err
    with pytest.raises(assay.ConfigError, match="byte limit of a report"):
        assay.read_report(huge)


def test_a_link_to_a_report_is_followed(
    good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(good)
    assert main(["compare", str(good), str(link)]) == 0
    assert assay.read_report(str(link)) == assay.read_report(good)
    capsys.readouterr()


def test_read_report_takes_a_string_or_a_report_directory(good: Path) -> None:
    expected = assay.read_report(good)
    assert assay.read_report(str(good)) == expected
    assert assay.read_report(str(good.parent)) == expected  # as `assay compare DIR` does
    with pytest.raises(assay.ConfigError, match="no such file"):
        assay.read_report(str(good.parent / "nope.json"))


@pytest.mark.parametrize("given", ["report.json", "summary.md", "report.html", ""])
def test_view_opens_the_page_of_the_report_a_file_belongs_to(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    given: str,
) -> None:
    # `assay view out/report.json` used to open report.json itself.
    out = tmp_path / "out"
    out.mkdir()
    for name in ("report.json", "summary.md", "report.html"):
        (out / name).write_text("<!DOCTYPE html>" if name.endswith("html") else "{}")
    monkeypatch.setenv("BROWSER", "false")  # a browser command that fails: none to open
    for display in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(display, raising=False)
    assert main(["view", str(out / given) if given else str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {(out / 'report.html').resolve()}"
