"""summary.md, junit.xml and the PVYai report, rendered from report models."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from assay.report.gate.stats import summarize
from assay.report.junit import render_junit
from assay.report.markdown import escape_markdown, neutralise_mentions, render_summary
from assay.report.model import Attempt, CaseResult, Check, Report, RunInfo, Source, Usage
from assay.report.pvyai import benchmark_report
from assay.suites.case import Case, TaskSpec, VerificationCommand


def _case(id: str, status: str, **fields: Any) -> CaseResult:
    suite = id.split("/")[0]
    score = {"pass": 1.0, "fail": 0.0}.get(status)
    return CaseResult.model_validate(
        {
            "id": id,
            "suite": suite,
            "kind": fields.pop("kind", "task"),
            "source": Source(path=f"evals/{suite}.json", line=fields.pop("line", 7)),
            "status": status,
            "score": score,
            "duration_s": 1.25,
            **fields,
        }
    )


def _report(cases: list[CaseResult], *, models: list[str] | None = None) -> Report:
    return Report(
        run=RunInfo(
            id="run123",
            started_at="2025-01-01T00:00:00Z",
            assay_version="0.1.0",
            threshold=0.75,
            models=models or [],
        ),
        summary=summarize(cases, threshold=0.75, max_errors=0, duration_s=12.0),
        cases=cases,
    )


COMMAND_FAIL = Check.model_validate(
    {
        "id": "test",
        "name": "Run tests",
        "kind": "command",
        "status": "fail",
        "message": "exit code 1",
        "exitCode": 1,
        "outputTail": "FAILED tests/test_x.py::test_y - ```boom``` </details> @octocat\n",
    }
)
CHANGED_OK = Check.model_validate(
    {
        "id": "changed_files",
        "name": "Changed files",
        "kind": "changed_files",
        "status": "pass",
        "message": "all expected changed",
        "expectedFiles": ["a.py"],
        "actualFiles": ["a.py"],
        "missingFiles": [],
        "unexpectedFiles": [],
    }
)


def _mixed_report() -> Report:
    return _report(
        [
            _case("tasks/add-health", "pass", checks=[CHANGED_OK]),
            _case(
                "tasks/fix-nil",
                "fail",
                reason="test: exit code 1 <script>alert(1)</script> | cc @maintainer",
                checks=[COMMAND_FAIL, CHANGED_OK],
            ),
            _case("tasks/slow", "error", reason="agent timed out after 600s"),
            _case("review/sqli", "skipped", kind="review", reason="no ANTHROPIC_API_KEY"),
            _case("review/xss", "skipped", kind="review", reason="no ANTHROPIC_API_KEY"),
            _case(
                "review/flaky|case",
                "fail",
                kind="review",
                flaky=True,
                attempts=[Attempt(status="pass", score=1), Attempt(status="fail", score=0)],
                usage=Usage(input_tokens=1200, output_tokens=300, cost_usd=0.0123),
            ),
        ]
    )


# --- markdown ----------------------------------------------------------------------------


def test_markdown_summary_has_headline_table_and_sections() -> None:
    text = render_summary(_mixed_report())
    assert text.startswith("## ❌ Evaluation Results\n")
    assert (
        "**Score 0.33** (threshold 0.75) · gate **fail**: "
        "score 0.33 &lt; threshold 0.75; errors 1 &gt; max-errors 0"
    ) in text
    assert "6 cases: 1 passed, 2 failed, 1 error, 2 skipped" in text
    assert "| `review` | 3 | 0 | 1 | 0 | 2 | 0.00 |" in text
    assert "| `tasks` | 3 | 1 | 1 | 1 | 0 | 0.50 |" in text
    assert "### Flaky cases" in text and "✅ ❌" in text
    assert "### Failures" in text and "### Errors" in text
    assert text.count("<details>") == len(re.findall("^</details>$", text, re.M)) == 3
    assert "- no ANTHROPIC\\_API\\_KEY: 2 cases (`review/sqli`, `review/xss`)" in text
    assert "tokens 1,200 in / 300 out · cost $0.0123 · 12.0s" in text
    assert "- ❌ `test` (command)\n  - result: exit code 1" in text


def test_markdown_escapes_untrusted_text_and_neutralises_mentions() -> None:
    text = render_summary(_mixed_report())
    assert "<script>" not in text
    assert "&lt;script&gt;alert\\(1\\)" in text or "&lt;script&gt;alert(1)" in text
    assert "@maintainer" not in text and "@\u200dmaintainer" in text
    assert "@octocat" not in text and "@\u200doctocat" in text
    # The command output holds ``` and </details>: its fence is longer, so it cannot close it.
    assert "````text\nFAILED tests/test_x.py::test_y - ```boom``` </details>" in text
    # A pipe in a case id cannot break the table or the summary.
    assert "<code>review/flaky|case</code>" in text
    assert "\\| case" not in text.split("### Flaky")[0]


def test_a_bidirectional_override_in_model_output_reaches_no_summary() -> None:
    report = _mixed_report()
    report.cases[1].reason = "looks fine \u202e;)x(lave\u202c done"
    text = render_summary(report)
    assert "\u202e" not in text and "\u202c" not in text
    assert "looks fine ;)x(lave done" in text


def test_escape_helpers() -> None:
    assert neutralise_mentions("ping @alice and @org/team, mail a@b") == (
        "ping @\u200dalice and @\u200dorg/team, mail a@\u200db"
    )
    assert escape_markdown("title\nwith `code` | pipe & <b> *x*") == (
        "title with \\`code\\` \\| pipe &amp; &lt;b&gt; \\*x\\*"
    )


def test_reasons_cannot_start_markdown_blocks() -> None:
    for reason, shown in [("# big", "\\# big"), ("1. item", "1\\. item"), ("- item", "\\- item")]:
        text = render_summary(_report([_case("tasks/a", "fail", reason=reason)]))
        assert f"\n{shown}\n" in text


def test_markdown_truncates_to_max_bytes_with_a_note() -> None:
    cases = [
        _case(f"tasks/case-{i:03}", "fail", reason="r" * 400, checks=[COMMAND_FAIL])
        for i in range(300)
    ]
    report = _report(cases)
    full = render_summary(report)
    assert len(full.encode()) > 65_000
    assert "Truncated" not in full
    short = render_summary(report, max_bytes=65_000, title="PR evals")
    assert len(short.encode()) <= 65_000
    assert short.startswith("## ❌ PR evals\n")
    match = re.search(r"Truncated: (\d+) more entries omitted", short)
    assert match is not None
    shown = short.count("<summary>")
    assert shown + int(match.group(1)) == 300
    # Only whole blocks: every <details> is closed.
    assert short.count("<details>") == len(re.findall("^</details>$", short, re.M)) == shown
    assert "| `tasks` | 300 |" in short and "run `run123`" in short


def test_markdown_for_a_passing_run() -> None:
    text = render_summary(_report([_case("tasks/a", "pass"), _case("tasks/b", "pass")]))
    assert text.startswith("## ✅ Evaluation Results")
    assert "gate **pass**: score 1.00 &gt;= threshold 0.75" in text
    assert "### Failures" not in text and "Truncated" not in text


def _crowding_case(findings: int) -> CaseResult:
    """A review case whose agent answered `findings` findings of 2,000 characters each."""
    return _case(
        "review/agent-case",
        "fail",
        kind="review",
        reason="should_find[0]: missed",
        findings=[
            {"severity": "low", "title": f"finding {i} " + "A" * 2000, "location": {"path": "a.ts"}}
            for i in range(findings)
        ],
    )


def test_one_case_with_a_thousand_findings_hides_no_other_failure() -> None:
    from assay.action.comment import comment_body

    others = [_case(f"other/case-{i}", "fail", reason=f"OTHER FAILURE {i}") for i in range(5)]
    report = _report([_crowding_case(1000), *others])
    comment = comment_body(report, marker="<!-- m -->", run_url=None)
    for text in (render_summary(report), render_summary(report, max_bytes=60_000), comment):
        assert all(f"OTHER FAILURE {i}" in text for i in range(5))
        assert "finding 9 " in text and "finding 10 " not in text  # ten are listed
        assert "- … and 990 more (report.json has them all)" in text
        assert "Truncated" not in text


def test_an_entry_too_large_to_fit_is_left_out_and_the_next_ones_still_are_listed() -> None:
    huge = [
        Check(id=f"c{i}", kind="command", status="fail", message="m" * 2000) for i in range(100)
    ]
    cases = [
        _case("tasks/a-first", "fail", reason="FIRST"),
        _case("tasks/b-huge", "fail", checks=huge),
        _case("tasks/c-last", "fail", reason="LAST"),
    ]
    text = render_summary(_report(cases), max_bytes=60_000)
    assert len(text.encode()) <= 60_000
    assert "FIRST" in text and "LAST" in text and "<code>tasks/b-huge</code>" not in text
    assert "Truncated: 1 more entries omitted" in text


def _suites_report(count: int, name_chars: int) -> Report:
    cases = [
        _case(f"s{i:04d}/c", "fail", reason="failed").model_copy(
            update={"suite": f"suite-{i:04d}-" + "x" * name_chars}
        )
        for i in range(count)
    ]
    return _report(cases)


@pytest.mark.slow
def test_the_verdict_survives_a_suite_table_of_any_size() -> None:
    from assay.action.comment import COMMENT_LIMIT, comment_body

    for report in (_suites_report(1200, 60), _suites_report(35, 1990)):
        comment = comment_body(report, marker="<!-- m -->", run_url="https://example.invalid/r")
        summaries = (render_summary(report, max_bytes=60_000), render_summary(report))
        for text in (comment, *summaries):
            assert "## ❌ Evaluation Results" in text and "**Score 0.00**" in text
            assert "x" * 200 not in text  # long suite names are cut in the table
        assert len(comment) < COMMENT_LIMIT
        assert comment.rstrip().endswith("(https://example.invalid/r)</sub>")
    big = comment_body(_suites_report(1200, 60), marker="<!-- m -->", run_url=None)
    shown = big.count("| `suite-")
    assert f"{1200 - shown} more suites are not shown here" in big


def test_issue_references_in_untrusted_text_are_neutralised() -> None:
    from assay.action.comment import comment_body

    assert neutralise_mentions("#1 owner/repo#2 org#3 GH-4 gh-5, a#b C#") == (
        "#\u200d1 owner/repo#\u200d2 org#\u200d3 GH-\u200d4 gh-\u200d5, a#b C#"
    )
    reason = "see #12, octo/repo#34 and GH-56"
    report = _report([_case("tasks/a", "fail", reason=reason, checks=[COMMAND_FAIL])])
    comment = comment_body(report, marker="<!-- m -->", run_url=None)
    for text in (render_summary(report), comment):
        assert not re.search(r"#\d|GH-\d", text), text
        assert "#\u200d12" in text and "octo/repo#\u200d34" in text
        assert "### Failures" in text  # assay's own Markdown is untouched


# --- junit -------------------------------------------------------------------------------


def test_junit_parses_and_points_at_the_suite_file() -> None:
    report = _mixed_report()
    report.cases[1].reason += " \x00\x1b[31m bad \ud800 \ufffe chars, kept: \t é 😀"
    root = ET.fromstring(render_junit(report))
    assert root.tag == "testsuites"
    assert root.attrib["tests"] == "6" and root.attrib["failures"] == "2"
    assert root.attrib["errors"] == "1" and root.attrib["skipped"] == "2"
    suites = {s.attrib["name"]: s for s in root.findall("testsuite")}
    assert set(suites) == {"tasks", "review"}
    cases = {c.attrib["name"]: c for c in root.iter("testcase")}
    failed = cases["tasks/fix-nil"]
    assert failed.attrib["classname"] == "tasks"
    assert (failed.attrib["file"], failed.attrib["line"]) == ("evals/tasks.json", "7")
    assert failed.attrib["time"] == "1.250"
    failure = failed.find("failure")
    assert failure is not None
    assert failure.attrib["message"].startswith("test: exit code 1 <script>")
    assert "[fail] test (command)\n  result: exit code 1" in (failure.text or "")
    assert "\x00" not in (failure.text or "") and "\x1b" not in failure.attrib["message"]
    assert "\ufffe" not in failure.attrib["message"]
    assert failure.attrib["message"].endswith("chars, kept: \t é 😀")
    assert cases["tasks/slow"].find("error") is not None
    skipped = cases["review/sqli"].find("skipped")
    assert skipped is not None and skipped.attrib["message"] == "no ANTHROPIC_API_KEY"
    assert list(cases["tasks/add-health"]) == []


def test_junit_names_matrix_cases_by_model() -> None:
    cases = [
        _case("tasks/a", "pass", model="anthropic/claude-sonnet-4-6"),
        _case("tasks/a", "fail", model="openai/gpt-4.1", reason="r"),
    ]
    root = ET.fromstring(render_junit(_report(cases, models=[c.model or "" for c in cases])))
    names = [c.attrib["name"] for c in root.iter("testcase")]
    assert names == ["tasks/a [anthropic/claude-sonnet-4-6]", "tasks/a [openai/gpt-4.1]"]


# --- pvyai -------------------------------------------------------------------------------


def _task_spec_case(case_id: str, tmp: str = "/fixtures/app") -> Case:
    spec = TaskSpec(
        prompt="p",
        workspace=Path(tmp),
        commands=(VerificationCommand(id="test", name="Run tests", argv=("go", "test")),),
        expected_changed_files=("a.py",),
    )
    return Case(
        id=case_id,
        suite="tasks",
        name=case_id,
        kind="task",
        format="task-suite",
        source_path=Path("evals/tasks.json"),
        source_line=7,
        spec=spec,
    )


def test_pvyai_benchmark_report_layout() -> None:
    cases = [_task_spec_case(f"tasks/{name}") for name in ("add-health", "fix-nil", "slow")]
    report = benchmark_report(_mixed_report(), cases, suite_id="tasks")
    assert list(report) == ["contract", "suiteId", "ok", "summary", "tasks"]
    assert (report["contract"], report["suiteId"], report["ok"]) == (
        "pvyai.agenteval.report.v1",
        "tasks",
        False,
    )
    assert report["summary"] == {
        "totalTasks": 3,
        "passedTasks": 1,
        "failedTasks": 1,
        "blockedTasks": 0,
        "errorTasks": 1,
    }
    tasks = {t["taskId"]: t for t in report["tasks"]}
    assert list(tasks["add-health"]) == [
        "taskId",
        "workspacePath",
        "fixturePath",
        "agent",
        "report",
    ]
    assert tasks["add-health"]["fixturePath"] == "/fixtures/app"
    assert tasks["add-health"]["agent"] == {"exitCode": -1}
    passed = tasks["add-health"]["report"]
    assert list(passed) == [
        "contract",
        "suiteId",
        "taskId",
        "status",
        "ok",
        "summary",
        "changedFiles",
        "results",
    ]
    assert passed["changedFiles"] == ["a.py"]
    assert passed["results"] == [
        {
            "id": "changed_files",
            "name": "Changed files",
            "kind": "changed_files",
            "status": "pass",
            "message": "all expected changed",
            "expectedFiles": ["a.py"],
            "actualFiles": ["a.py"],
        }
    ]
    command = tasks["fix-nil"]["report"]["results"][0]
    assert (command["id"], command["kind"], command["exitCode"]) == ("test", "command", 1)
    assert "outputTail" not in command  # assay's own fields stay in report.json
    # An error with no checks: the sandbox could not be built (PVYai's errorReport).
    slow = tasks["slow"]
    message = "workspace materialization failed: agent timed out after 600s"
    assert slow["report"]["status"] == "error" and slow["report"]["changedFiles"] is None
    assert slow["report"]["results"] == [
        {
            "id": "benchmark",
            "name": "Benchmark harness",
            "kind": "changed_files",
            "status": "error",
            "message": message,
        }
    ]
    assert slow["report"]["error"] == message
    assert slow["agent"] == {"exitCode": -1, "error": "agent timed out after 600s"}
    assert (slow["workspacePath"], slow["fixturePath"]) == ("", "")


def test_pvyai_skipped_task_is_blocked_with_its_reason() -> None:
    report = _report([_case("tasks/a", "skipped", reason="interrupted")])
    (task,) = benchmark_report(report, [_task_spec_case("tasks/a")], suite_id="tasks")["tasks"]
    assert task["report"]["status"] == "blocked"
    assert [(r["id"], r["status"], r["message"]) for r in task["report"]["results"]] == [
        ("test", "blocked", "run blocked: interrupted"),
        ("changed_files", "blocked", "run blocked: interrupted"),
    ]
