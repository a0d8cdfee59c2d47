"""`assay regrade`: a run's saved answers graded again, no agent run, through the real SDK.

A run against the loopback fake Messages API keeps each attempt's answer (answer.json);
`assay regrade` then calls only the judge (the fake's requests are told apart by their
tools: an agent is offered `submit_*`, the judge `record_verdict`), and its report differs
from the original only where the judge's answer changed.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.core.files import ATTEMPT_ANSWER_FILE, artifacts_dir
from assay.models import retry
from assay.report.read import read_report
from assay.runner.regrade import TASK_NOT_REGRADED
from tests.fakes import anthropic_api as fakes

API_KEY = "sk-ant-regrade-test-key-0123456789"
MODEL = "anthropic/claude-sonnet-4-6"
FINDING = {
    "severity": "high",
    "confidence": "high",
    "title": "user.name read without a null check",
    "description": "getUser may return null.",
    "location": {"path": "fixtures/handler.ts", "startLine": 2},
}

SUITE = """\
skill: skill.md
evals:
  - name: caught
    given: greet reads name of a maybe-null user
    files:
      - fixtures/handler.ts
    should_find:
      - finding: null access on user.name
        severity: high
  - name: missed
    given: MISSED-CASE greet reads name
    files:
      - fixtures/handler.ts
    should_find:
      - finding: null access on user.name
  - name: steady
    given: STEADY-CASE greet reads name
    files:
      - fixtures/handler.ts
    should_find:
      - finding: null access on user.name
    should_not_find:
      - style remarks
"""

VERIFY = {
    "given": "verifier keeps a real null access",
    "files": ["fixtures/handler.ts"],
    "candidate": {
        "id": "c1",
        "severity": "high",
        "confidence": "high",
        "title": "null access",
        "description": "getUser may return null",
        "location": {"path": "fixtures/handler.ts", "startLine": 2},
    },
    "expect": {"verdict": "keep"},
}


class Judge:
    """The fake's answers: the agent submits, the judge meets each should_find unless the
    case is MISSED-CASE, and flips `flip` (a `given` marker) to unmet once told to."""

    def __init__(self) -> None:
        self.flip: str | None = None

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        tools = tool_names(body)
        if "submit_verdict" in tools:
            return fakes.tool_use_reply(
                "submit_verdict", {"verdict": "keep", "reason": "getUser returns null"}
            )
        if "submit_findings" in tools and '"review"' in json.dumps(body["tools"]):
            review = {"review": "prune() compares seconds with days.", "findings": [FINDING]}
            return fakes.tool_use_reply("submit_findings", review)
        if "submit_findings" in tools:
            # The agent quotes the key: the saved answer must not.
            finding = {**FINDING, "description": f"getUser may return null ({API_KEY})"}
            return fakes.tool_use_reply("submit_findings", {"findings": [finding]})
        if tools == {"submit_review"}:  # the rubric judge, in Cassandra's words
            return fakes.tool_use_reply("submit_review", RUBRIC_VERDICT)
        if tools == {"record_evaluation"}:  # the rubric judge, in assay's: stricter
            return fakes.tool_use_reply(
                "record_evaluation", {**RUBRIC_VERDICT, "score": 2, "met_rubric": False}
            )
        text = json.dumps(body["messages"])
        met = "MISSED-CASE" not in text and not (self.flip and self.flip in text)
        expected = text.count("(required)") + text.count("(optional)")
        forbidden = 1 if "style remarks" in text else 0
        return fakes.tool_use_reply(
            "record_verdict",
            {
                "should_find": [
                    {
                        "index": i,
                        "met": met,
                        "matchedFindingIndex": 0 if met else None,
                        "reasoning": "names the null access" if met else "missed",
                    }
                    for i in range(expected)
                ],
                "should_not_find": [
                    {"index": i, "violated": False, "violatingFindingIndex": None, "reasoning": "-"}
                    for i in range(forbidden)
                ],
            },
        )


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools", [])}


JUDGE_TOOLS = ({"record_verdict"}, {"record_evaluation"}, {"submit_review"})


def is_judge(body: dict[str, Any]) -> bool:
    return tool_names(body) in JUDGE_TOOLS


RUBRIC_VERDICT = {
    "score": 4,
    "rationale": "names the unit mismatch",
    "findings": ["seconds vs days"],
    "met_rubric": True,
}
RUBRIC_DIFF = """\
diff --git a/prune.py b/prune.py
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/prune.py
@@ -0,0 +1,2 @@
+def old(age_seconds, keep_days):
+    return age_seconds > keep_days
"""


@pytest.fixture()
def judge() -> Judge:
    return Judge()


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch, judge: Judge) -> Iterator[Any]:
    async def no_sleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(retry, "sleep", no_sleep)
    with fakes.FakeAnthropic(api_key=API_KEY, responder=judge) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Review cases and a verify case under `evals/`, the working directory at the root."""
    evals = tmp_path / "evals"
    (evals / "fixtures").mkdir(parents=True)
    (evals / "verification").mkdir()
    (tmp_path / "assay.toml").write_text("")
    (evals / "skill.md").write_text("Review the code for bugs.\n")
    (evals / "fixtures" / "handler.ts").write_text(
        "export function greet(id: string) {\n  return getUser(id).name;\n}\n"
    )
    (evals / "bugs.yaml").write_text(SUITE)
    (evals / "verification" / "_suite.yaml").write_text("skill: skill.md\n")
    (evals / "verification" / "keep-it.json").write_text(json.dumps(VERIFY))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_original(project: Path, *extra: str) -> Path:
    code = main(["run", "evals", "--model", MODEL, "--report-dir", "original", *extra])
    assert code in (0, 1)
    return project / "original"


def comparable(case: dict[str, Any]) -> dict[str, Any]:
    """A case as two gradings of one answer may differ only by clocks and token use (a
    task's command checks time themselves: `durationS`)."""

    def timeless(item: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in item.items() if k not in ("duration_s", "usage")}
        kept["checks"] = [{k: v for k, v in c.items() if k != "durationS"} for c in item["checks"]]
        return kept

    return {**timeless(case), "attempts": [timeless(a) for a in case["attempts"]]}


def cases_of(report_dir: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((report_dir / "report.json").read_text())
    return {case["id"]: case for case in data["cases"]}


def test_regrade_calls_only_the_judge_and_changes_only_the_flipped_verdict(
    fake: Any, judge: Judge, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original_dir = run_original(project)
    ran = fake.bodies()
    assert any(not is_judge(body) for body in ran)  # the agents ran in the original run
    original = read_report(original_dir)
    statuses = {c.id: c.status for c in original.cases}
    assert statuses == {
        "skill/caught": "pass",
        "skill/missed": "fail",
        "skill/steady": "pass",
        "skill/keep-it": "pass",
    }
    # Every attempt kept the answer its grader read, redacted.
    for case in original.cases:
        saved = artifacts_dir(original_dir, case.id, case.model, 0) / ATTEMPT_ANSWER_FILE
        answer = json.loads(saved.read_text())
        assert API_KEY not in saved.read_text()
        if case.kind == "review":
            assert answer["findings"][0]["title"] == FINDING["title"]
        else:
            assert (answer["verdict"], answer["findings"]) == ("keep", [])

    judge.flip = "greet reads name of a maybe-null user"  # the judge changes its mind on one
    before = len(ran)
    capsys.readouterr()
    assert main(["regrade", "original"]) == 1  # two of four pass now: under the 0.75 gate
    out = capsys.readouterr().out
    asked = fake.bodies()[before:]
    assert len(asked) == 3 and all(is_judge(body) for body in asked)  # no agent, no verify judge
    regraded_dir = project / "original-regraded"
    regraded = read_report(regraded_dir)
    assert regraded.run.regraded_from == original.run.id != regraded.run.id
    assert f"re-graded run {original.run.id} as run {regraded.run.id}" in out
    assert "regraded_from" not in json.loads((original_dir / "report.json").read_text())["run"]
    for name in ("summary.md", "junit.xml", "report.html"):
        assert (regraded_dir / name).is_file()
    said = f"re-graded from run {original.run.id}: no agent ran"
    assert said in (regraded_dir / "summary.md").read_text() and said in out

    before_cases, after_cases = cases_of(original_dir), cases_of(regraded_dir)
    assert before_cases.keys() == after_cases.keys()
    flipped = after_cases.pop("skill/caught")
    was = before_cases.pop("skill/caught")
    assert (was["status"], flipped["status"]) == ("pass", "fail")
    assert flipped["findings"] == was["findings"]  # the same answer, judged otherwise
    assert flipped["checks"][0]["status"] == "fail" and was["checks"][0]["status"] == "pass"
    for case_id, case in after_cases.items():
        assert comparable(case) == comparable(before_cases[case_id]), case_id
    # This run's cost is the judge's alone; the original's included the agents'.
    assert regraded.summary.tokens.input < original.summary.tokens.input
    # The transcripts came along, under the same relative paths, for the viewer.
    transcript = regraded.cases[0].attempts[0].transcript
    assert transcript and (regraded_dir / transcript).is_file()

    capsys.readouterr()
    assert main(["compare", "original", "original-regraded"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("head re-grades base's saved answers (assay regrade)")
    assert "newly failing  skill/caught" in text
    assert main(["compare", "original", "original-regraded", "--json"]) == 0
    comparison = json.loads(capsys.readouterr().out)
    changes = {c["id"]: c["change"] for c in comparison["changes"]}
    assert changes == {
        "skill/caught": "newly_failing",
        "skill/missed": "still_failing",
        "skill/steady": "still_passing",
        "skill/keep-it": "still_passing",
    }


TASK_AGENT = """\
import sys
from pathlib import Path

Path(sys.argv[1], "calc.py").write_text("def add(a, b):\\n    return a + b\\n")
"""


def add_task_suite(project: Path) -> None:
    """A PVYai task whose agent fixes calc.py, checked by a command."""
    evals = project / "evals"
    (evals / "fixtures" / "calc").mkdir(parents=True)
    (evals / "fixtures" / "calc" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "agent.py").write_text(TASK_AGENT)
    check = "import calc; assert calc.add(2, 3) == 5"
    task = {
        "id": "fix-add",
        "name": "Fix add",
        "difficulty": "easy",
        "prompt": "Fix add() in calc.py so that it adds.",
        "workspaceFixture": "fixtures/calc",
        "verificationCommands": [
            {"id": "test", "name": "tests", "command": [sys.executable, "-c", check]}
        ],
        "expectedChangedFiles": ["calc.py"],
    }
    suite = {"id": "calc", "name": "calc suite", "tasks": [task]}
    (evals / "calc.json").write_text(json.dumps(suite))


def test_what_cannot_be_regraded_is_skipped_saying_why_and_the_suite_is_read_as_it_is_now(
    fake: Any, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_task_suite(project)
    agent = f"{sys.executable} {project / 'agent.py'} {{workspace}}"
    original_dir = run_original(project, "--runtime", "builtin", "--agent-command", agent)
    original = read_report(original_dir)
    assert {c.id: c.status for c in original.cases}["calc/fix-add"] == "pass"
    # The task's deterministic record is kept too, though its checks cannot run from it.
    task_answer = artifacts_dir(original_dir, "calc/fix-add", MODEL, 0) / ATTEMPT_ANSWER_FILE
    assert json.loads(task_answer.read_text())["exit_code"] == 0

    # Since the run: one answer lost, one case removed, one expectation rewritten.
    lost = artifacts_dir(original_dir, "skill/steady", MODEL, 0) / ATTEMPT_ANSWER_FILE
    lost.unlink()
    suite = (project / "evals" / "bugs.yaml").read_text()
    suite = suite.replace("- name: missed\n    given: MISSED-CASE", "- name: gone\n    given: X")
    suite = suite.replace(
        "null access on user.name\n        severity: high",
        "user.name is read from a user that may be null\n        severity: high",
    )
    (project / "evals" / "bugs.yaml").write_text(suite)

    before = len(fake.bodies())
    regrade = ["regrade", "original", "--report-dir", "again", "-t", "skill/*", "-t", "calc"]
    assert main(regrade) == 0
    asked = fake.bodies()[before:]
    assert len(asked) == 1 and is_judge(asked[0])  # `caught` only: the rest cannot be graded
    assert "user.name is read from a user that may be null" in json.dumps(asked[0]["messages"])
    cases = {c.id: c for c in read_report(project / "again").cases}
    assert cases["skill/caught"].status == "pass"
    assert cases["skill/keep-it"].status == "pass"  # verify: graded again in code
    task = cases["calc/fix-add"]
    assert (task.status, task.reason) == ("skipped", TASK_NOT_REGRADED)
    gone = cases["skill/missed"]
    assert gone.status == "skipped" and "no case skill/missed in the suites loaded" in gone.reason
    steady = cases["skill/steady"]
    assert steady.status == "skipped"
    assert "no saved answer" in steady.reason and "assay run" in steady.reason
    assert [a.status for a in steady.attempts] == ["skipped"]


def test_the_original_report_directory_is_never_the_output(
    fake: Any, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original_dir = run_original(project)
    report_before = (original_dir / "report.json").read_bytes()
    capsys.readouterr()
    assert main(["regrade", "original", "--report-dir", str(original_dir)]) == 2
    assert "never replaces the run it grades" in capsys.readouterr().err
    assert (original_dir / "report.json").read_bytes() == report_before


def test_a_directory_without_a_report_is_a_clear_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["regrade", "nowhere"]) == 2
    err = capsys.readouterr().err
    assert "nowhere" in err and "Traceback" not in err


def test_a_task_whose_workspace_was_kept_is_checked_again_there(
    fake: Any, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_task_suite(project)
    agent = f"{sys.executable} {project / 'agent.py'} {{workspace}}"
    work = project / "work"
    work.mkdir()
    keep = ["--keep-workspaces", "--work-root", str(work), "-t", "calc"]
    original_dir = run_original(project, "--agent-command", agent, *keep)
    original = cases_of(original_dir)["calc/fix-add"]
    assert original["status"] == "pass" and original["workspace"]

    before = len(fake.bodies())
    assert main(["regrade", "original"]) == 0
    assert fake.bodies()[before:] == []  # task checks call no model
    again = cases_of(project / "original-regraded")["calc/fix-add"]
    assert comparable(again) == comparable(original)  # `workspace` too: checked where it was

    # The suite now also expects a file the agent never wrote: the kept workspace says so.
    suite = json.loads((project / "evals" / "calc.json").read_text())
    suite["tasks"][0]["expectedChangedFiles"] = ["calc.py", "notes.md"]
    (project / "evals" / "calc.json").write_text(json.dumps(suite))
    assert main(["regrade", "original", "--report-dir", "stricter"]) == 1
    stricter = cases_of(project / "stricter")["calc/fix-add"]
    assert stricter["status"] == "fail"
    changed = next(c for c in stricter["checks"] if c["id"] == "changed_files")
    assert changed["missingFiles"] == ["notes.md"]

    # An answer edited to name another directory does not get the task's commands run there.
    answer_file = artifacts_dir(original_dir, "calc/fix-add", MODEL, 0) / ATTEMPT_ANSWER_FILE
    answer = json.loads(answer_file.read_text())
    elsewhere = project / "mine"
    shutil.copytree(original["workspace"], elsewhere)
    answer_file.write_text(json.dumps({**answer, "workspace": str(elsewhere)}))
    assert main(["regrade", "original", "--report-dir", "edited"]) == 1
    edited = cases_of(project / "edited")["calc/fix-add"]
    assert edited["status"] == "skipped" and "is not a sandbox assay built" in edited["reason"]
    answer_file.write_text(json.dumps(answer))

    # Without the workspace there is nothing to check.
    shutil.rmtree(original["workspace"])
    assert main(["regrade", "original", "--report-dir", "gone"]) == 1  # nothing was scored
    gone = cases_of(project / "gone")["calc/fix-add"]
    assert gone["status"] == "skipped" and "is gone" in gone["reason"]


def add_rubric_suite(project: Path) -> None:
    """A Cassandra rubric manifest with one case (judged by Cassandra's prompt by default)."""
    rubric = project / "rubric"
    (rubric / "cases" / "pruner").mkdir(parents=True)
    (rubric / "cases" / "pruner" / "input.diff").write_text(RUBRIC_DIFF)
    manifest = {
        "name": "rubric",
        "description": "rubric cases",
        "cases": [
            {
                "id": "pruner",
                "name": "Units",
                "description": "a pruner compares seconds with days",
                "rubric": "The review MUST say that seconds are compared with days.",
                "fixture_path": "cases/pruner",
            }
        ],
    }
    (rubric / "rubric.json").write_text(json.dumps(manifest))


def test_the_judge_prompt_asked_for_is_todays_and_the_rubric_judge_sees_the_diff_again(
    fake: Any, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_rubric_suite(project)
    assert main(["run", "rubric", "--model", MODEL, "--report-dir", "original"]) == 0
    original = cases_of(project / "original")["rubric/pruner"]
    assert original["status"] == "pass" and original["judge"]["prompt_version"].startswith(
        "cassandra-judge"
    )
    saved = artifacts_dir(project / "original", "rubric/pruner", MODEL, 0) / ATTEMPT_ANSWER_FILE
    assert json.loads(saved.read_text())["review_text"] == "prune() compares seconds with days."

    before = len(fake.bodies())
    assert main(["regrade", "original", "--judge-prompt", "assay"]) == 1
    asked = fake.bodies()[before:]
    assert [tool_names(body) for body in asked] == [{"record_evaluation"}]
    prompt = json.dumps(asked[0]["messages"])
    assert "prune() compares seconds with days." in prompt  # the saved review
    assert "age_seconds > keep_days" in prompt  # the diff, from the fixture as it is now
    again = cases_of(project / "original-regraded")["rubric/pruner"]
    assert again["status"] == "fail" and again["judge"]["prompt_version"] == "rubric-judge.v1"


def test_an_answer_is_kept_whole_or_not_at_all_and_read_back_only_as_a_regular_file(
    tmp_path: Path,
) -> None:
    from assay.runner.answers import MAX_ANSWER_BYTES, AnswerUnavailable, load_answer, save_answer
    from assay.subject import AgentOutput

    odd = AgentOutput(findings=[{"title": "a\ud800b", "count": 3}], review_text="é ✓")
    save_answer(tmp_path / "odd", odd)
    back = load_answer(tmp_path / "odd").output
    assert back.findings == [{"title": "a\ufffdb", "count": 3}] and back.review_text == "é ✓"

    huge = AgentOutput(review_text="x" * (MAX_ANSWER_BYTES + 1))
    path = save_answer(tmp_path / "huge", huge)
    assert path.stat().st_size < 1000
    with pytest.raises(AnswerUnavailable, match="larger than 8,388,608 bytes"):
        load_answer(tmp_path / "huge")

    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / ATTEMPT_ANSWER_FILE).symlink_to(tmp_path / "odd" / ATTEMPT_ANSWER_FILE)
    with pytest.raises(AnswerUnavailable, match="symbolic link"):
        load_answer(tmp_path / "linked")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / ATTEMPT_ANSWER_FILE).write_text('{"format": "assay.answer.v9"}')
    with pytest.raises(AnswerUnavailable, match="not an assay.answer.v1 answer"):
        load_answer(tmp_path / "broken")
