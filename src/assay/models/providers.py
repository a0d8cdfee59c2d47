"""The provider registry: the one list of model providers and what each one owns.

A provider owns its name (the `name/` prefix of a model string and the bare names it
claims, `claude-*` for Anthropic), its credentials (the variables any one of which is a
key, the prefixed variables other tools use that are bridged into them, Warden's
`WARDEN_<P>_API_KEY`, and what makes a key unnecessary: a local OpenAI-compatible server),
the Action input its key comes from, its pricing, and the factory that builds its adapter.
The planner's credential check, `assay ci`'s preflight, the did-you-mean for an unknown
provider and the adapters themselves all read from here.

Plugins add providers through the `assay.providers` entry point group, naming a
`ProviderSpec` (or a zero-argument factory, which then needs `<NAME>_API_KEY`).
Kept free of SDK imports: each factory imports its SDK when it is called.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assay.models.provider_spec import (
    PROVIDERS,
    ProviderFactory,
    ProviderSpec,
    list_price,
    provider_spec,
    warden_key_variables,
)

if TYPE_CHECKING:
    from assay.core.usage import Usage
    from assay.models.base import Provider

__all__ = [
    "PROVIDERS",
    "ProviderFactory",
    "ProviderSpec",
    "provider_spec",
    "warden_key_variables",
]


_BEDROCK_ID = re.compile(r"^(?:[a-z]{2,6}\.)?anthropic\.(?P<name>.+?)(?:-v\d+(?::\d+)?)?$")
"""A Bedrock model id (`anthropic.claude-x-20250929-v1:0`) or inference profile id
(`us.anthropic.claude-x-...`, `global.anthropic...`): the Claude name inside it."""


def _bedrock_price(model: str, usage: Usage) -> float | None:
    match = _BEDROCK_ID.match(model.strip())
    return list_price(match["name"] if match else model, usage)


def _vertex_price(model: str, usage: Usage) -> float | None:
    # Vertex writes a snapshot with `@` (`claude-sonnet-4-5@20250929`).
    return list_price(model.strip().replace("@", "-"), usage)


def _build_anthropic() -> Provider:
    # lazy: start-up (not loaded with this module)
    from assay.models.anthropic_provider import anthropic_from_env

    return anthropic_from_env()


def _build_openai() -> Provider:
    # lazy: start-up (not loaded with this module)
    from assay.models.openai_provider import openai_from_env

    return openai_from_env()


def _build_openrouter() -> Provider:
    # lazy: start-up (not loaded with this module)
    from assay.models.openai_provider import openrouter_from_env

    return openrouter_from_env()


PROVIDERS.register(
    "anthropic",
    ProviderSpec(
        name="anthropic",
        factory=_build_anthropic,
        key_variables=("ANTHROPIC_API_KEY",),
        bridged=(("ASSAY_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),),
        claims_bare=lambda model: model.startswith("claude"),
        action_input="anthropic-api-key",
        sdk_modules=("anthropic",),
    ),
)
PROVIDERS.register(
    "openai",
    ProviderSpec(
        name="openai",
        factory=_build_openai,
        key_variables=("OPENAI_API_KEY",),
        bridged=(("ASSAY_OPENAI_API_KEY", "OPENAI_API_KEY"),),
        keyless_when=("OPENAI_BASE_URL",),
        action_input="openai-api-key",
        sdk_modules=("openai",),
        extra="openai",
    ),
)
PROVIDERS.register(
    "openrouter",
    ProviderSpec(
        name="openrouter",
        factory=_build_openrouter,
        # Never OPENAI_API_KEY: that is OpenAI's key, not to be sent to another company.
        key_variables=("OPENROUTER_API_KEY",),
        bridged=(("ASSAY_OPENROUTER_API_KEY", "OPENROUTER_API_KEY"),),
        action_input="openrouter-api-key",
        sdk_modules=("openai",),
        extra="openai",
    ),
)


def _build_bedrock() -> Provider:
    # lazy: start-up (not loaded with this module)
    from assay.models.bedrock_provider import bedrock_from_env

    return bedrock_from_env()


def _build_vertex() -> Provider:
    # lazy: start-up (not loaded with this module)
    from assay.models.vertex_provider import vertex_from_env

    return vertex_from_env()


def _build_gemini() -> Provider:
    # lazy: start-up (not loaded with this module)
    from assay.models.gemini_provider import gemini_from_env

    return gemini_from_env()


PROVIDERS.register(
    "bedrock",
    ProviderSpec(
        name="bedrock",
        factory=_build_bedrock,
        # AWS's standard chain: keys (with AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN), or a
        # Bedrock API key; a profile or web identity (OIDC) needs no key in the environment.
        key_variables=("AWS_ACCESS_KEY_ID", "AWS_BEARER_TOKEN_BEDROCK"),
        companions=("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
        keyless_when=(
            "AWS_PROFILE",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        ),
        price=_bedrock_price,
        # The SDK signs requests with botocore, which boto3 brings.
        sdk_modules=("anthropic", "boto3"),
        extra="bedrock",
    ),
)
PROVIDERS.register(
    "vertex",
    ProviderSpec(
        name="vertex",
        factory=_build_vertex,
        # An OAuth token, or Application Default Credentials (a key or federation file,
        # what google-github-actions/auth writes).
        key_variables=("GOOGLE_OAUTH_ACCESS_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS"),
        keyless_when=("GOOGLE_GHA_CREDS_PATH",),
        price=_vertex_price,
        sdk_modules=("anthropic", "google.auth"),
        extra="vertex",
    ),
)
PROVIDERS.register(
    "gemini",
    ProviderSpec(
        name="gemini",
        factory=_build_gemini,
        key_variables=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        bridged=(("ASSAY_GEMINI_API_KEY", "GEMINI_API_KEY"),),
        claims_bare=lambda model: model.startswith("gemini-"),
        action_input="gemini-api-key",
        # httpx2: the transport the adapter gives the SDK (gemini_provider.py).
        sdk_modules=("google.genai", "httpx2"),
        extra="gemini",
    ),
)
