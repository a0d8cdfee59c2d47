"""`assay.run(RunOptions(...))` and `assay run ...`: the same report for the same inputs.

The repository's corpus is copied beside a `[tool.assay]` that sets run options, with
`ASSAY_*` variables beating some of them and given options beating those, and run both
ways: without a key (model-backed cases skipped, tasks run by the example agent) and
against the loopback fake Messages API (every case runs). The two reports must be equal
but for what differs between any two runs (ids, clocks, durations, temp paths).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.cli import main
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.corpus_responder import corpus_responder

ROOT = Path(__file__).resolve().parents[1]
API_KEY = "sk-ant-test-parity-0123456789"
CONFIG = """\
[tool.assay]
root = "."
paths = ["evals"]
agent_command = ["./examples/reference_agent.py", "{task_id}", "{workspace}"]
threshold = 0.2
max_errors = 5
concurrency = 3
timeout = 300
require_all = false
report_dir = "configured-report"
"""
_VOLATILE = {"id", "started_at", "finished_at", "duration_s", "durationS", "git_sha"}
_TIMING = re.compile(r"\b\d+\.\d+s\b")
"""A time in command output (the task checks' pytest says "8 passed in 0.03s")."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the corpus under its own configuration, as the working directory."""
    root = tmp_path / "project"
    for name in ("evals", "fixtures", "examples"):
        shutil.copytree(ROOT / name, root / name, symlinks=True)
    (root / "pyproject.toml").write_text(CONFIG)
    # A suite-level timeout, which the configured one beats.
    suite_file = root / "evals" / "security-review" / "_suite.yaml"
    suite_file.write_text(suite_file.read_text() + "timeout_ms: 45000\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the task fixtures' own pytest
    monkeypatch.setenv("ASSAY_ISOLATION", "none")
    monkeypatch.setenv("ASSAY_MAX_ERRORS", "4")  # beats the configured 5
    monkeypatch.setenv("ASSAY_THRESHOLD", "0.3")  # beaten by the given 0.35
    monkeypatch.setenv("ASSAY_CONCURRENCY", "2")  # beats the configured 3
    return root


def both_ways(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    code = main(
        [
            "run",
            "--threshold",
            "0.35",
            "--work-root",
            str(root / "work-cli"),
            "--report-dir",
            str(root / "cli-report"),
        ]
    )
    from_cli = assay.Report.model_validate_json((root / "cli-report" / "report.json").read_text())
    from_library = assay.run(
        assay.RunOptions(
            threshold=0.35, work_root=root / "work-lib", report_dir=str(root / "lib-report")
        )
    )
    written = assay.Report.model_validate_json((root / "lib-report" / "report.json").read_text())
    assert written == from_library
    assert code == (0 if from_cli.summary.gate == "pass" else 1)
    return comparable(from_cli), comparable(from_library)


def comparable(report: assay.Report) -> dict[str, Any]:
    text = report.model_dump_json()
    for variable in ("work-cli", "work-lib"):
        text = text.replace(variable, "work")
    for variable in ("cli-report", "lib-report"):
        text = text.replace(variable, "report")
    text = _TIMING.sub("N.NNs", text)
    return _without_volatile(assay.Report.model_validate_json(text).model_dump(mode="json"))


def _without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(item) for item in value]
    return value


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two JSON values differ (for a readable failure)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(set(a) | set(b))
        return [d for k in keys for d in differences(a.get(k), b.get(k), f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def check_settings_in_play(report: dict[str, Any]) -> None:
    assert report["run"]["threshold"] == 0.35  # given
    assert report["run"]["max_errors"] == 4  # ASSAY_MAX_ERRORS over [tool.assay]
    assert report["run"]["isolation"]["requested"] == "none"  # ASSAY_ISOLATION


@pytest.mark.slow
def test_without_a_key_the_library_and_the_cli_write_the_same_report(project: Path) -> None:
    from_cli, from_library = both_ways(project)
    assert differences(from_cli, from_library) == []
    check_settings_in_play(from_cli)
    statuses = {case["kind"]: case["status"] for case in from_cli["cases"]}
    assert statuses["task"] == "pass" and statuses["review"] == "skipped"
    assert not (project / "configured-report").exists()  # the given report dir won


@pytest.mark.slow
def test_against_the_fake_model_the_library_and_the_cli_write_the_same_report(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic(api_key=API_KEY, responder=corpus_responder) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        from_cli, from_library = both_ways(project)
    assert differences(from_cli, from_library) == []
    check_settings_in_play(from_cli)
    assert {case["status"] for case in from_cli["cases"]} <= {"pass", "fail"}
    assert from_cli["summary"]["tokens"]["input"] > 0
