"""What the benchmarks that run `assay` as a subprocess share: its environment, and
reports made comparable across runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

VOLATILE_KEYS = frozenset({"started_at", "finished_at", "duration_s", "durationS", "recorded_at"})
"""What differs between two runs of the same cases: timestamps and durations."""


def assay_env() -> dict[str, str]:
    """The caller's environment without assay's own settings (they would change the run)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}


def bytecode_env(pycache: Path) -> dict[str, str]:
    """assay_env() with bytecode written to and read from `pycache`, as for an installed
    package (pip compiles it). Without it, a checkout run with PYTHONDONTWRITEBYTECODE
    compiles every assay module from source at each start."""
    env = assay_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def comparable(report_file: Path) -> Any:
    """report.json without its run id, timestamps and durations."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE_KEYS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    report = json.loads(report_file.read_text(encoding="utf-8"))
    report["run"].pop("id")
    return strip(report)
