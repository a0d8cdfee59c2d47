"""The console script ends the process without tearing the interpreter down, yet with its
exit code, its output flushed and every exit function run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

_PROGRAM = """
import atexit, sys, tempfile
atexit.register(lambda: print("exit function ran", file=sys.stderr))
scratch = tempfile.TemporaryDirectory()  # removed by a weakref finalizer at exit
print(scratch.name, file=sys.stderr)
from assay.cli import run_program
sys.argv = ["assay", *sys.argv[1:]]
run_program()
"""


def _assay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _PROGRAM, *args], capture_output=True, text=True, timeout=120
    )


def test_the_output_is_flushed_and_the_exit_functions_run() -> None:
    done = _assay("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("assay ")
    scratch, ran = done.stderr.splitlines()[-2:]
    assert ran == "exit function ran"
    assert not Path(scratch).exists()


@pytest.mark.slow
def test_the_exit_code_is_the_commands(tmp_path: Path) -> None:
    done = _assay("validate", str(tmp_path / "no-such-suite"))
    assert done.returncode == 2
    assert "no-such-suite: no such file or directory" in done.stderr


def test_a_reader_that_left_early_is_not_an_error(tmp_path: Path) -> None:
    # `assay --help | head -1`: the flush at exit meets a closed pipe and says nothing
    script = f"{sys.executable} -c '{_PROGRAM}' --help | head -c 1"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
