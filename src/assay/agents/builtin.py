"""assay's own reviewer and verifier: the `builtin` runtime (Warden's `claude`/`pi` aliases).

- review and rubric cases: the reviewer gets the system prompt plus the skill (the stable,
  cacheable prefix) and the PR context in the first user message, explores the sandbox
  with read-only tools, and ends with `submit_findings` (rubric cases add a written review);
- verify cases: the verifier gets the candidate finding, the same tools, and ends with
  `submit_verdict`.

The whole conversation is written to `transcript.json` in the attempt's artifacts
directory, also when the attempt fails.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from assay._util.prompt_text import cap_diff, fenced
from assay.agents.asks import ASKS, Shown, ask_for
from assay.agents.loop import DEFAULT_MAX_TURNS, ToolLoop
from assay.agents.skill import Skill, load_skill
from assay.agents.submissions import (
    SUBMIT_FINDINGS,
    SUBMIT_VERDICT,
    FindingsSubmission,
    ReviewSubmission,
    VerdictSubmission,
    dump_findings,
    submission_tool,
)
from assay.agents.tools import SandboxTools, ToolLimits
from assay.agents.transcript import Transcript
from assay.errors import AgentError, RunError
from assay.models.names import DEFAULT_MODEL
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import ReviewSpec, RubricSpec, VerifySpec
from assay.suites.warden_skill import skill_at_run

__all__ = ["TRANSCRIPT_NAME", "BuiltinAgent"]

TRANSCRIPT_NAME = "transcript.json"


@dataclass(frozen=True)
class _Plan:
    """What one attempt asks: its prompts and the typed tool it must end with."""

    system: str
    first_message: str
    submit_name: str
    submission: type[BaseModel]


class BuiltinAgent:
    """The builtin reviewer/verifier over the model layer (Anthropic or OpenAI-compatible)."""

    def __init__(
        self,
        *,
        options: RunOptions,
        max_turns: int = DEFAULT_MAX_TURNS,
        tool_limits: ToolLimits | None = None,
    ) -> None:
        self.options = options
        self.max_turns = max_turns
        self.tool_limits = tool_limits

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        plan = _plan(ctx)
        model = ctx.model or DEFAULT_MODEL
        transcript = Transcript(case_id=ctx.case.id, kind=ctx.case.kind, model=model)
        loop = ToolLoop(
            model=model,
            system=plan.system,
            first_message=plan.first_message,
            tools=SandboxTools(ctx.sandbox.path, limits=self.tool_limits),
            submit=submission_tool(plan.submit_name, plan.submission),
            submission=plan.submission,
            transcript=transcript,
            options=self.options,
            # A Warden category's harness `maxTurns` (eval.ts / _suite.yaml) is the case's own.
            max_turns=ctx.case.max_turns or self.max_turns,
            sample=ctx.attempt,
        )
        path = ctx.artifacts_dir / TRANSCRIPT_NAME
        result: BaseModel | None = None
        error: str | None = None
        deadline = asyncio.timeout(ctx.timeout_s)
        try:
            async with deadline:
                result = await loop.run()
        except TimeoutError as exc:
            if not deadline.expired():  # a timeout from below (an SDK), not the case's deadline
                error = f"{type(exc).__name__}: {exc}"
                raise
            error = f"the builtin agent did not finish within {ctx.timeout_s:g} s"
            raise AgentError(error, usage=loop.usage) from None
        except BaseException as exc:  # cancellation too: the transcript says why it ended
            error = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, RunError) and exc.usage is None:
                exc.usage = loop.usage  # the turns before it are paid for: the attempt says so
            raise
        finally:
            transcript.write(
                path,
                usage=loop.usage.model_dump(),
                result=result.model_dump(exclude_none=True) if result is not None else None,
                error=error,
                environments=[ctx.env],
            )
        return _output(result, usage=loop.usage, transcript=path)


def _output(result: BaseModel, **common: Any) -> AgentOutput:
    if isinstance(result, VerdictSubmission):
        return AgentOutput(verdict=result.verdict, verdict_reason=result.reason, **common)
    assert isinstance(result, FindingsSubmission)
    review = result.review if isinstance(result, ReviewSubmission) else None
    return AgentOutput(findings=dump_findings(result), review_text=review, **common)


def _plan(ctx: AttemptContext) -> _Plan:
    """The kind's task as `asks.ASKS` words it, inside the PR context, ending with the tool
    that takes the answer."""
    spec = ctx.case.spec
    if isinstance(spec, ReviewSpec):
        skill = _skill(skill_at_run(spec.skill, ctx.skill_override))
        submit = f"Follow your instructions, then call `{SUBMIT_FINDINGS}` with your findings."
        # Titled as Warden titles it (the fixture commit's message), never with `given`.
        message = _message(ctx, title=None, repository=spec.repository, answer=submit)
        return _Plan(_system("reviewer.md", skill), message, SUBMIT_FINDINGS, FindingsSubmission)
    if isinstance(spec, RubricSpec):
        skill = _skill(skill_at_run(None, ctx.skill_override))
        submit = (
            f"When you are done, call `{SUBMIT_FINDINGS}` with your written review "
            "(`review`) and the individual issues (`findings`)."
        )
        # Cassandra's reviewer is asked to review the case's input.diff as written (not git's
        # rendering of the applied change, which drops what .gitignore ignores and adds
        # `index` lines), and told nothing of the case: no title from its name or description.
        message = _message(
            ctx, title=None, repository=None, answer=submit, case_diff=spec.raw_diff()
        )
        return _Plan(_system("reviewer.md", skill), message, SUBMIT_FINDINGS, ReviewSubmission)
    if isinstance(spec, VerifySpec):
        skill = _skill(skill_at_run(spec.skill, ctx.skill_override))
        submit = f"Then call `{SUBMIT_VERDICT}`."
        message = _message(ctx, title=spec.given, repository=spec.repository, answer=submit)
        return _Plan(_system("verifier.md", skill), message, SUBMIT_VERDICT, VerdictSubmission)
    raise AgentError(
        f"the builtin runtime runs review, verify and rubric cases, not {ctx.case.kind!r} "
        "cases; give task suites an agent command"
    )


def _skill(path: Path | None) -> Skill | None:
    return load_skill(path) if path is not None else None


@functools.cache
def _base_prompt(prompt_file: str) -> str:
    """A shipped prompt: package data, which does not change while assay runs."""
    return resources.files("assay.agents").joinpath("prompts", prompt_file).read_text("utf-8")


def _system(prompt_file: str, skill: Skill | None) -> str:
    base = _base_prompt(prompt_file)
    if skill is None:
        return base.strip()
    header = f"# Instructions: {skill.name}"
    if skill.description:
        header += f"\n\n{skill.description}"
    return f"{base.strip()}\n\n{header}\n\n{skill.body}"


def _message(
    ctx: AttemptContext,
    *,
    title: str | None,
    repository: str | None,
    answer: str,
    case_diff: str | None = None,
) -> str:
    """The first user message: the pull request (repository, title and description, changed
    files, and its diff unless the task shows it), then the task. The title is `title`, else
    the one `Ask.title` gives the pull request (a review case's: Warden's); with neither (a
    rubric case) there is no title line."""
    sandbox = ctx.sandbox
    # `case_diff`: the diff as the case gives it (a rubric case's), else git's of the sandbox
    shown = sandbox.diff if case_diff is None else case_diff
    diff = fenced(
        cap_diff(shown, hint="read the changed files for the rest") or "(empty diff)", "diff"
    )
    ask = ask_for(ctx.case, Shown(diff_at="above", diff=diff, answer=answer))
    repo = sandbox.repository or repository
    changed = [str(name) for name in sandbox.changed_files]
    parts = []
    if repo:
        parts.append(f"Repository: {repo}")
    shown_title = title or ask.title
    if shown_title:
        parts.append(f"Pull request title: {shown_title}")
    if ask.body:
        parts.append(f"Pull request description: {ask.body}")
    parts.append("Changed files:\n" + ("\n".join(f"- {name}" for name in changed) or "(none)"))
    if not ASKS[ctx.case.kind].shows_diff:
        parts.append(f"The pull request's diff (`git diff main...eval`):\n\n{diff}")
    parts.append(ask.task)
    return "\n\n".join(parts)
