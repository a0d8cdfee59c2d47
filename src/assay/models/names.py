"""Model strings (`provider/model`) and whether a model can be called in this environment.

Kept free of SDK imports: the runner asks here whether a case can run at all before
anything heavy is loaded. What each provider needs comes from its `ProviderSpec`
(`assay.models.providers`), the one list of providers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assay.models.provider_spec import (
    BARE_FALLBACK,
    ProviderSpec,
    bridge_env,
    credentials_problem,
    warden_key_variables,
)
from assay.models.providers import PROVIDERS

__all__ = [
    "DEFAULT_MODEL",
    "ModelName",
    "bridge_env",
    "missing_credentials",
    "parse_model",
    "provider_of",
    "warden_key_variables",
]

DEFAULT_MODEL = "anthropic/claude-sonnet-4-6"


@dataclass(frozen=True)
class ModelName:
    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.name}"


def parse_model(model: str) -> ModelName:
    """`anthropic/claude-x` -> (anthropic, claude-x); a bare name goes to the provider
    that claims it (`claude-*`: anthropic), else it is an OpenAI-compatible model."""
    text = model.strip()
    if "/" in text:
        provider, name = text.split("/", 1)
        if provider in PROVIDERS:
            return ModelName(provider, name)
    for name in PROVIDERS.names():
        spec = PROVIDERS.get(name)
        if spec is not None and spec.claims_bare is not None and spec.claims_bare(text):
            return ModelName(name, text)
    return ModelName(BARE_FALLBACK, text)


def provider_of(model: str) -> ProviderSpec:
    """The spec of the provider that serves `model`."""
    spec = PROVIDERS.get(parse_model(model).provider)
    assert spec is not None  # parse_model only answers registered names
    return spec


def missing_credentials(model: str, environ: Mapping[str, str] | None = None) -> str | None:
    """None when `model` can be called; otherwise the reason, naming the variable to set.

    A provider may need no key at all, or none when a variable says where a keyless server
    is (an OpenAI-compatible server on a custom base URL: Ollama, llama.cpp).
    """
    return credentials_problem(provider_of(model), str(parse_model(model)), environ)
