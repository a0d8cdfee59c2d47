"""The builtin agent's tool-use loop: ask the model, run its tool calls, until it submits.

The conversation ends only through a typed submit tool. Its rules:

- at most `max_turns` model turns; on the last one the submit tool is forced;
- an invalid submission gets one corrective turn (the validation message comes back as
  an error tool result), a second invalid one is an AgentError;
- a plain-text answer gets one nudge, a second one is an AgentError (which names the
  invalid input of an earlier submission, if there was one);
- once the attempt's tool results reach `ToolLimits.attempt_max_result_chars`, further
  tool calls are not run: the model is told to submit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from assay import models
from assay._util.json_schema import describe_validation_error
from assay.agents.tools import SandboxTools
from assay.agents.transcript import Transcript
from assay.core.usage import Usage, sum_usage
from assay.errors import AgentError
from assay.models.base import INVALID_JSON_KEY, Message, ModelRequest, ModelResponse, ToolSpec
from assay.options import RunOptions

__all__ = ["DEFAULT_MAX_TURNS", "AGENT_MAX_TOKENS", "ToolLoop"]

DEFAULT_MAX_TURNS = 8
AGENT_MAX_TOKENS = 8192
"""Room for a long review with many findings in one submit call."""

SubmissionT = TypeVar("SubmissionT", bound=BaseModel)


@dataclass
class ToolLoop(Generic[SubmissionT]):
    """One conversation that must end in a valid `submit` call parsed as `submission`."""

    model: str
    system: str
    first_message: str
    tools: SandboxTools
    submit: ToolSpec
    submission: type[SubmissionT]
    transcript: Transcript
    options: RunOptions
    max_turns: int = DEFAULT_MAX_TURNS
    sample: int = 0
    """The attempt index (see ModelRequest.sample)."""
    usages: list[Usage] = field(default_factory=list, init=False)
    _messages: list[Message] = field(default_factory=list, init=False)
    _result_chars: int = field(default=0, init=False)
    """What the tool results of this attempt add up to so far."""

    @property
    def usage(self) -> Usage:
        return sum_usage(self.usages)

    async def run(self) -> SubmissionT:
        tool_specs = (*self.tools.specs(), self.submit)
        self.transcript.start(system=self.system, tools=tool_specs)
        self._add(Message("user", ({"type": "text", "text": self.first_message},)))
        submit = self.submit.name
        allowed_turns = self.max_turns
        nudged = corrected = False
        last_rejection: str | None = None
        turn = 0
        while turn < allowed_turns:
            turn += 1
            response = await self._ask(tool_specs, forced=turn >= allowed_turns)
            if response.content:  # an empty assistant message is not valid input to the APIs
                self._add(Message("assistant", tuple(response.content)))
            calls = response.tool_uses()
            if not calls:
                if nudged:
                    raise AgentError(self._never_submitted(last_rejection))
                nudged = True
                allowed_turns = max(allowed_turns, turn + 1)
                self._add(Message("user", ({"type": "text", "text": self._nudge()},)))
                continue
            results, submitted, rejection = await self._run_calls(calls)
            if submitted is not None:
                return submitted
            if rejection is not None:
                last_rejection = rejection
                if corrected:
                    raise AgentError(
                        f"{submit} input was invalid again after a correction: {rejection}"
                    )
                corrected = True
                allowed_turns = max(allowed_turns, turn + 1)
            self._add(Message("user", tuple(results)))
        raise AgentError(f"the model did not call {submit} within {turn} turns")

    def _never_submitted(self, rejection: str | None) -> str:
        """Why the conversation ended without a submission, after the second text answer.

        A model whose call was refused for its input did call the tool: saying "plain text"
        alone would send its author looking for the wrong problem.
        """
        submit = self.submit.name
        if rejection is not None:
            return (
                f"the model never made a valid {submit} call: its {submit} input was invalid "
                f"({rejection}), and then it answered in plain text"
            )
        return f"the model answered in plain text twice; it never called {submit}"

    async def _ask(self, tool_specs: tuple[ToolSpec, ...], *, forced: bool) -> ModelResponse:
        request = ModelRequest(
            model=self.model,
            system=self.system,
            messages=tuple(self._messages),
            tools=tool_specs,
            tool_choice=self.submit.name if forced else None,
            max_tokens=AGENT_MAX_TOKENS,
            temperature=0.0,
            cache_prefix=True,
            purpose="agent",
            sample=self.sample,
        )
        started = time.monotonic()
        response = await models.generate(request, options=self.options)
        self.usages.append(response.usage)
        self.transcript.add_turn(request, response, time.monotonic() - started)
        return response

    async def _run_calls(
        self, calls: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], SubmissionT | None, str | None]:
        """Tool results for `calls`, the valid submission if any, and why a submission failed."""
        results: list[dict[str, Any]] = []
        rejection: str | None = None
        for call in calls:
            name, call_id, arguments = call.get("name", ""), call.get("id", ""), call.get("input")
            if name == self.submit.name:
                try:
                    return results, self.submission.model_validate(arguments), None
                except ValidationError as exc:
                    undecodable = isinstance(arguments, dict) and set(arguments) == {
                        INVALID_JSON_KEY
                    }
                    rejection = "not valid JSON" if undecodable else describe_validation_error(exc)
                    content, is_error = (
                        f"{name} input is invalid: {rejection}. Call {name} again with input "
                        "that matches its schema.",
                        True,
                    )
            else:
                content, is_error = await self._tool_result(name, arguments)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": content,
                    "is_error": is_error,
                }
            )
        return results, None, rejection

    async def _tool_result(self, name: str, arguments: Any) -> tuple[str, bool]:
        budget = self.tools.limits.attempt_max_result_chars
        if self._result_chars >= budget:
            return (
                f"not run: this attempt's tool results already add up to {budget:,} "
                f"characters, all it may read; call {self.submit.name} with your answer",
                True,
            )
        outcome = await self.tools.call(name, arguments)
        self._result_chars += len(outcome.content)
        return outcome.content, outcome.is_error

    def _nudge(self) -> str:
        return (
            f"Plain-text answers are not read. Use the tools if you need more context, then "
            f"call {self.submit.name} with your answer."
        )

    def _add(self, message: Message) -> None:
        self._messages.append(message)
        self.transcript.add_message(message)
