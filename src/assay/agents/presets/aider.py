"""aider: `aider --message <prompt> --yes-always --no-git ...`.

aider has no JSON output: its stdout is text. What it did is read from its own lines:
`Applied edit to <file>` is a `tool:edit` event, and `Tokens: 2.3k sent, 120 received.
Cost: $0.01 message, $0.05 session.` is the usage (its last such line holds the session's
cost). The final message is its stdout less those bookkeeping lines. The skill is passed
as a read-only conventions file (`--read`), aider's documented way. The model is
aider's (LiteLLM's) `provider/model` (`vertex_ai/` for assay's `vertex/`; the others keep
assay's prefix), and its key is that provider's; with its own default model it may see the
key of any provider it runs. Its `anthropic/` models (the Messages API), `openai/` ones
(Chat Completions) and `openrouter/` ones (OpenRouter's Chat Completions) go through assay's
model bridge: LiteLLM reads their base URLs from the environment. Its `gemini/` ones
(Gemini's generateContent) do too, but LiteLLM's Gemini chat takes a base URL only as a
call's `api_base` (its GEMINI_API_BASE serves other endpoints), which aider sets from a
model-settings file alone: the preset writes one into the attempt's scratch directory and
names it with `--model-settings-file`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.agents.presets.base import Invocation, Preset, Stream
from assay.agents.presets.opencode import (
    BRIDGE_KEYS,
    bridge_base,
    bridged_provider,
    provider_keys,
)
from assay.models.names import parse_model

__all__ = ["PRESET", "Aider", "AiderStream"]

_TOKENS = re.compile(
    r"^Tokens: (?P<sent>[\d.]+)(?P<sk>k?) sent(?:, (?P<cw>[\d.]+)(?P<cwk>k?) cache write)?"
    r"(?:, (?P<cr>[\d.]+)(?P<crk>k?) cache hit)?, (?P<recv>[\d.]+)(?P<rk>k?) received\."
    r"(?: Cost: \$(?P<msg>[\d.]+) message, \$(?P<session>[\d.]+) session\.)?"
)
_APPLIED = re.compile(r"^Applied edit to (?P<path>.+)$")
_BOOKKEEPING = re.compile(
    r"^(Tokens: |Applied edit to |Aider v|Main model:|Weak model:|Git repo:|Repo-map:)"
)
CONVENTIONS_FILE = ".assay-conventions.md"
MODEL_SETTINGS_FILE = "aider-model-settings.yml"
"""aider's model settings for the bridge, in the attempt's scratch directory (YAML: JSON is)."""
_AIDER_KEYS = {**BRIDGE_KEYS, "gemini": "GEMINI_API_KEY"}
"""The key variable of each API aider is pointed at the bridge for (LiteLLM's)."""


def _tokens(number: str | None, k: str | None) -> int:
    if not number:
        return 0
    return round(float(number) * (1000 if k else 1))


class AiderStream(Stream):
    def __init__(self) -> None:
        super().__init__()
        self._text: list[str] = []

    def __call__(self, line: str) -> None:  # text, not JSON lines
        self.lines += 1
        text = line.rstrip("\n")
        tokens = _TOKENS.match(text)
        if tokens:
            # "sent" is the whole prompt; the cached parts are counted apart, as elsewhere.
            read = _tokens(tokens["cr"], tokens["crk"])
            written = _tokens(tokens["cw"], tokens["cwk"])
            self.add_usage(
                input_tokens=max(_tokens(tokens["sent"], tokens["sk"]) - read - written, 0),
                output_tokens=_tokens(tokens["recv"], tokens["rk"]),
                cache_read_tokens=read,
                cache_write_tokens=written,
            )
            if tokens["session"]:
                self.usage = self.usage.model_copy(update={"cost_usd": float(tokens["session"])})
            return
        applied = _APPLIED.match(text)
        if applied:
            self.tool("edit", {"path": applied["path"]})
            return
        if not _BOOKKEEPING.match(text):
            self._text.append(text)
        reply = "\n".join(self._text).strip()
        self.final_text = reply or None

    def on_event(self, event: dict[str, Any]) -> None:  # pragma: no cover - never JSON
        pass


class Aider(Preset):
    name = "aider"
    instructions_file = CONVENTIONS_FILE
    providers = {
        "anthropic": "anthropic",
        "openai": "openai",
        "openrouter": "openrouter",
        "gemini": "gemini",
        "bedrock": "bedrock",
        "vertex": "vertex_ai",
    }

    def bridge_api_for(self, model: str | None) -> str | None:
        return bridged_provider(model, _AIDER_KEYS)

    def bridge_environ(self, url: str, token: str, api: str) -> dict[str, str]:
        # LiteLLM reads ANTHROPIC_API_BASE, else ANTHROPIC_BASE_URL (and adds /v1/messages),
        # and OPENAI_BASE_URL, else OPENAI_API_BASE (with its /v1): both set, so neither
        # of the host's own points elsewhere.
        # Gemini's base URL is in the model-settings file (`bridge_files`).
        if api == "anthropic":
            bases = {"ANTHROPIC_API_BASE": url, "ANTHROPIC_BASE_URL": url}
        elif api == "openai":
            bases = {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_BASE": f"{url}/v1"}
        elif api == "openrouter":
            # OPENROUTER_API_BASE, to which LiteLLM adds /chat/completions.
            bases = {"OPENROUTER_API_BASE": bridge_base(url, api)}
        else:
            bases = {}
        return {**bases, _AIDER_KEYS[api]: token}

    def bridge_files(self, url: str, api: str, model: str | None) -> dict[str, str]:
        if api != "gemini" or model is None:
            return {}
        # `aider/extra_params` is merged into every model's settings (its weak and editor
        # models' too), keeping aider's own for the model, as an entry named for the model
        # would not. LiteLLM calls `<api_base>:<method>` before September 2025 and
        # `<api_base>/models/<model>:<method>` since: the bridge serves both under this
        # base, which names the model for the first (server.py).
        base = f"{url}/v1beta/models/{parse_model(model).name}"
        settings = [{"name": "aider/extra_params", "extra_params": {"api_base": base}}]
        return {MODEL_SETTINGS_FILE: json.dumps(settings, indent=2) + "\n"}

    def bridge_argv(self, files: Mapping[str, Path]) -> list[str]:
        settings = files.get(MODEL_SETTINGS_FILE)
        return ["--model-settings-file", str(settings)] if settings else []

    def argv(self, run: Invocation) -> list[str]:
        argv = [
            self.program,
            "--message",
            run.prompt,
            "--yes-always",
            "--no-git",
            "--no-auto-commits",
            "--no-pretty",
            "--no-stream",
            "--no-check-update",
            "--no-show-model-warnings",
            "--no-analytics",
        ]
        if run.instructions_file:
            argv += ["--read", run.instructions_file]
        if run.model:
            argv += ["--model", run.model]
        return argv

    def keys_for(self, model: str | None) -> tuple[str, ...]:
        return provider_keys(model, self.providers)

    def stream(self) -> Stream:
        return AiderStream()


PRESET = Aider
