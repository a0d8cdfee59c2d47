"""The builtin agent's transcript: the whole conversation of one attempt, as JSON.

It holds the system prompt, the tool definitions, every message (tool calls and tool
results included) and each turn's usage, so a reader can replay why a case passed or
failed. It is written even when the attempt fails. Credential values from the environment
are replaced before writing, whatever produced them (a fixture, a tool, the model).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._util.secrets import json_may_hold, mask_strings, secret_values
from assay.models.base import Message, ModelRequest, ModelResponse, ToolSpec

__all__ = ["Transcript"]

TRANSCRIPT_FORMAT = "assay.transcript.v1"

_encode = json.JSONEncoder(ensure_ascii=False).encode
"""One encoder for every item: `json.dumps` with an option builds a new one per call."""


@dataclass
class Transcript:
    """Collects one attempt's conversation; `write` saves it."""

    case_id: str
    kind: str
    model: str
    system: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)

    def start(self, *, system: str, tools: Iterable[ToolSpec]) -> None:
        self.system = system
        # Shallow: the schemas are the shared, cached ones (asdict deep-copied them per case).
        self.tools = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools
        ]

    def add_message(self, message: Message) -> None:
        self.messages.append({"role": message.role, "content": list(message.content)})

    def add_turn(self, request: ModelRequest, response: ModelResponse, duration_s: float) -> None:
        self.turns.append(
            {
                "turn": len(self.turns) + 1,
                "tool_choice": request.tool_choice,
                "stop_reason": response.stop_reason,
                "usage": response.usage.model_dump(),
                "duration_s": round(duration_s, 3),
            }
        )

    def write(
        self,
        path: Path,
        *,
        usage: dict[str, Any],
        result: dict[str, Any] | None = None,
        error: str | None = None,
        environments: Iterable[Mapping[str, str]] = (),
    ) -> Path:
        """Write the transcript as JSON to `path` (its directory is created) and return it.

        Credential values of the process environment and of `environments` (the attempt's
        extra environment) are scrubbed first.
        """
        document = {
            "format": TRANSCRIPT_FORMAT,
            "case_id": self.case_id,
            "kind": self.kind,
            "model": self.model,
            "system": self.system,
            "tools": self.tools,
            "messages": self.messages,
            "turns": self.turns,
            "usage": usage,
            "result": result,
            "error": error,
        }
        secrets = {*secret_values(), *(v for env in environments for v in secret_values(env))}
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as out:
            out.writelines(_json_lines(document, secrets))
        return path


def _json_lines(document: dict[str, Any], secrets: set[str]) -> Iterator[str]:
    """`document` as JSON, one top-level key (and one list item) per line.

    Encoded item by item with the C encoder (`indent` forces json's pure-Python one, which
    cost 4-5 ms per case), and streamed to the file rather than built as one string. A
    secret is looked for in each encoded item (as written and as JSON escapes it); only an
    item that holds one is scrubbed and encoded again, so the common case walks no tree.
    """

    def encode(value: Any) -> str:
        text = _encode(value)
        if json_may_hold(text, secrets):  # in any form, through escapes and control characters
            text = _encode(mask_strings(value, secrets))
        return text

    yield "{"
    for n, (key, value) in enumerate(document.items()):
        yield f"{',' if n else ''}\n{json.dumps(key)}: "
        if isinstance(value, list) and value:
            yield "["
            yield ",".join(f"\n  {encode(item)}" for item in value)
            yield "\n]"
        else:
            yield encode(value)
    yield "\n}\n"
