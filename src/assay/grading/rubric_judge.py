"""The rubric judge: scores a free review 1-5 against a Cassandra case's rubric.

Two prompts (`--judge-prompt`); Cassandra suites default to Cassandra's own, so scores
compare with a team's Cassandra baselines:

- `cassandra`: Cassandra's judge system prompt (its 1-5 scale) and its message layout
  `RUBRIC:` / `DIFF:` (the case's input.diff, byte for byte) / `REVIEW TO EVALUATE:`
  (everything the reviewer said: its review, then its findings), asked as Cassandra's
  Anthropic provider asks it: the `submit_review` tool
  ("Returns the structured code review.") with `EvaluationResultSchema` as Go sends it (no
  `additionalProperties`), 8192 tokens; one call, the answer read as leniently as
  Cassandra reads it (see cassandra_verdict.py);
- `assay`: assay's prompt, which also shows the reviewer's structured findings, with the
  strict typed verdict through `record_evaluation` (a score outside 1..5 goes back to the
  judge once).

A judge call that fails (the API, after its retries) is a JudgeError: the case is
`error`, and Cassandra's results file says `judge failed`. The case score is
(score - 1) / 4 (the score clamped to 1..5) and the case passes when the judge says the
rubric was met.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from assay._util.json_schema import tool_input_schema
from assay._util.prompt_text import cap_diff, fenced
from assay.core.checks import Check
from assay.errors import JudgeError, ModelError
from assay.grading.base import Grade
from assay.grading.judge_verdicts import RubricVerdict
from assay.grading.judging import JudgeAnswer, JudgeCall, load_judge_prompt
from assay.grading.verdict_consistency import CONTRADICTION_KEY, contradiction
from assay.models.base import ToolSpec
from assay.models.names import DEFAULT_MODEL
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, RubricSpec
from assay.upstream.cassandra.verdict import CassandraVerdict, read_cassandra_verdict

__all__ = [
    "CASSANDRA_PROMPT_VERSION",
    "PROMPT_VERSION",
    "RubricJudge",
    "cassandra_prompt",
    "judge_prompt_for",
    "rubric_prompt",
    "whole_review",
]

PROMPT_VERSION = "rubric-judge.v1"
CASSANDRA_PROMPT_VERSION = "cassandra-judge.v2"
"""v2: the verdict tool is Cassandra's `submit_review` (v1 named assay's `record_evaluation`)."""
_CALL = JudgeCall("record_evaluation", RubricVerdict)


def _cassandra_tool() -> ToolSpec:
    """Cassandra's structured-output tool: `EvaluationResultSchema` reduced to what its
    Anthropic provider sends (properties and required, no `additionalProperties`), keys in
    the order Go writes them (a map's sorted)."""
    properties = tool_input_schema(RubricVerdict)["properties"]
    return ToolSpec(
        name="submit_review",
        description="Returns the structured code review.",
        input_schema={
            "properties": {
                name: {
                    key: " ".join(value.split()) if key == "description" else value
                    for key, value in sorted(properties[name].items())
                }
                for name in sorted(properties)
            },
            "required": list(RubricVerdict.model_fields),
            "type": "object",
        },
    )


_CASSANDRA_CALL = JudgeCall(
    "submit_review",
    CassandraVerdict,
    reader=read_cassandra_verdict,
    tool_spec=_cassandra_tool(),
    max_tokens=8192,  # Cassandra's llm.DefaultStructuredMaxTokens
)


def judge_prompt_for(case: Case, options: RunOptions) -> Literal["assay", "cassandra"]:
    """`--judge-prompt`, else the case format's own: Cassandra's for Cassandra's formats."""
    if options.judge_prompt is not None:
        return options.judge_prompt
    return "cassandra" if case.format in ("rubric-manifest", "rubric-dir") else "assay"


class RubricJudge:
    """Grader for rubric cases."""

    def __init__(self, *, options: RunOptions) -> None:
        self.options = options

    async def grade(self, ctx: AttemptContext, output: AgentOutput) -> Grade:
        spec = ctx.case.spec
        if not isinstance(spec, RubricSpec):
            raise JudgeError(f"the rubric judge grades rubric cases, not {ctx.case.kind!r}")
        model = ctx.judge_model or ctx.model or DEFAULT_MODEL
        try:
            version, answer = await self._ask(ctx, spec, output, model)
        except ModelError as exc:  # the judge's, not the agent's: say so in the results
            raise JudgeError(f"the judge call failed: {exc}") from exc
        verdict = answer.verdict
        status: Literal["pass", "fail"] = "pass" if verdict.met_rubric else "fail"
        met = "met" if verdict.met_rubric else "not met"
        reason = f"judge score {verdict.score}/5, rubric {met}"
        flag = contradiction(verdict.score, verdict.met_rubric)
        return Grade(
            status=status,
            score=(min(max(verdict.score, 1), 5) - 1) / 4,
            reason=f"{reason}; {flag} (met_rubric decides)" if flag else reason,
            checks=[
                Check(
                    id="rubric",
                    kind="rubric",
                    status=status,
                    message=verdict.rationale,
                    expected=spec.rubric,
                )
            ],
            judge={
                "model": model,
                "prompt_version": version,
                "attempts": answer.attempts,
                "verdict": verdict.model_dump(),
                "usage": answer.usage.model_dump(),
                **({CONTRADICTION_KEY: flag} if flag else {}),
            },
            usage=answer.usage,
        )

    async def _ask(
        self, ctx: AttemptContext, spec: RubricSpec, output: AgentOutput, model: str
    ) -> tuple[str, JudgeAnswer[Any]]:
        """The prompt version asked, and the judge's answer."""
        if judge_prompt_for(ctx.case, self.options) == "cassandra":
            answer: JudgeAnswer[Any] = await _CASSANDRA_CALL.ask(
                model=model,
                system=load_judge_prompt(CASSANDRA_PROMPT_VERSION),
                prompt=cassandra_prompt(spec, output),
                options=self.options,
                sample=ctx.attempt,
            )
            return CASSANDRA_PROMPT_VERSION, answer
        answer = await _CALL.ask(
            model=model,
            system=load_judge_prompt(PROMPT_VERSION),
            prompt=rubric_prompt(spec.rubric, ctx.sandbox.diff, output),
            options=self.options,
            sample=ctx.attempt,
        )
        return PROMPT_VERSION, answer


def cassandra_prompt(spec: RubricSpec, output: AgentOutput) -> str:
    """Cassandra's judge message: the rubric, the case's input.diff byte for byte (carriage
    returns kept, bytes that are not UTF-8 as Go sends them), everything the reviewer said."""
    diff = spec.raw_diff()
    review = whole_review(output)
    return f"RUBRIC:\n{spec.rubric}\n\nDIFF:\n{diff}\n\nREVIEW TO EVALUATE:\n{review}"


def whole_review(output: AgentOutput) -> str:
    """Everything the reviewer said, as Cassandra's judge gets its reviewer's whole final
    text: the written review, then the findings as a fenced JSON block.

    Every runtime hands the findings over apart from the review text (the builtin agent's
    `findings`, a command agent's answer file or JSON lines, the JSON block a CLI preset's
    final message held), so the text alone would hide them from the judge.
    """
    review = output.review_text or ""
    if not output.findings:
        return review
    block = fenced(json.dumps({"findings": output.findings}, indent=2, ensure_ascii=False), "json")
    return f"{review}\n\n{block}" if review else block


def rubric_prompt(rubric: str, diff: str, output: AgentOutput) -> str:
    """What the judge reads: the rubric, the diff under review, and the reviewer's output."""
    review = (output.review_text or "").strip() or "(the reviewer wrote no review text)"
    findings = json.dumps(output.findings, indent=2, ensure_ascii=False)
    return (
        f"## Rubric\n\n{rubric.strip()}\n\n"
        f"## The diff under review\n\n{fenced(cap_diff(diff), 'diff')}\n\n"
        f"## The reviewer's written review\n\n{fenced(review, 'markdown')}\n\n"
        f"## The reviewer's findings ({len(output.findings)})\n\n"
        f"{fenced(findings, 'json')}\n\n"
        "Call record_evaluation with your evaluation."
    )
