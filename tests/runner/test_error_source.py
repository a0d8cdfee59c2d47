"""An `error` says whose call failed: the agent's, the judge's, the grader's, the
sandbox's or assay's own (`error_source`, in the case and in each attempt).

A reason such as "timeout after 1s" or a connection error did not say which part failed
(issue 34). The reason texts stay as they were: PVYai's and Cassandra's words are
compared as they are, and tests pin them.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import assay
from assay.cli import main
from assay.report.model import CaseResult
from assay.suites.case import VerificationCommand
from tests.fakes.anthropic_api import FakeAnthropic
from tests.runner.test_e2e import options, task_cases, write_project
from tests.runner.test_no_silent_wrong_answers import warden_project

KEY = "sk-ant-error-source-0123456789"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=KEY) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def only_case(report: assay.Report) -> CaseResult:
    (case,) = report.cases
    assert case.status == "error", case
    (attempt,) = case.attempts
    assert attempt.error_source == case.error_source
    return case


def test_an_agent_that_crashes_is_the_agents_error(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"t": {"crash": True}})
    case = only_case(assay.run(options(root), cases=task_cases(root, ["t"])))
    assert case.error_source == "agent"


@pytest.mark.slow
def test_an_agent_past_the_timeout_is_the_agents_error(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"t": {"sleep": 30}})
    cases = task_cases(root, ["t"])
    case = only_case(assay.run(options(root, timeout_s=1), cases=cases))
    assert case.error_source == "agent" and "timed out" in case.reason


def test_a_judge_that_answers_no_verdict_is_the_judges_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeAnthropic
) -> None:
    root = warden_project(tmp_path / "proj", runtime=None)
    argv = [
        "run", str(root), "--agent-command", f"{sys.executable} {root / 'agent.py'}",
        "--judge-model", "anthropic/claude-sonnet-4-6", "--report-dir", str(root / "report"),
    ]  # fmt: skip
    assert main(argv) == 1
    (case,) = json.loads((root / "report" / "report.json").read_text())["cases"]
    assert (case["status"], case["error_source"]) == ("error", "judge")
    assert [a["error_source"] for a in case["attempts"]] == ["judge"]
    # the report keeps the reason as it was; what a person reads leads it with the source
    assert not case["reason"].startswith("judge: ")
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("ERROR")]
    assert f"  judge: {case['reason']}" in line
    junit = (root / "report" / "junit.xml").read_text()
    assert 'message="judge: ' in junit


def test_a_workspace_that_cannot_be_copied_is_the_sandboxs_error(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"t": {}})
    cases = task_cases(root, ["t"])
    shutil.rmtree(root / "fixtures" / "calc")  # gone after the suite was read
    case = only_case(assay.run(options(root), cases=cases))
    assert case.error_source == "sandbox"


def test_a_verification_command_that_cannot_start_is_the_graders_error(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"t": {}})
    (case,) = task_cases(root, ["t"])
    missing = VerificationCommand("test", "Run tests", (str(root / "no-such-program"),))
    spec = dataclasses.replace(case.spec, commands=(missing,))
    result = only_case(assay.run(options(root), cases=[dataclasses.replace(case, spec=spec)]))
    assert result.error_source == "grader"


def test_a_bug_in_assay_is_the_harness_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.runner import attempt

    def broken(case: object, *, options: object) -> object:
        raise KeyError("a bug in assay's own code")

    monkeypatch.setattr(attempt, "grader_for", broken)
    root = write_project(tmp_path / "proj", {"t": {}})
    case = only_case(assay.run(options(root), cases=task_cases(root, ["t"])))
    assert case.error_source == "harness" and case.reason.startswith("internal error: KeyError")


def test_a_pass_and_a_fail_have_no_error_source(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"good": {}, "bad": {"solve": False}})
    report = assay.run(options(root), cases=task_cases(root, ["good", "bad"]))
    assert {c.id: (c.status, c.error_source) for c in report.cases} == {
        "calc/good": ("pass", None),
        "calc/bad": ("fail", None),
    }
