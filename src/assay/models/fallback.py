"""The same model through another provider: where a default model runs when its own
provider has no key here but another that serves the same model family has.

OpenRouter serves other companies' models under `<vendor>/<name>`, each vendor's name in
OpenRouter's spelling: Anthropic's `claude-sonnet-4-6` is OpenRouter's
`anthropic/claude-sonnet-4.6` (versions with dots, no dated snapshots). Only these
pairs are known; any other model has no equivalent and is never moved.

Only a default model nobody chose is moved (`Case.model_is_default`, the runner's
DEFAULT_MODEL): a model the user named runs where they named it, or is skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from assay.models.names import parse_model, provider_of

__all__ = ["equivalents", "has_key", "same_model_elsewhere"]

_DIGIT_DOT_DIGIT = re.compile(r"(?<=\d)\.(?=\d)")
_DIGIT_DASH_DIGIT = re.compile(r"(?<=\d)-(?=\d(?!\d))")
_SNAPSHOT = re.compile(r"-\d{8}$")

_VENDORS = {"anthropic": "anthropic", "openai": "openai", "google": "gemini"}
"""OpenRouter's vendor prefix -> the provider that serves the vendor's models itself."""


def equivalents(model: str) -> tuple[str, ...]:
    """The other spellings of `model` on providers that serve the same model, best first."""
    parsed = parse_model(model)
    if parsed.provider == "openrouter":
        vendor, _, name = parsed.name.partition("/")
        provider = _VENDORS.get(vendor)
        if provider is None or not name:
            return ()
        if provider == "anthropic":
            name = _DIGIT_DOT_DIGIT.sub("-", name)
        return (f"{provider}/{name}",)
    own = next((v for v, p in _VENDORS.items() if p == parsed.provider), None)
    if own is None:
        return ()
    name = parsed.name
    if own == "anthropic":
        name = _DIGIT_DASH_DIGIT.sub(".", _SNAPSHOT.sub("", name))
    return (f"openrouter/{own}/{name}",)


def has_key(model: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether a key for `model`'s provider is set (a keyless local server does not count:
    it serves whatever models it has, not necessarily this one)."""
    env = os.environ if environ is None else environ
    spec = provider_of(model)
    return any(env.get(variable) for variable in spec.credential_variables())


def same_model_elsewhere(model: str, environ: Mapping[str, str] | None = None) -> str | None:
    """`model` on another provider that has a key here, or None."""
    return next((other for other in equivalents(model) if has_key(other, environ)), None)
