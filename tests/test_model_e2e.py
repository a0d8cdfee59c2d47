"""The builtin agent and the judges end to end: real sandboxes, the real SDKs, loopback fakes.

Every model call goes through `assay.models.generate` and the real `anthropic` (or
`openai`) SDK to a fake server on 127.0.0.1. One responder plays both parts, routed by
the system prompt: the judge's prompt gets a verdict, anything else is the agent's turn
(numbered by how many assistant messages the conversation already holds).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from assay.agents.builtin import TRANSCRIPT_NAME, BuiltinAgent
from assay.errors import JudgeError
from assay.grading.base import Grade
from assay.grading.findings_judge import FindingsJudge
from assay.grading.rubric_judge import RubricJudge
from assay.grading.verify_grader import VerdictGrader
from assay.models import retry
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, Expectation, FixtureFile, ReviewSpec, RubricSpec, VerifySpec
from assay.workspace.build import build_sandbox
from tests.fakes.anthropic_api import (
    FakeAnthropic,
    dropped,
    malformed_tool_reply,
    overloaded,
    rate_limited,
    server_error,
    text_reply,
    tool_use_reply,
)
from tests.fakes.openai_api import FakeOpenAI, chat_tool_reply

MODEL = "anthropic/claude-sonnet-4-6"
API_KEY = "sk-ant-e2e-fake-key-0123456789"
HANDLER = """\
import { db } from "./db";

export async function showUser(id: string) {
  const users = await db.users();
  const user = users.find((u) => u.id === id);
  return `<h1>${user.name}</h1>`;
}
"""
SKILL = "---\nname: bug-detection\ndescription: Find bugs.\n---\nReport real bugs only.\n"
NULL_ACCESS = {
    "severity": "high",
    "confidence": "high",
    "title": "user may be undefined",
    "description": "find() returns undefined for an unknown id; user.name then throws.",
    "location": {"path": "null-access/handler.ts", "startLine": 6},
}
NAMING = {
    "severity": "low",
    "confidence": "medium",
    "title": "variable u is poorly named",
    "description": "Use a descriptive name.",
    "location": {"path": "null-access/handler.ts", "startLine": 5},
}

AgentTurn = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class Script:
    """The fake's responder: agent turns in order; judge answers by judge attempt."""

    agent: list[AgentTurn]
    judge: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        system = body["system"][0]["text"]
        answered = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if system.startswith("You are the judge"):
            return self.judge[answered]
        return self.agent[answered](body)


def call(name: str, tool_input: Any) -> AgentTurn:
    return lambda body: tool_use_reply(name, tool_input)


def submit(*findings: dict[str, Any]) -> AgentTurn:
    return call("submit_findings", {"findings": list(findings)})


def findings_verdict(
    met: list[int | None], violated: list[int | None] | None = None
) -> dict[str, Any]:
    """`met[i]`: the finding index matching should_find[i] (None: unmet); same for violated."""
    return tool_use_reply(
        "record_verdict",
        {
            "should_find": [
                {"index": i, "met": at is not None, "matchedFindingIndex": at, "reasoning": "r"}
                for i, at in enumerate(met)
            ],
            "should_not_find": [
                {
                    "index": i,
                    "violated": at is not None,
                    "violatingFindingIndex": at,
                    "reasoning": "r",
                }
                for i, at in enumerate(violated or [None])
            ],
        },
    )


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    async def no_sleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(retry, "sleep", no_sleep)
    with FakeAnthropic(api_key=API_KEY) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def review_case(
    tmp_path: Path,
    *,
    should_find: tuple[Expectation, ...] = (Expectation("null access on user.name", "high"),),
    should_not_find: tuple[str, ...] = ("style, formatting, or naming issues",),
) -> Case:
    fixture = tmp_path / "fixtures" / "null-access" / "handler.ts"
    fixture.parent.mkdir(parents=True, exist_ok=True)
    fixture.write_text(HANDLER, encoding="utf-8")
    skill = tmp_path / "skills" / "bug-detection.md"
    skill.parent.mkdir(exist_ok=True)
    skill.write_text(SKILL, encoding="utf-8")
    spec = ReviewSpec(
        given="code that accesses properties on an Array.find() result without a null check",
        files=(FixtureFile(fixture, "null-access/handler.ts"),),
        skill=skill,
        should_find=should_find,
        should_not_find=should_not_find,
        repository="acme/shop",
    )
    return _case("review", spec, tmp_path)


def _case(kind: str, spec: Any, tmp_path: Path) -> Case:
    return Case(
        id=f"bug-detection/{kind}",
        suite="bug-detection",
        name=kind,
        kind=kind,  # type: ignore[arg-type]
        format="review-yaml",
        source_path=tmp_path / "suite.yaml",
        source_line=5,
        spec=spec,
    )


def attempt(case: Case, tmp_path: Path, *, model: str = MODEL, name: str = "a") -> AttemptContext:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AttemptContext(
        case=case,
        sandbox=build_sandbox(case, parent=work),
        model=model,
        judge_model=model,
        timeout_s=60,
        attempt=0,
        artifacts_dir=tmp_path / "artifacts" / name,
    )


def run_case(ctx: AttemptContext, grader: Any = FindingsJudge) -> tuple[AgentOutput, Grade]:
    async def both() -> tuple[AgentOutput, Grade]:
        output = await BuiltinAgent(options=RunOptions()).run(ctx)
        return output, await grader(options=RunOptions()).grade(ctx, output)

    return asyncio.run(both())


def explore_then(final: AgentTurn) -> list[AgentTurn]:
    """A realistic agent: look around, read the file, grep, then answer."""
    return [
        call("list_dir", {"path": "."}),
        call("read_file", {"path": "null-access/handler.ts"}),
        call("grep", {"pattern": r"\.find\(", "glob": "*.ts"}),
        final,
    ]


# -- review cases -------------------------------------------------------------------------------


def test_review_case_passes(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.responder = Script(explore_then(submit(NULL_ACCESS)), [findings_verdict([0])])
    ctx = attempt(review_case(tmp_path), tmp_path)
    output, grade = run_case(ctx)

    assert output.findings == [NULL_ACCESS]
    assert (grade.status, grade.score) == ("pass", 1.0)
    assert [c.status for c in grade.checks] == ["pass", "pass", "pass"]
    assert grade.judge["model"] == MODEL and grade.judge["prompt_version"] == "findings-judge.v3"
    assert output.usage.input_tokens == 4 * 40 and grade.usage.input_tokens == 40
    assert output.usage.cost_usd is not None and output.usage.cost_usd > 0

    bodies = fake.bodies()
    assert len(bodies) == 5
    first, judge = bodies[0], bodies[-1]
    assert first["model"] == "claude-sonnet-4-6"
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "Report real bugs only." in first["system"][0]["text"]
    assert first["tool_choice"] == {"type": "auto"}
    assert [t["name"] for t in first["tools"]][-1] == "submit_findings"
    assert "Repository: acme/shop" in first["messages"][0]["content"][0]["text"]
    assert judge["tool_choice"] == {"type": "tool", "name": "record_verdict"}
    read_result = bodies[2]["messages"][-1]["content"][0]
    assert read_result["type"] == "tool_result"
    assert "     6\t  return `<h1>${user.name}</h1>`;" in read_result["content"]
    grep_result = bodies[3]["messages"][-1]["content"][0]
    assert grep_result["content"].startswith("null-access/handler.ts:5:")


def test_review_case_fails_when_the_bug_is_missed(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.responder = Script(explore_then(submit()), [findings_verdict([None])])
    output, grade = run_case(attempt(review_case(tmp_path), tmp_path))
    assert output.findings == []
    assert (grade.status, grade.score) == ("fail", 0.0)
    assert grade.reason.startswith("should_find[0]:")


def test_severity_mismatch_fails(fake: FakeAnthropic, tmp_path: Path) -> None:
    medium = {**NULL_ACCESS, "severity": "medium"}
    fake.responder = Script(explore_then(submit(medium)), [findings_verdict([0])])
    _, grade = run_case(attempt(review_case(tmp_path), tmp_path))
    assert grade.status == "fail"
    severity = next(c for c in grade.checks if c.kind == "severity")
    assert severity.status == "fail" and "expected severity high" in severity.message


def test_should_not_find_violation_fails(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.responder = Script(
        explore_then(submit(NULL_ACCESS, NAMING)), [findings_verdict([0], violated=[1])]
    )
    _, grade = run_case(attempt(review_case(tmp_path), tmp_path))
    assert grade.status == "fail"
    assert [c.id for c in grade.checks if c.status == "fail"] == ["should_not_find[0]"]


def test_optional_assertion_unmet_passes(fake: FakeAnthropic, tmp_path: Path) -> None:
    case = review_case(
        tmp_path,
        should_find=(
            Expectation("null access on user.name", "high"),
            Expectation("the unescaped HTML (XSS)", required=False),
        ),
    )
    fake.responder = Script(explore_then(submit(NULL_ACCESS)), [findings_verdict([0, None])])
    _, grade = run_case(attempt(case, tmp_path))
    assert (grade.status, grade.score) == ("pass", 1.0)
    assert grade.checks[2].id == "should_find[1]" and grade.checks[2].status == "fail"


# -- verification and rubric cases -----------------------------------------------------------


@pytest.mark.parametrize("decision", ["keep", "reject"])
def test_verification_keep_and_reject(fake: FakeAnthropic, tmp_path: Path, decision: str) -> None:
    base = review_case(tmp_path).spec
    assert isinstance(base, ReviewSpec)
    spec = VerifySpec(
        given="verifier keeps a concrete null-access finding",
        files=base.files,
        candidate={"id": "c1", **NULL_ACCESS},
        expect_verdict="keep",
    )
    verdict = {"verdict": decision, "reason": "users.find can miss; nothing checks it"}
    fake.responder = Script(
        [call("read_file", {"path": "null-access/handler.ts"}), call("submit_verdict", verdict)]
    )
    output, grade = run_case(attempt(_case("verify", spec, tmp_path), tmp_path), VerdictGrader)
    assert output.verdict == decision
    assert grade.status == ("pass" if decision == "keep" else "fail")
    candidate_prompt = fake.bodies()[0]["messages"][0]["content"][0]["text"]
    assert '"title": "user may be undefined"' in candidate_prompt


def test_rubric_case(fake: FakeAnthropic, tmp_path: Path) -> None:
    base = tmp_path / "case" / "base"
    (base / "internal").mkdir(parents=True)
    (base / "internal" / "AGENTS.md").write_text("Secrets come from the environment.\n")
    (base / "config.go").write_text("package config\n")
    diff = tmp_path / "case" / "input.diff"
    diff.write_text(
        "--- a/config.go\n+++ b/config.go\n@@ -1 +1,3 @@\n package config\n+\n"
        '+const APIKey = "sk-live-1234"\n'
    )
    spec = RubricSpec(
        rubric="The agent MUST identify the hardcoded API key in config.go.",
        diff=diff,
        base=base,
        description="Security: Hardcoded API Key",
    )
    review = {
        "review": "config.go hardcodes an API key; read it from the environment.",
        "findings": [
            {
                **NULL_ACCESS,
                "title": "hardcoded API key",
                "location": {"path": "config.go", "startLine": 3},
            }
        ],
    }
    evaluation = {
        "score": 4,
        "rationale": "Caught the key.",
        "findings": ["good"],
        "met_rubric": True,
    }
    fake.responder = Script(
        [call("read_file", {"path": "internal/AGENTS.md"}), call("submit_findings", review)],
        [tool_use_reply("record_evaluation", evaluation)],
    )
    output, grade = run_case(attempt(_case("rubric", spec, tmp_path), tmp_path), RubricJudge)
    assert output.review_text == review["review"]
    assert (grade.status, grade.score) == ("pass", 0.75)
    prompt = fake.bodies()[0]["messages"][0]["content"][0]["text"]
    assert "Review the following git diff for issues." in prompt
    assert (
        "Secrets come from the environment."
        in fake.bodies()[1]["messages"][-1]["content"][0]["content"]
    )
    judge_prompt = fake.bodies()[-1]["messages"][0]["content"][0]["text"]
    assert "hardcodes an API key" in judge_prompt and "MUST identify" in judge_prompt


# -- confinement -------------------------------------------------------------------------------


def test_reads_outside_the_sandbox_are_refused_and_visible(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    ctx = attempt(review_case(tmp_path), tmp_path)
    (ctx.sandbox.path / "notes").symlink_to("/etc/passwd")
    (ctx.sandbox.path / "etc").symlink_to("/etc", target_is_directory=True)
    fake.responder = Script(
        [
            call("read_file", {"path": "../../etc/passwd"}),
            call("read_file", {"path": "/etc/passwd"}),
            call("read_file", {"path": "notes"}),
            call("list_dir", {"path": "etc"}),
            submit(),
        ],
        [findings_verdict([None])],
    )
    run_case(ctx)
    saved = json.loads((ctx.artifacts_dir / TRANSCRIPT_NAME).read_text())
    results = [
        block
        for message in saved["messages"]
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert len(results) == 4
    assert all(r["is_error"] and "path is outside the repository" in r["content"] for r in results)
    raw = json.dumps(saved) + json.dumps(fake.bodies())
    assert "root:x:0:0" not in raw
    assert API_KEY not in raw


# -- retries and judge failures -----------------------------------------------------------------


def test_transient_failures_are_retried_with_identical_results(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.responder = Script(explore_then(submit(NULL_ACCESS)), [findings_verdict([0])])
    clean_output, clean_grade = run_case(attempt(review_case(tmp_path), tmp_path, name="clean"))
    clean_calls = fake.calls

    for fault in (rate_limited(retry_after="1"), overloaded(), server_error(), dropped()):
        fake.inject(fault)
    output, grade = run_case(attempt(review_case(tmp_path), tmp_path, name="faulty"))
    assert fake.calls == 2 * clean_calls + 4
    assert output.findings == clean_output.findings
    assert (grade.status, grade.score, grade.judge) == (
        clean_grade.status,
        clean_grade.score,
        clean_grade.judge,
    )
    assert [c.model_dump() for c in grade.checks] == [c.model_dump() for c in clean_grade.checks]


def test_judge_garbage_twice_is_an_error(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.responder = Script(
        [submit(NULL_ACCESS)],
        [
            malformed_tool_reply("record_verdict", '{"should_find": [{"index": 0, "met"'),
            text_reply("The agent did well, I would say it passes."),
        ],
    )
    with pytest.raises(JudgeError) as caught:
        run_case(attempt(review_case(tmp_path), tmp_path))
    assert caught.value.raw is not None
    assert '"met"' in caught.value.raw and "I would say it passes" in caught.value.raw
    retry_turn = fake.bodies()[-1]["messages"][-1]["content"][0]
    assert retry_turn["type"] == "tool_result" and retry_turn["is_error"] is True
    assert "not valid JSON" in retry_turn["content"]


# -- the OpenAI-compatible path ---------------------------------------------------------------


def test_review_case_through_an_openai_compatible_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The same review, agent and judge, over chat.completions (vLLM, Ollama, OpenRouter...)."""
    verdict = findings_verdict([0])["content"][0]["input"]

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        system = body["messages"][0]["content"]
        answered = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if system.startswith("You are the judge"):
            return chat_tool_reply(("record_verdict", verdict))
        turns = [
            ("read_file", {"path": "null-access/handler.ts", "start_line": 5, "end_line": 6}),
            ("submit_findings", {"findings": [NULL_ACCESS]}),
        ]
        return chat_tool_reply(turns[answered])

    with FakeOpenAI(api_key=API_KEY, responder=respond) as server:
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        output, grade = run_case(
            attempt(review_case(tmp_path), tmp_path, model="openai/qwen-coder")
        )
        bodies = server.bodies()

    assert output.findings == [NULL_ACCESS]
    assert (grade.status, grade.score) == ("pass", 1.0)
    assert len(bodies) == 3 and bodies[0]["model"] == "qwen-coder"
    tool_message = bodies[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "     6\t  return `<h1>${user.name}</h1>`;" in tool_message["content"]
    assert bodies[2]["tool_choice"]["function"]["name"] == "record_verdict"
    assert output.usage.cost_usd is None  # an unpriced local model: no guessed cost
