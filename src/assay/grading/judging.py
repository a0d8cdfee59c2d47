"""One judge call with a typed verdict: forced tool call, strict validation, one retry.

Both judges use this. The judge must answer by calling its verdict tool; the input is
validated by jsonschema (against the very schema the tool advertises), by the pydantic
model, and by the judge's own semantic check. Anything wrong goes back to the judge once,
saying what was wrong; a second failure is a JudgeError that keeps the raw answers.
A call with a `reader` (Cassandra's judge) asks once and reads the answer as that judge does,
whatever the stop reason (a cut-off or refused answer is decoded all the same).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Generic, TypeVar

import jsonschema
from jsonschema.protocols import Validator
from pydantic import BaseModel, ValidationError

from assay import models
from assay._util import json_text
from assay._util.json_schema import describe_validation_error, tool_input_schema
from assay.core.usage import Usage, sum_usage
from assay.errors import JudgeError
from assay.models.base import INVALID_JSON_KEY, Message, ModelRequest, ModelResponse, ToolSpec
from assay.options import RunOptions

__all__ = ["JudgeAnswer", "JudgeCall", "load_judge_prompt"]

JUDGE_MAX_TOKENS = 4096
MAX_RAW_CHARS = 20_000
"""How much of each unusable answer JudgeError keeps (it ends up in the report)."""

VerdictT = TypeVar("VerdictT", bound=BaseModel)


@functools.cache
def load_judge_prompt(version: str) -> str:
    """The judge system prompt `<version>.md` shipped in assay.grading/prompts.

    Package data does not change while assay runs, so it is read once per version.
    """
    return resources.files("assay.grading").joinpath("prompts", f"{version}.md").read_text("utf-8")


@dataclass(frozen=True)
class JudgeAnswer(Generic[VerdictT]):
    verdict: VerdictT
    usage: Usage
    attempts: int


@dataclass(frozen=True)
class JudgeCall(Generic[VerdictT]):
    """The verdict tool `tool_name` whose input must parse as `verdict_model`.

    `reader` replaces the strict reading (jsonschema, then the model) by another decoder,
    for a format whose own judge is lenient (Cassandra's), and reads the answer as that
    judge does: one call, no retry, whatever its stop reason; the first tool call's input
    (a JSON value: a string stays a string) whatever the tool's name, else the answer's
    text (JSON text); a failure is a JudgeError at once. `tool_spec` is then the
    tool as that judge advertises it, and `max_tokens` its budget.
    """

    tool_name: str
    verdict_model: type[VerdictT]
    reader: Callable[[Any], tuple[VerdictT | None, list[str]]] | None = None
    tool_spec: ToolSpec | None = None
    max_tokens: int = JUDGE_MAX_TOKENS

    @functools.cached_property
    def tool(self) -> ToolSpec:
        """The verdict tool, built once per call site (the judges hold one JudgeCall each)."""
        if self.tool_spec is not None:
            return self.tool_spec
        model = self.verdict_model
        return ToolSpec(
            name=self.tool_name,
            description=(model.__doc__ or self.tool_name).strip(),
            input_schema=tool_input_schema(model),
        )

    @functools.cached_property
    def _validator(self) -> Validator:
        """jsonschema's validator of `tool`'s schema, built once instead of per answer."""
        return jsonschema.Draft202012Validator(self.tool.input_schema)

    async def ask(
        self,
        *,
        model: str,
        system: str,
        prompt: str,
        sample: int = 0,
        options: RunOptions,
        check: Callable[[VerdictT], list[str]] | None = None,
        tool: ToolSpec | None = None,
    ) -> JudgeAnswer[VerdictT]:
        """Ask `model` for a verdict; `check` lists what `self.tool`'s schema cannot say.

        `tool` is what the judge is shown instead of `self.tool`: the same tool with its
        schema narrowed to this case (array lengths, index ranges), so a judge that follows
        its schema cannot answer out of range. Answers are still validated against the
        static schema and then by `check`, whose messages name the case's counts: the
        retry stays the fallback for a judge that ignores the bounds.
        """
        tool = tool or self.tool
        messages = [Message("user", ({"type": "text", "text": prompt},))]
        usages: list[Usage] = []
        raws: list[str] = []
        for attempt in (1,) if self.reader is not None else (1, 2):
            request = ModelRequest(
                model=model,
                system=system,
                messages=tuple(messages),
                tools=(tool,),
                tool_choice=tool.name,
                max_tokens=self.max_tokens,
                temperature=0.0,
                cache_prefix=True,
                purpose="judge",
                sample=sample,
            )
            response = await models.generate(request, options=options)
            usages.append(response.usage)
            verdict, problems, raw = self._read(response, tool)
            if verdict is not None and check is not None:
                problems = list(check(verdict))
            if response.stop_reason in _BROKEN_OFF and self.reader is None:
                # Whatever it holds is not the verdict it meant (a cut-off `{}` would read as
                # a score of 0): never graded, at most retried. A `reader` decodes whatever
                # came back, as its own judge does (Cassandra never looks at the stop reason).
                verdict, problems = None, [_BROKEN_OFF[response.stop_reason], *problems]
            problems = _bounded(problems)
            if verdict is not None and not problems:
                return JudgeAnswer(verdict, sum_usage(usages), attempt)
            raws.append(raw[:MAX_RAW_CHARS])
            if response.content:  # an empty assistant message is not valid input to the APIs
                messages.append(Message("assistant", tuple(response.content)))
            messages.append(self._feedback(response, tool, problems))
        failure = (
            "failed to parse judge result"  # Cassandra's words
            if self.reader is not None
            else "the judge answered outside its verdict schema twice"
        )
        raise JudgeError(
            f"{failure}: {'; '.join(problems)}",
            raw="\n\n".join(f"[answer {n}]\n{raw}" for n, raw in enumerate(raws, start=1)),
            usage=sum_usage(usages),
        )

    def _read(
        self, response: ModelResponse, tool: ToolSpec
    ) -> tuple[VerdictT | None, list[str], str]:
        """The parsed verdict (or None), what was wrong with it, and the raw answer."""
        calls = response.tool_uses()
        if self.reader is None:
            calls = [c for c in calls if c.get("name") == tool.name][-1:]
        # JSON text to decode, as opposed to a JSON value the API already decoded (a tool
        # call's input). assay's own judges read a string input as JSON text too; a
        # `reader` gets it as the string it is (Go: "cannot unmarshal string").
        as_text = self.reader is None
        if calls:
            arguments = calls[0].get("input")
        elif self.reader is not None:
            arguments, as_text = response.text(), True  # no tool call: the text is the answer
        else:
            raw = response.text() or json.dumps(response.content)
            return None, [f"no {tool.name} tool call in the answer"], raw
        if isinstance(arguments, dict) and set(arguments) == {INVALID_JSON_KEY}:
            # the provider could not decode the arguments it got as text
            arguments, as_text = str(arguments[INVALID_JSON_KEY]), True
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        if as_text and isinstance(arguments, str):
            try:
                arguments = json_text.loads(arguments)
            except ValueError as exc:
                what = f"the {tool.name} input" if calls else "the answer"
                return None, [f"{what} is not valid JSON: {exc}"], raw
        if self.reader is not None:
            verdict, problems = self.reader(arguments)
            return verdict, problems, raw
        schema_problems = [
            f"{'.'.join(str(p) for p in error.absolute_path) or 'input'}: {error.message}"
            for error in self._validator.iter_errors(arguments)
        ]
        if schema_problems:
            return None, schema_problems, raw
        try:
            return self.verdict_model.model_validate(arguments), [], raw
        except ValidationError as exc:
            return None, [describe_validation_error(exc)], raw

    @staticmethod
    def _feedback(response: ModelResponse, tool: ToolSpec, problems: list[str]) -> Message:
        """The corrective user turn: an error result for each tool call, or a plain reminder."""
        explanation = (
            f"Your verdict could not be used: {'; '.join(problems)}. "
            f"Call {tool.name} again with a corrected, complete verdict."
        )
        calls = response.tool_uses()
        if not calls:
            return Message("user", ({"type": "text", "text": explanation},))
        return Message(
            "user",
            tuple(
                {
                    "type": "tool_result",
                    "tool_use_id": call.get("id", ""),
                    "content": explanation,
                    "is_error": True,
                }
                for call in calls
            ),
        )


_BROKEN_OFF = {
    "max_tokens": "the answer was cut off at the judge's token limit",
    "refusal": "the judge refused to answer",
}
"""Stop reasons after which a verdict is not one."""

_PROBLEMS_SHOWN = 10
_PROBLEM_CHARS = 300
"""A problem quotes the judge's bad value (jsonschema does, whole): 3 MB of it was the
case's reason, three times over in report.json, and the next turn's prompt."""


def _bounded(problems: list[str]) -> list[str]:
    """`problems`, each cut to a line's length, ten at most and a count of the rest."""
    cut = [p if len(p) <= _PROBLEM_CHARS else p[: _PROBLEM_CHARS - 1] + "…" for p in problems]
    if len(cut) > _PROBLEMS_SHOWN:
        cut = [*cut[:_PROBLEMS_SHOWN], f"and {len(cut) - _PROBLEMS_SHOWN} more"]
    return cut
