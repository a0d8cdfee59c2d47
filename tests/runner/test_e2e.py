"""The runner end to end through the library API: real git sandboxes, real agent processes.

The agent under test is a small Python script whose behaviour per task comes from a
plan.json beside it (solve or not, sleep, trace events, alternate between attempts).
Cases are built directly here so these tests do not depend on the suite loaders.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.agents import AgentOutput, AttemptContext, register_agent
from assay.errors import AgentError, ConfigError, JudgeError, ModelUnavailable
from assay.options import RunOptions
from assay.report.model import CaseResult, Report, Usage
from assay.runner.results import parse_result_line
from assay.suites.case import (
    Case,
    ContextChecks,
    FixtureFile,
    ReviewSpec,
    TaskSpec,
    VerificationCommand,
    VerifySpec,
)

AGENT_SCRIPT = r"""
import json, os, sys, time
from pathlib import Path

task, workspace = sys.argv[1], Path(sys.argv[2])
model = sys.argv[3] if len(sys.argv) > 3 else ""
here = Path(__file__).parent
plan = json.loads((here / "plan.json").read_text()).get(task, {})
started = here / "started"
started.mkdir(exist_ok=True)
# "<task>-<pid>", the task cut so that a very long one still fits in a file name
(started / f"{task[:100]}-{os.getpid()}").write_text(str(os.getpid()))
time.sleep(plan.get("sleep", 0))
for event in plan.get("trace", [{"type": "tool", "name": "edit_file"}]):
    print(json.dumps(event), flush=True)
solve = plan.get("solve", True)
if "solve_models" in plan:
    solve = model in plan["solve_models"]
if plan.get("alternate") or "solve_first" in plan:
    # Claim the next attempt number atomically: repeats may run side by side.
    n = 0
    while True:
        try:
            os.close(os.open(here / f"count-{task}-{n}", os.O_CREAT | os.O_EXCL))
            break
        except FileExistsError:
            n += 1
    # alternate: every other attempt solves; solve_first N: the first N attempts do.
    solve = n % 2 == 0 if plan.get("alternate") else n < plan["solve_first"]
if plan.get("crash"):
    raise RuntimeError("the agent crashed")
if solve:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n")
"""

VERIFY_ADD = "import calc; assert calc.add(2, 3) == 5, 'add is wrong'"


def write_project(root: Path, plans: dict[str, dict[str, Any]]) -> Path:
    """The fixture project, the agent script and its plan under `root`; returns `root`."""
    fixture = root / "fixtures" / "calc"
    fixture.mkdir(parents=True, exist_ok=True)
    (fixture / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (fixture / "README.md").write_text("# calc\n")
    (root / "agent.py").write_text(AGENT_SCRIPT)
    set_plans(root, plans)
    return root


def set_plans(root: Path, plans: dict[str, dict[str, Any]]) -> None:
    (root / "plan.json").write_text(json.dumps(plans))


def agent_argv(root: Path) -> tuple[str, ...]:
    return (sys.executable, str(root / "agent.py"), "{task_id}", "{workspace}", "{model}")


def suite_json(root: Path, names: list[str], *, suite_id: str = "calc") -> Path:
    """A PVYai task suite, in PVYai's own format, with one task per name."""
    tasks = [
        {
            "id": name,
            "name": f"Task {name}",
            "difficulty": "easy",
            "prompt": "Fix add() in calc.py so that it adds.",
            "workspaceFixture": "fixtures/calc",
            "verificationCommands": [
                {"id": "test", "name": "Run tests", "command": [sys.executable, "-c", VERIFY_ADD]}
            ],
            "expectedChangedFiles": ["calc.py"],
            "forbiddenChangedFiles": ["README.md"],
            "contextChecks": {"requiredFiles": ["calc.py"]},
            "requiredTraceEvents": ["tool:edit_file"],
        }
        for name in names
    ]
    path = root / f"{suite_id}.json"
    document = {"id": suite_id, "name": f"{suite_id} suite", "tasks": tasks}
    path.write_text(json.dumps(document, indent=2))
    return path


def task_cases(root: Path, names: list[str], *, suite: str = "calc") -> list[Case]:
    """The cases `suite_json` describes, built by hand."""
    command = VerificationCommand("test", "Run tests", (sys.executable, "-c", VERIFY_ADD))
    spec = TaskSpec(
        prompt="Fix add() in calc.py so that it adds.",
        workspace=root / "fixtures" / "calc",
        commands=(command,),
        expected_changed_files=("calc.py",),
        forbidden_changed_files=("README.md",),
        context=ContextChecks(required_files=("calc.py",)),
        required_trace_events=("tool:edit_file",),
    )
    return [
        Case(
            id=f"{suite}/{name}",
            suite=suite,
            name=name,
            kind="task",
            format="task-suite",
            source_path=root / f"{suite}.json",
            source_line=4 + i,
            spec=spec,
        )
        for i, name in enumerate(names)
    ]


def options(root: Path, **changes: Any) -> RunOptions:
    values: dict[str, Any] = {
        "agent_command": agent_argv(root),
        "report_dir": root / "report",
        "work_root": root / "work",
        # The agent reads its plan beside the suite, which the OS sandbox hides.
        "isolation": "none",
    }
    values.update(changes)
    return RunOptions(**values)


def statuses(report: Report) -> dict[tuple[str, str | None], str]:
    return {(c.id, c.model): c.status for c in report.cases}


def lines(path: Path) -> list[CaseResult]:
    return [parse_result_line(line) for line in path.read_text().splitlines()]


# -- tests -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_task_cases_pass_and_fail_per_check_and_the_report_dir_is_complete(
    tmp_path: Path,
) -> None:
    plans = {
        "solves": {},
        "gives-up": {"solve": False},
        "no-trace": {"trace": []},
    }
    root = write_project(tmp_path, plans)
    report = assay.run(options(root), cases=task_cases(root, list(plans)))

    by_id = {c.id: c for c in report.cases}
    assert by_id["calc/solves"].status == "pass" and by_id["calc/solves"].score == 1.0
    checks = {c.id: c.status for c in by_id["calc/gives-up"].checks}
    assert by_id["calc/gives-up"].status == "fail"
    assert checks["test"] == "fail"
    no_trace = {c.kind: c.status for c in by_id["calc/no-trace"].checks}
    assert no_trace["command"] == "pass" and no_trace["trace"] == "fail"
    assert report.summary.gate == "fail" and report.summary.passed == 1

    out = root / "report"
    assert {p.name for p in out.iterdir()} >= {
        "report.json",
        "summary.md",
        "junit.xml",
        "results.jsonl",
        "cases",
    }
    assert sorted(r.id for r in lines(out / "results.jsonl")) == sorted(by_id)
    on_disk = Report.model_validate_json((out / "report.json").read_text())
    assert on_disk.run.id == report.run.id and len(on_disk.run.id) == 32
    assert on_disk.run.started_at.endswith("Z") and on_disk.run.finished_at
    transcript = by_id["calc/solves"].attempts[0].transcript
    assert transcript and (out / transcript).is_file()
    assert transcript.startswith("cases/calc/solves/attempt-1/")
    assert not any((root / "work").iterdir())  # every sandbox removed


@pytest.mark.slow
def test_repeats_mark_disagreeing_cases_flaky(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"coin": {"alternate": True}, "steady": {}})
    report = assay.run(options(root, repeat=4), cases=task_cases(root, ["coin", "steady"]))
    coin, steady = report.cases
    assert len(coin.attempts) == 4
    assert [a.status for a in coin.attempts].count("pass") == 2
    assert (coin.status, coin.score, coin.flaky) == ("fail", 0.5, True)
    assert (steady.status, steady.score, steady.flaky) == ("pass", 1.0, False)
    assert report.run.repeat == 4
    assert {p.name for p in (root / "report/cases/calc/coin").iterdir()} == {
        f"attempt-{n}" for n in range(1, 5)
    }


@pytest.mark.slow
def test_the_model_matrix_runs_each_case_per_model(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"t": {"solve_models": ["good"]}})
    run_options = options(root, models=assay.runner.parse_models(["good", "bad,good"]))
    report = assay.run(run_options, cases=task_cases(root, ["t"]))
    assert statuses(report) == {("calc/t", "good"): "pass", ("calc/t", "bad"): "fail"}
    assert report.run.models == ["good", "bad"]
    assert (root / "report/cases/calc/t/good/attempt-1").is_dir()


@pytest.mark.slow
def test_attempts_run_concurrently(tmp_path: Path) -> None:
    names = [f"sleep{i}" for i in range(4)]
    sleep_s = 1.5
    root = write_project(tmp_path, {name: {"sleep": sleep_s} for name in names})
    started = time.monotonic()
    report = assay.run(options(root, concurrency=4), cases=task_cases(root, names))
    elapsed = time.monotonic() - started
    assert report.summary.passed == 4
    assert elapsed < 0.6 * len(names) * sleep_s, elapsed


@pytest.mark.slow
def test_a_timed_out_agent_is_an_error_and_the_others_go_on(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"slow": {"sleep": 30}, "fine": {}, "crash": {"crash": True}})
    started = time.monotonic()
    report = assay.run(
        options(root, timeout_s=1.0, max_errors=5),
        cases=task_cases(root, ["slow", "fine", "crash"]),
    )
    assert time.monotonic() - started < 20
    by_id = {c.id: c for c in report.cases}
    assert by_id["calc/slow"].status == "error"
    assert "timed out after 1s" in by_id["calc/slow"].reason
    assert by_id["calc/fine"].status == "pass"
    # A crashing task agent blocks its task (PVYai): an error, and it stops nothing else.
    crash = by_id["calc/crash"]
    # Its reason is what it said on stderr, as PVYai's is.
    assert crash.status == "error" and crash.reason.startswith("run blocked: Traceback")
    assert "RuntimeError: the agent crashed" in crash.reason
    assert {check.status for check in crash.checks} == {"blocked"}


def test_keep_workspaces_records_the_sandbox(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"t": {}})
    report = assay.run(options(root, keep_workspaces=True), cases=task_cases(root, ["t"]))
    (case,) = report.cases
    assert case.workspace is not None
    assert (
        (Path(case.workspace) / "calc.py")
        .read_text()
        .startswith("def add(a, b):\n    return a + b")
    )


def test_an_unwritable_report_dir_fails_before_anything_runs(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"t": {}})
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="cannot write the report directory"):
        assay.run(options(root, report_dir=blocker / "report"), cases=task_cases(root, ["t"]))
    assert not (root / "started").exists()


def test_an_empty_selection_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no cases found"):
        assay.run(options(tmp_path), cases=[])


# -- model-backed kinds, through registered in-process agents ---------------------------------


class ScriptedVerifier:
    """Answers `keep` at a fixed price; some case names make it fail in a chosen way."""

    def __init__(self, cost_usd: float) -> None:
        self.cost_usd = cost_usd

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        await asyncio.sleep(0)
        if ctx.case.name == "explode":
            raise RuntimeError("plugin bug")
        if ctx.case.name == "no-model":
            raise ModelUnavailable("not in cache (--offline)")
        if ctx.case.name == "bad-judge":
            raise JudgeError("judge answered outside its schema", raw="I think it is fine")
        if ctx.case.name == "agent-error":
            raise AgentError("agent gave no verdict")
        return AgentOutput(verdict="keep", usage=Usage(input_tokens=10, cost_usd=self.cost_usd))


def verify_cases(root: Path, names: list[str]) -> list[Case]:
    source = root / "handler.py"
    source.write_text("def handle(request):\n    return request.body\n")
    spec = VerifySpec(
        given="handler returns the raw body",
        files=(FixtureFile(source, "app/handler.py"),),
        candidate={"title": "unvalidated body", "severity": "medium"},
        expect_verdict="keep",
    )
    return [
        Case(
            id=f"verification/{name}",
            suite="verification",
            name=name,
            kind="verify",
            format="verification",
            source_path=root / f"{name}.json",
            source_line=1,
            spec=spec,
            runtime="scripted",
        )
        for name in names
    ]


@pytest.fixture
def scripted_runtime() -> None:
    register_agent("scripted", lambda options: ScriptedVerifier(cost_usd=0.6))


@pytest.mark.usefixtures("scripted_runtime")
def test_max_cost_skips_cases_once_the_budget_is_spent(tmp_path: Path) -> None:
    cases = verify_cases(tmp_path, ["one", "two", "three"])
    run_options = RunOptions(report_dir=tmp_path / "report", concurrency=1, max_cost_usd=1.0)
    report = assay.run(run_options, cases=cases)
    assert [c.status for c in report.cases] == ["pass", "pass", "skipped"]
    assert report.cases[2].reason == "budget of $1 reached"
    assert report.summary.gate == "fail"
    assert "incomplete: 1 of 3 case(s) not run (budget of $1 reached: 1)" in (
        report.summary.gate_reason
    )
    assert report.summary.cost_usd == pytest.approx(1.2)
    # Cut short by the run, not finished: not in the stream, so --resume would run it.
    assert [r.id for r in lines(tmp_path / "report/results.jsonl")] == [
        "verification/one",
        "verification/two",
    ]


@pytest.mark.usefixtures("scripted_runtime")
def test_a_runtimes_exception_is_recorded_as_its_own_with_the_traceback(tmp_path: Path) -> None:
    """A runtime assay does not ship raising is its bug, said as such (not as assay's)."""
    report = assay.run(
        RunOptions(report_dir=tmp_path / "report", max_errors=1),
        cases=verify_cases(tmp_path, ["explode", "fine"]),
    )
    exploded, fine = report.cases
    assert exploded.status == "error"
    assert exploded.reason.startswith(
        "runtime 'scripted' raised RuntimeError: plugin bug (traceback in "
    )
    trace = tmp_path / "report/cases/verification/explode/attempt-1/traceback.txt"
    assert "RuntimeError: plugin bug" in trace.read_text()
    assert fine.status == "pass"
    assert report.summary.gate == "pass"  # one error tolerated by max_errors=1


@pytest.mark.usefixtures("scripted_runtime")
def test_run_errors_become_error_or_skipped_attempts(tmp_path: Path) -> None:
    names = ["no-model", "bad-judge", "agent-error", "fine"]
    report = assay.run(
        RunOptions(report_dir=tmp_path / "report", max_errors=2),
        cases=verify_cases(tmp_path, names),
    )
    by_name = {c.id.split("/")[1]: c for c in report.cases}
    assert (by_name["no-model"].status, by_name["no-model"].reason) == (
        "skipped",
        "not in cache (--offline)",
    )
    bad_judge = by_name["bad-judge"]
    assert (bad_judge.status, bad_judge.reason) == ("error", "judge answered outside its schema")
    assert bad_judge.judge["raw"] == "I think it is fine"
    assert (tmp_path / "report" / bad_judge.judge["raw_file"]).read_text() == "I think it is fine"
    assert (by_name["agent-error"].status, by_name["agent-error"].reason) == (
        "error",
        "agent gave no verdict",
    )
    assert by_name["fine"].status == "pass"
    assert report.summary.gate == "pass"
    assert (report.summary.errors, report.summary.skipped) == (2, 1)


def test_model_cases_without_credentials_are_skipped_while_tasks_run(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"t": {}})
    fixture = tmp_path / "bug.py"
    fixture.write_text("eval(input())\n")
    review = Case(
        id="security/eval",
        suite="security",
        name="eval",
        kind="review",
        format="review-yaml",
        source_path=tmp_path / "security.yaml",
        source_line=5,
        spec=ReviewSpec(given="eval of input", files=(FixtureFile(fixture, "bug.py"),)),
    )
    (task,) = task_cases(root, ["t"])
    task = Case(**{**task.__dict__, "agent_command": agent_argv(root)})
    run_options = RunOptions(
        report_dir=tmp_path / "report", work_root=tmp_path / "work", isolation="none"
    )
    report = assay.run(run_options, cases=[review, task])
    by_id = {c.id: c for c in report.cases}
    assert by_id["security/eval"].status == "skipped"
    assert "set ANTHROPIC_API_KEY" in by_id["security/eval"].reason
    assert by_id["security/eval"].runtime == "builtin"
    assert by_id["calc/t"].status == "pass"
    assert report.summary.gate == "pass"


def test_a_case_named_past_the_file_name_limit_runs_and_keeps_its_artifacts(
    tmp_path: Path,
) -> None:
    # A name is free text in every upstream format; its artifacts' directory must still fit.
    long_name = "fixes-the-off-by-one-" * 15  # 315 characters
    root = write_project(tmp_path, {long_name: {}})
    report = assay.run(options(root), cases=task_cases(root, [long_name]))
    (case,) = report.cases
    assert case.status == "pass", case.reason
    folders = [p for p in (root / "report" / "cases" / "calc").iterdir() if p.is_dir()]
    assert len(folders) == 1 and len(folders[0].name) <= 255
    assert folders[0].name.startswith(long_name[:200])
    assert any(folders[0].rglob("*.*")), "the attempt's artifacts were written"


def test_the_judges_raw_answer_is_kept_without_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """judge-raw.txt is a CI artifact like the transcripts; a judge had echoed the key."""
    from assay._util import secrets
    from assay.errors import JudgeError
    from assay.runner.attempt import _judge_failure

    secret = "sk-ant-api03-" + "r" * 24
    monkeypatch.setattr(secrets, "_remembered", {secret})
    judge = _judge_failure(JudgeError("bad", raw=f"PASS. {secret}"), tmp_path, tmp_path)
    assert judge["raw"] == "PASS. [redacted]"
    assert (tmp_path / judge["raw_file"]).read_text() == "PASS. [redacted]"
