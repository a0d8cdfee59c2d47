"""opencode: `opencode run --format json <message>`.

Its stream (JSONL) has `step_start`, `text` (`part.text`), `tool_use` (`part.tool`, once
the tool finished), `step_finish` (`part.tokens` {input, output, reasoning, cache {read,
write}} and `part.cost`) and `error`. The final message is the text of the last step.
The skill goes to AGENTS.md in the workspace. The model is opencode's own
`provider/model` (models.dev's provider ids: `google/` for assay's `gemini/`,
`amazon-bedrock/` for `bedrock/`, `google-vertex-anthropic/` for `vertex/`), and its key is
that provider's; with its own default model it may see the key of any provider it runs.
Its `anthropic/` models (the Messages API), `openai/` ones (the Responses API),
`gemini/` ones (Gemini's generateContent, as `google/`) and `openrouter/` ones (OpenRouter's
Chat Completions) go through assay's model bridge: opencode reads a provider's base URL and
key from its config (`provider.<id>.options`), given inline in OPENCODE_CONFIG_CONTENT,
which it merges last.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from assay._util.secrets import agent_environ
from assay.agents.presets.base import Invocation, Preset, Stream
from assay.bridge.server import OPENROUTER_BASE_PATH
from assay.models.names import parse_model, provider_of
from assay.models.providers import PROVIDERS

__all__ = [
    "BRIDGE_KEYS",
    "PRESET",
    "Opencode",
    "OpencodeStream",
    "bridge_base",
    "bridged_provider",
    "provider_keys",
]


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

    def bridge_api_for(self, model: str | None) -> str | None:
        return bridged_provider(model, _OPENCODE_KEYS)

    def bridge_environ(self, url: str, token: str, api: str) -> dict[str, str]:
        # The AI SDK's base URL holds the API's version (it adds `/messages`, `/responses`,
        # `/models/<model>:streamGenerateContent`; OpenRouter's SDK `/chat/completions`).
        options = {"baseURL": bridge_base(url, api), "apiKey": token}
        provider = self.providers[api]  # opencode's own id: `google` for Gemini
        config = _with_provider(agent_environ().get(_INLINE_CONFIG), provider, options)
        return {_INLINE_CONFIG: config, _OPENCODE_KEYS[api]: token}

    def argv(self, run: Invocation) -> list[str]:
        argv = [self.program, "run", "--format", "json"]
        if run.model:
            argv += ["--model", run.model]
        return [*argv, run.prompt]

    def keys_for(self, model: str | None) -> tuple[str, ...]:
        return provider_keys(model, self.providers)

    def stream(self) -> Stream:
        return OpencodeStream()


_INLINE_CONFIG = "OPENCODE_CONFIG_CONTENT"
BRIDGE_KEYS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}
"""The key variable of each provider's API the bridge serves, as aider (LiteLLM) and
opencode read it, for the providers both are pointed at the bridge for."""
_OPENCODE_KEYS = {**BRIDGE_KEYS, "gemini": "GOOGLE_GENERATIVE_AI_API_KEY"}
"""opencode's too: its `google/` models (the AI SDK's Google provider) through the bridge."""


def bridge_base(url: str, api: str) -> str:
    """The base URL, under the bridge's `url`, of a CLI's SDK that adds the API's path to
    one holding its version: OpenRouter's at OpenRouter's own path (the bridge reads its
    models as assay's `openrouter/` ones), Gemini's at `/v1beta`, the others' at `/v1`."""
    if api == "openrouter":
        return f"{url}{OPENROUTER_BASE_PATH}"
    return f"{url}/{'v1beta' if api == 'gemini' else 'v1'}"


def bridged_provider(model: str | None, keys: Mapping[str, str]) -> str | None:
    """The bridge's API for `model` in a CLI that runs many providers: its provider's when
    the CLI is pointed at the bridge for it (a provider in `keys`; the bridge speaks no
    Bedrock or Vertex API); None for the CLI's own default model, which may be any
    provider's."""
    provider = parse_model(model).provider if model else None
    return provider if provider in keys else None


def _with_provider(content: str | None, name: str, options: dict[str, str]) -> str:
    """The inline config `content` (the user's own, when it is a JSON object) with the
    provider `name`'s options set to `options`."""
    try:
        config = _object(json.loads(content) if content else {})
    except ValueError:
        config = {}
    providers = _object(config.get("provider"))
    entry = _object(providers.get(name))
    entry["options"] = {**_object(entry.get("options")), **options}
    return json.dumps({**config, "provider": {**providers, name: entry}})


def _object(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def provider_keys(model: str | None, providers: Iterable[str] | None) -> tuple[str, ...]:
    """The key variables of the provider serving `model`; without one (the CLI's own default
    model, which may be any of theirs) those of every provider in `providers`."""

    if model:
        return provider_of(model).agent_variables()
    names = PROVIDERS.names() if providers is None else providers
    specs = [spec for name in names if (spec := PROVIDERS.get(name)) is not None]
    return tuple(dict.fromkeys(key for spec in specs for key in spec.agent_variables()))


PRESET = Opencode
