"""What a model provider is (`ProviderSpec`), the registry that lists them, and their keys.

The built-in providers are registered in providers.py, which imports each adapter (and its
SDK) only when its factory is called; plugins add theirs through the `assay.providers`
entry point group. The credential rules (bridged variables, which key is missing) are
read from the specs here, by the planner (names.py) and by the adapters alike.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay._util.entrypoints import Registry, spec_or_factory
from assay._util.secrets import declare_provider_variables

if TYPE_CHECKING:
    from assay.core.usage import Usage
    from assay.models.base import Provider

__all__ = [
    "BARE_FALLBACK",
    "PROVIDERS",
    "ProviderFactory",
    "ProviderSpec",
    "bridge_env",
    "list_price",
    "credentials_problem",
    "missing_provider_credentials",
    "provider_spec",
    "warden_key_variables",
]

ProviderFactory = Callable[[], "Provider"]
Pricer = Callable[[str, "Usage"], "float | None"]


def warden_key_variables(provider: str) -> tuple[str, str]:
    """Warden's key variables for a provider prefix: `WARDEN_<P>_API_KEY`, `<P>_API_KEY`.

    `<P>` is the prefix upper-cased with `-` as `_` (Warden's `providerEnvPrefix`).
    """
    prefix = provider.upper().replace("-", "_")
    return f"WARDEN_{prefix}_API_KEY", f"{prefix}_API_KEY"


def list_price(model: str, usage: Usage) -> float | None:
    from assay.models.pricing import cost_usd  # lazy: start-up (not loaded with this module)

    return cost_usd(model, usage)


@dataclass(frozen=True)
class ProviderSpec:
    """Everything assay knows about one model provider."""

    name: str
    """The prefix of `name/<model>` strings."""
    factory: ProviderFactory
    """Builds the adapter with an authenticated client (raises ModelUnavailable when it cannot)."""
    key_variables: tuple[str, ...] | None = None
    """Variables any one of which holds a usable key; None means Warden's `<NAME>_API_KEY`;
    empty means the provider needs no key at all (a local server, an in-process fake)."""
    bridged: tuple[tuple[str, str], ...] = ()
    """(source, target): a prefixed key another tool sets, copied into `target` when unset."""
    keyless_when: tuple[str, ...] = ()
    """Variables whose presence makes a key unnecessary (a custom base URL: Ollama, vLLM)."""
    companions: tuple[str, ...] = ()
    """Credentials that go with a key rather than being one (AWS_SECRET_ACCESS_KEY beside
    AWS_ACCESS_KEY_ID): an agent CLI running this provider's model sees them with the key."""
    claims_bare: Callable[[str], bool] | None = None
    """Which bare model names (no `provider/`) mean this provider."""
    action_input: str | None = None
    """The Action input that carries the key (`anthropic-api-key`), if the Action has one."""
    sdk_modules: tuple[str, ...] = ()
    """The third-party modules its adapter imports, which a run starts importing in the
    background before the first call (`preload.py`); each must parse no Python source
    with `ast` as it is imported (see `preload._PARSES_SOURCE`). Empty: imported at the
    first call."""
    extra: str | None = None
    """The pyproject extra that installs those modules (`assay[bedrock]`); None when they
    are core dependencies. The Action's lock holds every built-in provider's extra."""
    price: Pricer = list_price
    """USD cost of one call's usage of a model, or None when unknown."""

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"invalid provider name {self.name!r}")
        # Redacted, masked in CI and kept from verification commands from now on.
        declare_provider_variables(
            (*self.credential_variables(), *self.companions), self.keyless_when
        )

    @property
    def keys(self) -> tuple[str, ...]:
        """The key variables, Warden's `<NAME>_API_KEY` when none were declared."""
        if self.key_variables is None:
            return (warden_key_variables(self.name)[1],)
        return self.key_variables

    def credential_variables(self) -> tuple[str, ...]:
        """Every variable that can carry this provider's key (secrets, masks, messages)."""
        sources = tuple(source for source, target in self.bridged if target in self.keys)
        warden = (warden_key_variables(self.name)[0],) if self.keys else ()
        return tuple(dict.fromkeys((*self.keys, *sources, *warden)))

    def agent_variables(self) -> tuple[str, ...]:
        """The credentials an agent CLI running this provider's model needs: its key
        variables and their companions."""
        return tuple(dict.fromkeys((*self.credential_variables(), *self.companions)))


PROVIDERS: Registry[ProviderSpec] = Registry(
    "assay.providers",
    what="model provider",
    adapt=spec_or_factory(ProviderSpec, factory_is="a factory"),
)


def provider_spec(name: str) -> ProviderSpec | None:
    return PROVIDERS.get(name)


BARE_FALLBACK = "openai"
"""A bare model name no provider claims is an OpenAI-compatible model (a local vLLM model)."""

# Warden's `WARDEN_<PROVIDER>_API_KEY`, for every provider, registered or not.
_WARDEN_KEY = re.compile(r"WARDEN_([A-Z0-9_]+_API_KEY)")


def bridge_env(environ: Mapping[str, str] | None = None) -> None:
    """Copy prefixed keys (ASSAY_ANTHROPIC_API_KEY, WARDEN_<P>_API_KEY) into the standard
    variable when it is unset."""
    env = os.environ if environ is None else environ
    pairs: dict[str, str] = {}
    for name in PROVIDERS.names():
        spec = PROVIDERS.get(name)
        if spec is not None:
            pairs.update(spec.bridged)
    pairs.update({name: match[1] for name in env if (match := _WARDEN_KEY.fullmatch(name))})
    for source, target in pairs.items():
        if env.get(source) and not env.get(target):
            os.environ[target] = env[source]


def credentials_problem(
    spec: ProviderSpec, shown: str, environ: Mapping[str, str] | None = None
) -> str | None:
    """None when `spec`'s provider can be called; otherwise the reason (`shown` names the
    model), naming the variable to set.

    A provider may need no key at all, or none when a variable says where a keyless server
    is (an OpenAI-compatible server on a custom base URL: Ollama, llama.cpp).
    """
    env = os.environ if environ is None else environ
    if not spec.keys:
        return None
    if any(env.get(v) for v in spec.credential_variables()):
        return None
    if any(env.get(v) for v in spec.keyless_when):
        return None
    return f"no credentials for {shown}: set {spec.keys[0]}"


def missing_provider_credentials(name: str) -> str | None:
    """What an adapter's factory checks first: `credentials_problem` of provider `name`."""
    spec = PROVIDERS.get(name)
    assert spec is not None, name  # the adapters are built-in providers, always registered
    return credentials_problem(spec, f"{name}/*")
