"""The machine a benchmark ran on, printed with its numbers so they can be compared."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _git_version() -> str:
    try:
        done = subprocess.run(
            ["git", "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except OSError:
        return "git not found"
    return done.stdout.strip() or "git (unknown version)"


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


def describe_machine() -> str:
    """nproc, CPU model, Python, git, load average (1/5/15 min) and the UTC date."""
    return (
        f"machine: nproc={os.cpu_count()}, CPU {_cpu_model()!r}, Python "
        f"{platform.python_version()}, {_git_version()}\n"
        f"load average: {load_average()}; date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )
