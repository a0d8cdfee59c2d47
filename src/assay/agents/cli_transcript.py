"""What an agent CLI did in one attempt, in the builtin agent's transcript shape.

A preset's stream (`presets/base.py: Stream`) and a command agent's stdout
(`trace.StdoutReader`) are read as they arrive; what they say the agent did is kept
here: the prompt it was given, its messages, its tool calls (each tool's name and a
summary of its input) and their results, and at the end its final message, turns and
usage when the CLI printed them. It is written as `agent-transcript.json` beside the raw
`agent.stdout`, in the format of the builtin agent's `transcript.json`
(`transcript.Transcript`, which also masks credentials), so the report's transcript
view and report.json name the same kind of record whatever the runtime.

Bounded, since the agent chooses what it prints: each text at MAX_TEXT_CHARS, each tool
input at MAX_INPUT_CHARS of JSON, and MAX_ITEMS items; past that, items are counted,
not kept. The raw stream stays whole in `agent.stdout`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay._util.secrets import redact
from assay.agents.transcript import Transcript
from assay.core.files import AGENT_TRANSCRIPT_FILE
from assay.core.usage import Usage

__all__ = ["AGENT_TRANSCRIPT_NAME", "CliTranscript", "read_activity"]

AGENT_TRANSCRIPT_NAME = AGENT_TRANSCRIPT_FILE
MAX_ITEMS = 1000
"""Messages kept per attempt (prompt, texts, tool calls, tool results)."""
MAX_TEXT_CHARS = 8000
MAX_INPUT_CHARS = 1000
MAX_PROMPT_CHARS = 20_000
REPORTED_MESSAGE_CHARS = 500
"""How much of the final message report.json's `activity` holds (the transcript has more)."""


class CliTranscript:
    """One attempt's record of an agent CLI's activity, filled as its stdout is read."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.tool_calls = 0
        self.left_out = 0
        """Items past MAX_ITEMS: counted, not kept."""
        self.turns: int | None = None
        """The CLI's own count of model turns, when it prints one."""
        self.printed_usage: dict[str, Any] | None = None
        """A command agent's last `usage` object on stdout (a preset's usage is its stream's)."""
        self._ids = 0
        self._prose: list[str] = []
        self._prose_chars = 0
        self.reported: dict[str, Any] | None = None
        """What report.json says of the attempt (`AgentActivity`), once written."""

    def command_line(self, line: str, event: dict[str, Any] | None, key: str | None) -> None:
        """One line of a command agent's stdout (`event`: its JSON object, `key`: its trace
        key): prose is its messages, each trace event a tool call, its answer left to the end."""
        if event is None:
            if self._prose_chars < MAX_TEXT_CHARS and len(self.messages) < MAX_ITEMS:
                self._prose.append(line.rstrip("\r\n"))
                self._prose_chars += len(line)
            return
        self._flush_prose()
        if "findings" in event or "verdict" in event:
            return  # the answer: its final message
        usage = event.get("usage")
        if isinstance(usage, dict):  # the agent's own account of its tokens, not a tool call
            if len(_encoded(usage)) <= MAX_INPUT_CHARS:
                self.printed_usage = usage
            return
        if key is not None and self._full():
            self.tool_calls += 1
        elif key is not None:
            name = event.get("name") if event.get("type") == "tool" else None
            shown = {k: v for k, v in event.items() if k not in ("type", "event", "name")}
            self.tool_call(name.strip() if isinstance(name, str) else key, shown or None)

    def _flush_prose(self) -> None:
        if self._prose:
            self.text("\n".join(self._prose))
            self._prose, self._prose_chars = [], 0

    def prompt(self, text: str) -> None:
        self._add({"role": "user", "content": [_text_block(text, MAX_PROMPT_CHARS)]})

    def text(self, text: str, *, role: str = "assistant") -> None:
        if text.strip():
            self._add({"role": role, "content": [_text_block(text, MAX_TEXT_CHARS)]})

    def tool_call(self, name: str, tool_input: Any = None, *, call_id: object = None) -> None:
        self.tool_calls += 1
        self._ids += 1
        if self._full():  # counted, and not summarised: the input may be large
            return
        block = {
            "type": "tool_use",
            "id": call_id if isinstance(call_id, str) else f"call_{self._ids}",
            "name": name[:MAX_INPUT_CHARS],
            "input": _summary(tool_input),
        }
        self._add({"role": "assistant", "content": [block]})

    def tool_result(self, content: Any, *, call_id: object = None, is_error: bool = False) -> None:
        if self._full():
            return
        text = content if isinstance(content, str) else _encoded(content)
        block = {
            "type": "tool_result",
            "tool_use_id": call_id if isinstance(call_id, str) else "",
            "content": _cut(text, MAX_TEXT_CHARS),
            "is_error": bool(is_error),
        }
        self._add({"role": "user", "content": [block]})

    def _full(self) -> bool:
        if len(self.messages) < MAX_ITEMS:
            return False
        self.left_out += 1
        return True

    def _add(self, message: dict[str, Any]) -> None:
        if len(self.messages) < MAX_ITEMS:
            self.messages.append(message)
        else:
            self.left_out += 1

    def write(
        self,
        path: Path,
        *,
        case_id: str,
        kind: str,
        model: str | None,
        runtime: str,
        usage: Usage,
        final_message: str | None,
        error: str | None,
        environment: Mapping[str, str],
    ) -> Path:
        """Write the record to `path` in the builtin transcript's format; credential
        values of `environment` (and the process's) are masked."""
        self._flush_prose()
        transcript = Transcript(case_id=case_id, kind=kind, model=model or "")
        transcript.messages = list(self.messages)
        last = {"role": "assistant", "content": [_text_block(final_message or "", MAX_TEXT_CHARS)]}
        if final_message is not None and transcript.messages[-1:] != [last]:
            transcript.messages.append(last)  # unless the stream's last message was it
        if self.left_out:
            note = f"[{self.left_out} more items of the agent's stream are not kept here]"
            transcript.messages.append({"role": "assistant", "content": [_text_block(note, 200)]})
        activity = {
            "runtime": runtime,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "final_message": None if final_message is None else _cut(final_message, 2000),
            "usage": usage.model_dump(mode="json"),
            "printed_usage": self.printed_usage,
            "stdout": "agent.stdout",
        }
        # report.json is masked again as a whole; the attempt's own environment only here.
        shown = None if final_message is None else final_message[:REPORTED_MESSAGE_CHARS]
        self.reported = {
            "runtime": runtime,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "final_message": None if shown is None else redact(shown, environment),
        }
        return transcript.write(
            path,
            usage=usage.model_dump(mode="json"),
            result={"activity": activity},
            error=error,
            environments=[environment],
        )


def read_activity(path: Path) -> dict[str, Any] | None:
    """What report.json says of an attempt whose agent left `path` and then failed (the
    agent's AgentOutput, which carries it otherwise, never reached the runner)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    result = document.get("result") if isinstance(document, dict) else None
    activity = result.get("activity") if isinstance(result, dict) else None
    if not isinstance(activity, dict):
        return None
    message = activity.get("final_message")
    return {
        "runtime": activity.get("runtime"),
        "turns": activity.get("turns"),
        "tool_calls": activity.get("tool_calls"),
        "final_message": message[:REPORTED_MESSAGE_CHARS] if isinstance(message, str) else None,
    }


def _text_block(text: str, limit: int) -> dict[str, Any]:
    return {"type": "text", "text": _cut(text, limit)}


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters in agent.stdout]"


def _encoded(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # a circular value cannot come from JSON; said rather than raised
        return repr(value)[:MAX_INPUT_CHARS]


def _summary(tool_input: Any) -> Any:
    """The tool's input as given when small, else its JSON cut to MAX_INPUT_CHARS."""
    if tool_input is None:
        return {}
    encoded = _encoded(tool_input)
    if len(encoded) <= MAX_INPUT_CHARS and isinstance(tool_input, dict):
        return tool_input
    return {"summary": _cut(encoded, MAX_INPUT_CHARS)}
