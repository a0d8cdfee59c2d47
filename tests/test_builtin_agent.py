"""The builtin reviewer/verifier against an in-process scripted model, in real git sandboxes."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assay.agents.builtin import TRANSCRIPT_NAME, BuiltinAgent
from assay.agents.skill import load_skill
from assay.errors import AgentError
from assay.models.base import ModelRequest, ModelResponse
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import (
    Case,
    Expectation,
    FixtureFile,
    ReviewSpec,
    RubricSpec,
    TaskSpec,
    VerifySpec,
)
from assay.workspace.build import build_sandbox
from tests.fakes.scripted_provider import (
    ScriptedProvider,
    reply,
    scripted_provider,
    sequence,
    text,
    tool_call,
)

MODEL = "fake/reviewer"
HANDLER = """\
export async function handler(users: User[], id: string) {
  const user = users.find((u) => u.id === id);
  return user.name;
}
"""
SKILL = """\
---
name: bug-detection
description: Find real bugs.
---
Look for null dereferences.
"""
FINDING = {
    "severity": "high",
    "confidence": "high",
    "title": "user may be undefined",
    "description": "Array.find can return undefined; .name then throws.",
    "location": {"path": "null-access/handler.ts", "startLine": 3},
}


def make_case(tmp_path: Path, kind: str = "review", *, skill: Path | None = None) -> Case:
    fixture = tmp_path / "fixtures" / "handler.ts"
    fixture.parent.mkdir(parents=True, exist_ok=True)
    fixture.write_text(HANDLER, encoding="utf-8")
    files = (FixtureFile(fixture, "null-access/handler.ts"),)
    spec: Any
    if kind == "review":
        spec = ReviewSpec(
            given="code that reads .name on an Array.find() result",
            files=files,
            skill=skill,
            should_find=(Expectation("null access on user.name", severity="high"),),
            repository="acme/shop",
        )
    elif kind == "verify":
        spec = VerifySpec(
            given="verifier keeps a null-access finding",
            files=files,
            candidate={"title": "user may be undefined", "location": {"path": "x"}},
            expect_verdict="keep",
            skill=skill,
        )
    elif kind == "rubric":
        base = tmp_path / "base"
        base.mkdir(exist_ok=True)
        (base / "config.go").write_text("package config\n", encoding="utf-8")
        diff = tmp_path / "input.diff"
        diff.write_text(
            "--- a/config.go\n+++ b/config.go\n@@ -1 +1,2 @@\n package config\n"
            '+const APIKey = "hardcoded"\n',
            encoding="utf-8",
        )
        spec = RubricSpec(
            rubric="Must flag the hardcoded key.",
            diff=diff,
            base=base,
            description="Security: hardcoded API key",
        )
    else:
        spec = TaskSpec(prompt="do it", workspace=tmp_path, commands=())
    return Case(
        id=f"suite/{kind}-case",
        suite="suite",
        name=f"{kind}-case",
        kind=kind,  # type: ignore[arg-type]
        format="review-yaml",
        source_path=tmp_path / "suite.yaml",
        source_line=3,
        spec=spec,
    )


def make_context(
    case: Case, tmp_path: Path, *, timeout_s: float = 60.0, env: dict[str, str] | None = None
) -> AttemptContext:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AttemptContext(
        case=case,
        sandbox=build_sandbox(case, parent=work),
        model=MODEL,
        judge_model="fake/judge",
        timeout_s=timeout_s,
        attempt=0,
        artifacts_dir=tmp_path / "artifacts",
        env=env or {},
    )


def run_agent(ctx: AttemptContext, **agent_options: Any) -> AgentOutput:
    return asyncio.run(BuiltinAgent(options=RunOptions(), **agent_options).run(ctx))


def tool_results(request: ModelRequest) -> list[dict[str, Any]]:
    return [b for b in request.messages[-1].content if b.get("type") == "tool_result"]


def transcript(ctx: AttemptContext) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ctx.artifacts_dir / TRANSCRIPT_NAME).read_text("utf-8"))
    return data


# -- the reviewer ----------------------------------------------------------------------------


def test_multi_turn_review_with_tools_then_submit(tmp_path: Path) -> None:
    skill = tmp_path / "bug-detection.md"
    skill.write_text(SKILL, encoding="utf-8")
    ctx = make_context(make_case(tmp_path, skill=skill), tmp_path)
    script = sequence(
        reply(
            text("Let me look around."),
            tool_call("list_dir", {"path": "null-access"}),
            tool_call("read_file", {"path": "null-access/handler.ts", "start_line": 2}),
        ),
        reply(tool_call("grep", {"pattern": r"\.find\(", "glob": "*.ts"})),
        reply(tool_call("submit_findings", {"findings": [FINDING]})),
    )
    with scripted_provider(script) as fake:
        output = run_agent(ctx)

    assert output.findings == [FINDING]
    assert output.review_text is None
    assert output.usage.input_tokens == 300 and output.usage.output_tokens == 60
    assert len(fake.requests) == 3
    first = fake.requests[0]
    assert (first.purpose, first.cache_prefix, first.temperature) == ("agent", True, 0.0)
    assert first.model == "reviewer"  # the registry strips the provider prefix
    assert first.tool_choice is None
    assert [t.name for t in first.tools] == [
        "read_file",
        "grep",
        "glob",
        "list_dir",
        "submit_findings",
    ]
    assert "Look for null dereferences." in first.system
    assert "name: bug-detection" not in first.system  # front matter stripped
    prompt = first.messages[0].content[0]["text"]
    assert "Repository: acme/shop" in prompt
    # Warden's reviewer sees its fixture commit's message, never the case's `given`.
    assert "Pull request title: add fixture: review-case\n" in prompt
    assert "Pull request description: Analyzing changes in eval\n" in prompt
    assert "Array.find() result" not in prompt
    assert "- null-access/handler.ts" in prompt
    assert "+  return user.name;" in prompt
    listing, reading = tool_results(fake.requests[1])
    assert listing["content"] == "handler.ts" and not listing["is_error"]
    assert "     3\t  return user.name;" in reading["content"]
    assert "     1\t" not in reading["content"]
    (grep,) = tool_results(fake.requests[2])
    assert (
        grep["content"]
        == "null-access/handler.ts:2:   const user = users.find((u) => u.id === id);"
    )

    saved = transcript(ctx)
    assert output.transcript == ctx.artifacts_dir / TRANSCRIPT_NAME
    assert saved["system"] == first.system
    assert [m["role"] for m in saved["messages"]] == ["user", "assistant"] * 3
    assert len(saved["turns"]) == 3 and saved["turns"][0]["usage"]["input_tokens"] == 100
    assert saved["result"] == {"findings": [FINDING]}
    assert saved["error"] is None


def test_turn_limit_forces_submission(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)

    def explore_until_forced(request: ModelRequest) -> ModelResponse:
        if request.tool_choice == "submit_findings":
            return reply(tool_call("submit_findings", {"findings": []}))
        return reply(tool_call("list_dir", {}))

    with scripted_provider(explore_until_forced) as fake:
        output = run_agent(ctx, max_turns=3)
    assert output.findings == []
    assert [r.tool_choice for r in fake.requests] == [None, None, "submit_findings"]


def test_no_submission_within_the_limit_is_an_agent_error(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)
    with scripted_provider(lambda request: reply(tool_call("list_dir", {}))) as fake:
        with pytest.raises(AgentError, match="did not call submit_findings within 2 turns"):
            run_agent(ctx, max_turns=2)
    assert len(fake.requests) == 2
    assert "did not call submit_findings" in transcript(ctx)["error"]


def test_what_a_failed_attempt_spent_is_kept_with_its_error(tmp_path: Path) -> None:
    """The turns before the failure are paid for: the report and `--max-cost` count them
    (an agent that never submitted reported 0 tokens while it spent $1,200)."""
    ctx = make_context(make_case(tmp_path), tmp_path)
    with scripted_provider(lambda request: reply(tool_call("list_dir", {}))):
        with pytest.raises(AgentError) as failed:
            run_agent(ctx, max_turns=2)
    assert failed.value.usage is not None
    assert (failed.value.usage.input_tokens, failed.value.usage.output_tokens) == (200, 40)


def test_invalid_submission_gets_one_corrective_turn(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)
    bad = {**FINDING, "severity": "severe"}
    script = sequence(
        reply(tool_call("submit_findings", {"findings": [bad]})),
        reply(tool_call("submit_findings", {"findings": [FINDING]})),
    )
    with scripted_provider(script) as fake:
        output = run_agent(ctx)
    assert output.findings == [FINDING]
    (correction,) = tool_results(fake.requests[1])
    assert correction["is_error"] is True
    assert "findings.0.severity" in correction["content"]


def test_second_invalid_submission_is_an_agent_error(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)
    with scripted_provider(lambda r: reply(tool_call("submit_findings", {"found": []}))) as fake:
        with pytest.raises(AgentError, match="invalid again after a correction"):
            run_agent(ctx)
    assert len(fake.requests) == 2
    saved = transcript(ctx)
    assert saved["result"] is None and "invalid again" in saved["error"]


def test_invalid_submission_on_the_last_turn_still_gets_its_correction(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)
    script = sequence(
        reply(tool_call("list_dir", {})),
        reply(tool_call("submit_findings", {"findings": "none"})),
        reply(tool_call("submit_findings", {"findings": []})),
    )
    with scripted_provider(script) as fake:
        assert run_agent(ctx, max_turns=2).findings == []
    assert [r.tool_choice for r in fake.requests] == [None, "submit_findings", "submit_findings"]


def test_plain_text_answer_is_nudged_once(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)
    script = sequence(
        reply(text("The code looks fine to me.")),
        reply(tool_call("submit_findings", {"findings": []})),
    )
    with scripted_provider(script) as fake:
        assert run_agent(ctx).findings == []
    nudge = fake.requests[1].messages[-1].content[0]
    assert nudge["type"] == "text" and "submit_findings" in nudge["text"]


def test_empty_answer_is_nudged_without_echoing_an_empty_message(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)
    script = sequence(reply(), reply(tool_call("submit_findings", {"findings": []})))
    with scripted_provider(script) as fake:
        assert run_agent(ctx).findings == []
    assert [m.role for m in fake.requests[1].messages] == ["user", "user"]
    assert len(transcript(ctx)["turns"]) == 2


def test_plain_text_twice_is_an_agent_error(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)
    with scripted_provider(lambda r: reply(text("LGTM"))):
        with pytest.raises(AgentError, match="plain text twice"):
            run_agent(ctx)


def test_tool_errors_go_back_to_the_model_not_up(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)
    script = sequence(
        reply(
            tool_call("read_file", {"path": "../../etc/passwd"}),
            tool_call("grep", {"pattern": "(["}),
            tool_call("delete_everything", {}),
        ),
        reply(tool_call("submit_findings", {"findings": []})),
    )
    with scripted_provider(script) as fake:
        run_agent(ctx)
    results = tool_results(fake.requests[1])
    assert [r["is_error"] for r in results] == [True, True, True]
    assert "outside the repository" in results[0]["content"]
    assert "root:" not in json.dumps(transcript(ctx))


def test_tool_results_past_the_attempts_budget_are_not_run(tmp_path: Path) -> None:
    # Code under review can ask the model to read a large file again and again; the
    # conversation must stay within what the API accepts, and assay's memory with it.
    case = make_case(tmp_path)
    (tmp_path / "fixtures" / "handler.ts").write_text(f"// {'x' * 140}\n" * 2000)
    ctx = make_context(case, tmp_path)
    reads = [tool_call("read_file", {"path": "null-access/handler.ts"}) for _ in range(24)]
    script = sequence(reply(*reads), reply(tool_call("submit_findings", {"findings": []})))
    with scripted_provider(script) as fake:
        run_agent(ctx)
    results = tool_results(fake.requests[1])
    ran = [r for r in results if not r["is_error"]]
    refused = [r for r in results if r["is_error"]]
    assert len(results) == 24 and ran and refused
    assert sum(len(r["content"]) for r in ran[:-1]) < 4 * 1024 * 1024
    assert sum(len(r["content"]) for r in ran) >= 4 * 1024 * 1024
    assert "not run" in refused[0]["content"] and "submit_findings" in refused[0]["content"]


def test_transcript_holds_no_secret_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-ant-test-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    case = make_case(tmp_path)
    (case.spec.files[0].source).write_text(f'const key = "{secret}";\n', encoding="utf-8")  # type: ignore[union-attr]
    ctx = make_context(case, tmp_path, env={"DEPLOY_TOKEN": "tok-9876543210", "MODE": "1"})
    script = sequence(
        reply(tool_call("read_file", {"path": "null-access/handler.ts"})),
        reply(text("tok-9876543210"), tool_call("submit_findings", {"findings": []})),
    )
    with scripted_provider(script):
        run_agent(ctx)
    raw = (ctx.artifacts_dir / TRANSCRIPT_NAME).read_text("utf-8")
    assert secret not in raw and "tok-9876543210" not in raw
    assert "[redacted]" in raw


def test_timeout_is_an_agent_error_with_a_transcript(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path, timeout_s=0.2)

    class Slow(ScriptedProvider):
        async def generate(self, request: ModelRequest) -> ModelResponse:
            await asyncio.sleep(5)
            return await super().generate(request)

    from assay.models.registry import register_provider

    register_provider("slow", lambda: Slow(lambda r: reply(text("late"))))
    ctx = replace(ctx, model="slow/model")
    with pytest.raises(AgentError, match="did not finish within 0.2 s"):
        run_agent(ctx)
    assert "did not finish" in transcript(ctx)["error"]


def test_submit_schema_keeps_every_field() -> None:
    from assay.agents.submissions import ReviewSubmission, submission_tool

    schema = submission_tool("submit_findings", ReviewSubmission).input_schema
    finding = schema["properties"]["findings"]["items"]
    assert set(finding["properties"]) == {
        "severity",
        "confidence",
        "title",
        "description",
        "location",
    }
    assert finding["properties"]["title"]["type"] == "string"
    assert set(finding["required"]) == set(finding["properties"])
    assert schema["required"] == ["findings", "review"]
    assert "title" not in schema and "$defs" not in schema


# -- skills ------------------------------------------------------------------------------------


def test_missing_skill_is_an_agent_error(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path), tmp_path)
    ctx = replace(ctx, skill_override=tmp_path / "nope.md")
    with scripted_provider(sequence()) as fake:
        with pytest.raises(AgentError, match="skill not found"):
            run_agent(ctx)
    assert fake.requests == []


def test_skill_directory_with_front_matter(tmp_path: Path) -> None:
    directory = tmp_path / "security-review"
    directory.mkdir()
    (directory / "SKILL.md").write_text(SKILL, encoding="utf-8")
    for path in (directory, directory / "SKILL.md"):
        skill = load_skill(path)
        assert (skill.name, skill.description) == ("bug-detection", "Find real bugs.")
        assert skill.body == "Look for null dereferences."
    (directory / "SKILL.md").write_text("# Plain\n\nNo front matter.\n", encoding="utf-8")
    assert load_skill(directory).name == "security-review"
    assert load_skill(directory / "SKILL.md").name == "security-review"


def test_skill_with_broken_front_matter(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("---\nname: [unclosed\n---\nbody\n", encoding="utf-8")
    with pytest.raises(AgentError, match="front matter is not valid YAML"):
        load_skill(bad)
    rule = tmp_path / "rule.md"
    rule.write_text("---\nJust a horizontal rule, never closed.\n", encoding="utf-8")
    assert load_skill(rule).body.startswith("---")


# -- the verifier and the rubric reviewer ----------------------------------------------------


@pytest.mark.parametrize("verdict", ["keep", "reject"])
def test_verifier_submits_a_verdict(tmp_path: Path, verdict: str) -> None:
    ctx = make_context(make_case(tmp_path, "verify"), tmp_path)

    def respond(request: ModelRequest) -> ModelResponse:
        prompt = request.messages[0].content[0]["text"]
        assert '"title": "user may be undefined"' in prompt
        if len(request.messages) == 1:
            return reply(tool_call("read_file", {"path": "null-access/handler.ts"}))
        return reply(tool_call("submit_verdict", {"verdict": verdict, "reason": "line 3"}))

    with scripted_provider(respond) as fake:
        output = run_agent(ctx)
    # Warden's verifier does get the `given`, as its pull request's title.
    prompt = fake.requests[0].messages[0].content[0]["text"]
    assert "Pull request title: verifier keeps a null-access finding\n" in prompt
    assert "Pull request description" not in prompt
    assert (output.verdict, output.verdict_reason) == (verdict, "line 3")
    assert output.findings == []
    assert "submit_verdict" in [t.name for t in fake.requests[0].tools]
    assert "verifying one candidate finding" in fake.requests[0].system


def test_rubric_review_carries_text_and_findings(tmp_path: Path) -> None:
    ctx = make_context(make_case(tmp_path, "rubric"), tmp_path)
    script = sequence(
        reply(tool_call("submit_findings", {"findings": [FINDING]})),  # no review: corrected
        reply(
            tool_call("submit_findings", {"review": "Hardcoded key in config.go.", "findings": []})
        ),
    )
    with scripted_provider(script) as fake:
        output = run_agent(ctx)
    assert output.review_text == "Hardcoded key in config.go."
    prompt = fake.requests[0].messages[0].content[0]["text"]
    assert "Review the following git diff for issues." in prompt
    assert '+const APIKey = "hardcoded"' in prompt
    # Cassandra's reviewer is told nothing of the case: neither its description nor its name
    assert "Pull request title" not in prompt
    assert "Security: hardcoded API key" not in prompt and "rubric-case" not in prompt
    assert "review" in tool_results(fake.requests[1])[0]["content"]


def test_task_cases_are_not_for_the_builtin_runtime(tmp_path: Path) -> None:
    case = make_case(tmp_path, "task")
    ctx = AttemptContext(
        case=case,
        sandbox=None,  # type: ignore[arg-type]  # never reached: the kind is refused first
        model=MODEL,
        judge_model=None,
        timeout_s=5,
        attempt=0,
        artifacts_dir=tmp_path,
    )
    with pytest.raises(AgentError, match="not 'task' cases"):
        run_agent(ctx)


@pytest.mark.slow
def test_a_submission_holds_at_most_as_many_findings_as_a_command_agents_answer() -> None:
    from pydantic import ValidationError

    from assay.agents.submissions import MAX_FINDINGS, FindingsSubmission, submission_tool

    finding = {
        "severity": "low",
        "confidence": "low",
        "title": "t",
        "description": "d",
        "location": {"path": "a.py"},
    }
    FindingsSubmission.model_validate({"findings": [finding] * MAX_FINDINGS})
    with pytest.raises(ValidationError, match="at most 1000 items"):
        FindingsSubmission.model_validate({"findings": [finding] * (MAX_FINDINGS + 1)})
    schema = submission_tool("submit_findings", FindingsSubmission).input_schema
    assert schema["properties"]["findings"]["maxItems"] == MAX_FINDINGS  # the model is told
