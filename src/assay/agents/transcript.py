"""The builtin agent's transcript: the whole conversation of one attempt, as JSON.

It holds the system prompt, the tool definitions, every message (tool calls and tool
results included) and each turn's usage, so a reader can replay why a case passed or
failed. It is written even when the attempt fails. Credential values from the environment
are replaced before writing, whatever produced them (a fixture, a tool, the model).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from assay._util.secrets import secret_values
from assay.models.base import Message, ModelRequest, ModelResponse, ToolSpec

__all__ = ["Transcript", "scrub"]

TRANSCRIPT_FORMAT = "assay.transcript.v1"
REDACTED = "[redacted]"


def scrub(data: Any, secrets: Iterable[str]) -> Any:
    """`data` with every occurrence of every secret replaced, inside strings at any depth."""
    ordered = sorted(set(secrets), key=len, reverse=True)  # longest first: no partial leftovers
    if not ordered:
        return data

    def clean(node: Any) -> Any:
        if isinstance(node, str):
            for secret in ordered:
                node = node.replace(secret, REDACTED)
            return node
        if isinstance(node, dict):
            return {clean(k): clean(v) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [clean(item) for item in node]
        return node

    return clean(data)


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
        self.tools = [asdict(tool) for tool in tools]

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
        text = json.dumps(scrub(document, secrets), indent=2, ensure_ascii=False)
        path.write_text(text + "\n", encoding="utf-8")
        return path
