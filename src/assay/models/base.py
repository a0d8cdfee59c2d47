"""The canonical model request and response every provider speaks.

Content blocks use the Anthropic Messages shape (`text`, `tool_use`, `tool_result`),
which the OpenAI-compatible adapter translates. Requests are frozen and plain data so
that the record/replay cache can key on them (never on keys or headers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from assay.core.usage import Usage

__all__ = ["INVALID_JSON_KEY", "Message", "ModelRequest", "ModelResponse", "Provider", "ToolSpec"]


INVALID_JSON_KEY = "__invalid_json__"
"""The one key of a `tool_use` input that was not a JSON object: its value is the raw text
the model wrote. An adapter puts it there; the agent loop and the judge send it back as
"not valid JSON" (and the OpenAI adapter replays it byte for byte)."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    content: tuple[dict[str, Any], ...]
    """Blocks: {"type": "text", "text"}, {"type": "tool_use", "id", "name", "input"},
    {"type": "tool_result", "tool_use_id", "content", "is_error"}."""


@dataclass(frozen=True)
class ModelRequest:
    model: str
    """Full model string, e.g. `anthropic/claude-sonnet-4-6`."""
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: str | None = None
    """None = the model decides; "any" = must call a tool; a tool name = must call that tool."""
    max_tokens: int = 4096
    temperature: float | None = 0.0
    cache_prefix: bool = True
    """Mark the stable prefix (system prompt + skill) cacheable where the provider supports it."""
    purpose: Literal["agent", "judge"] = "agent"
    """Lets the cache keep judge verdicts apart from agent calls."""
    sample: int = 0
    """Which repeat (attempt) the call belongs to. Never sent; part of the cache key, so
    that `--repeat K` with `--cache` records K independent samples instead of replaying one."""
    thinking: dict[str, Any] | None = None
    """The Messages API's `thinking` config as a caller gave it (`{"type": "enabled",
    "budget_tokens": N}`, `{"type": "adaptive"}`, `{"type": "disabled"}`), sent as it is by
    the Anthropic adapters (the API's, Bedrock's, Vertex's) and ignored by the others; None:
    the model's default. In the cache key only when set, so older recordings still replay.
    assay's own agent and judge never set it; the bridge carries a CLI's."""


@dataclass
class ModelResponse:
    content: list[dict[str, Any]]
    """`text` and `tool_use` blocks, in order; an Anthropic model's `thinking` and
    `redacted_thinking` blocks too, kept as they came (a tool-use loop sends them back)."""
    stop_reason: str
    usage: Usage = field(default_factory=Usage)

    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")


class Provider(Protocol):
    """One provider adapter with an injected, authenticated client."""

    async def generate(self, request: ModelRequest) -> ModelResponse: ...
