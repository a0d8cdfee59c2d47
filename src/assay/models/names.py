"""Model strings (`provider/model`) and the credentials each provider needs.

Kept free of SDK imports: the runner asks here whether a case can run at all before
anything heavy is loaded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "DEFAULT_MODEL",
    "ModelName",
    "bridge_env",
    "missing_credentials",
    "parse_model",
    "warden_key_variables",
]

DEFAULT_MODEL = "anthropic/claude-sonnet-4-6"

# provider -> environment variables, any one of which is a usable key
_KEY_VARS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OPENAI_API_KEY"),
}
# Prefixed keys other tools use, copied into the standard variable when it is unset
# (Warden's `WARDEN_<PROVIDER>_API_KEY` for every provider: see warden_key_variables).
_BRIDGED = {"ASSAY_ANTHROPIC_API_KEY": "ANTHROPIC_API_KEY"}
_WARDEN_KEY = re.compile(r"WARDEN_([A-Z0-9_]+_API_KEY)")


def warden_key_variables(provider: str) -> tuple[str, str]:
    """Warden's key variables for a provider prefix: `WARDEN_<P>_API_KEY`, `<P>_API_KEY`.

    `<P>` is the prefix upper-cased with `-` as `_` (Warden's `providerEnvPrefix`).
    """
    prefix = provider.upper().replace("-", "_")
    return f"WARDEN_{prefix}_API_KEY", f"{prefix}_API_KEY"


@dataclass(frozen=True)
class ModelName:
    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.name}"


def parse_model(model: str) -> ModelName:
    """`anthropic/claude-x` -> (anthropic, claude-x); a bare `claude-*` means anthropic.

    Other bare names are taken as OpenAI-compatible models (e.g. a local vLLM model).
    """
    text = model.strip()
    if "/" in text:
        provider, name = text.split("/", 1)
        if provider in _KEY_VARS:
            return ModelName(provider, name)
    if text.startswith("claude"):
        return ModelName("anthropic", text)
    return ModelName("openai", text)


def bridge_env(environ: Mapping[str, str] | None = None) -> None:
    """Copy prefixed keys (ASSAY_/WARDEN_ANTHROPIC_API_KEY) into ANTHROPIC_API_KEY if unset."""
    env = os.environ if environ is None else environ
    pairs = dict(_BRIDGED)
    pairs.update({name: match[1] for name in env if (match := _WARDEN_KEY.fullmatch(name))})
    for source, target in pairs.items():
        if env.get(source) and not env.get(target):
            os.environ[target] = env[source]


def missing_credentials(model: str, environ: Mapping[str, str] | None = None) -> str | None:
    """None when `model` can be called; otherwise the reason, naming the variable to set.

    An OpenAI-compatible server on a custom base URL (Ollama, llama.cpp) may need no key.
    """
    env = os.environ if environ is None else environ
    parsed = parse_model(model)
    variables = _KEY_VARS[parsed.provider]
    bridged = [k for k, v in _BRIDGED.items() if v in variables]
    bridged.append(warden_key_variables(parsed.provider)[0])
    if any(env.get(v) for v in (*variables, *bridged)):
        return None
    if parsed.provider == "openai" and env.get("OPENAI_BASE_URL"):
        return None
    return f"no credentials for {parsed}: set {variables[0]}"
