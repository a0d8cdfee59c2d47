"""opencode: `opencode run --format json <message>`.

Its stream (JSONL) has `step_start`, `text` (`part.text`), `tool_use` (`part.tool`, once
the tool finished), `step_finish` (`part.tokens` {input, output, reasoning, cache {read,
write}} and `part.cost`) and `error`. The final message is the text of the last step.
The skill goes to AGENTS.md in the workspace. The model is opencode's own
`provider/model` (models.dev's provider ids: `google/` for assay's `gemini/`,
`amazon-bedrock/` for `bedrock/`, `google-vertex-anthropic/` for `vertex/`), and its key is
that provider's; with its own default model it may see the key of any provider it runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from assay.agents.presets.base import Invocation, Preset, Stream
from assay.models.names import provider_of
from assay.models.providers import PROVIDERS

__all__ = ["PRESET", "Opencode", "OpencodeStream", "provider_keys"]


class OpencodeStream(Stream):
    def __init__(self) -> None:
        super().__init__()
        self._step: list[str] = []
        self._cost: float | None = None

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        part = event.get("part") or {}
        if kind == "step_start":
            self._step = []
        elif kind == "text" and isinstance(part.get("text"), str):
            self._step.append(part["text"])
            self.final_text = "".join(self._step)
        elif kind == "tool_use":
            state = part.get("state")
            state = state if isinstance(state, dict) else {}
            self.tool(part.get("tool"), state.get("input"), call_id=part.get("callID"))
        elif kind == "step_finish":
            self.transcript.turns = (self.transcript.turns or 0) + 1
            tokens = part.get("tokens") or {}
            cache = tokens.get("cache") or {}
            self.add_usage(
                input_tokens=tokens.get("input"),
                output_tokens=(tokens.get("output") or 0) + (tokens.get("reasoning") or 0),
                cache_read_tokens=cache.get("read"),
                cache_write_tokens=cache.get("write"),
            )
            cost = part.get("cost")
            if isinstance(cost, int | float) and cost >= 0:
                self._cost = (self._cost or 0.0) + float(cost)
                self.usage = self.usage.model_copy(update={"cost_usd": self._cost})
        elif kind == "error":
            error = event.get("error") or {}
            data = error.get("data") if isinstance(error, dict) else None
            message = data.get("message") if isinstance(data, dict) else None
            self.error = str(message or (error.get("name") if isinstance(error, dict) else error))


class Opencode(Preset):
    name = "opencode"
    instructions_file = "AGENTS.md"
    providers = {
        "anthropic": "anthropic",
        "openai": "openai",
        "openrouter": "openrouter",
        "gemini": "google",
        "bedrock": "amazon-bedrock",
        "vertex": "google-vertex-anthropic",
    }

    def argv(self, run: Invocation) -> list[str]:
        argv = [self.program, "run", "--format", "json"]
        if run.model:
            argv += ["--model", run.model]
        return [*argv, run.prompt]

    def keys_for(self, model: str | None) -> tuple[str, ...]:
        return provider_keys(model, self.providers)

    def stream(self) -> Stream:
        return OpencodeStream()


def provider_keys(model: str | None, providers: Iterable[str] | None) -> tuple[str, ...]:
    """The key variables of the provider serving `model`; without one (the CLI's own default
    model, which may be any of theirs) those of every provider in `providers`."""

    if model:
        return provider_of(model).agent_variables()
    names = PROVIDERS.names() if providers is None else providers
    specs = [spec for name in names if (spec := PROVIDERS.get(name)) is not None]
    return tuple(dict.fromkeys(key for spec in specs for key in spec.agent_variables()))


PRESET = Opencode
