"""Load `Settings` from defaults, an optional TOML file and `APP_*` environment variables."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENV_PREFIX = "APP_"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class ConfigError(ValueError):
    """A setting is unknown or has a value of the wrong type."""


@dataclasses.dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    debug: bool = False
    workers: int = 2
    request_timeout: float = 30.0
    database_url: str = "sqlite:///app.db"


# The annotations above are strings (postponed evaluation), so the runtime types live here.
_FIELD_TYPES: dict[str, type] = {
    "host": str,
    "port": int,
    "debug": bool,
    "workers": int,
    "request_timeout": float,
    "database_url": str,
}


def _check_type(name: str, value: Any, origin: str) -> Any:
    expected = _FIELD_TYPES[name]
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is not expected:
        raise ConfigError(f"{origin}: {name} must be {expected.__name__}, got {value!r}")
    return value


def _parse_env(variable: str, raw: str, expected: type) -> Any:
    """Convert the text of an environment variable to the setting's type."""
    text = raw.strip()
    if expected is bool:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ConfigError(f"{variable} must be one of {sorted(_TRUE | _FALSE)}, got {raw!r}")
    if expected is str:
        return raw
    try:
        return expected(text)
    except ValueError:
        raise ConfigError(f"{variable} must be {expected.__name__}, got {raw!r}") from None


def load_settings(
    path: Path | None = None, *, environ: Mapping[str, str] | None = None
) -> Settings:
    """Defaults, overridden by the [app] table of the TOML file at `path` when given, then by
    `APP_<SETTING>` variables from `environ` (the process environment when None).

    Variables with the prefix that name no setting are ignored: the prefix is shared with
    other tools in the deployment.
    """
    values: dict[str, Any] = {}
    if path is not None:
        with path.open("rb") as fh:
            table = tomllib.load(fh).get("app", {})
        for name, value in table.items():
            if name not in _FIELD_TYPES:
                raise ConfigError(f"{path}: unknown setting {name!r}")
            values[name] = _check_type(name, value, str(path))

    env = os.environ if environ is None else environ
    for name, expected in _FIELD_TYPES.items():
        variable = ENV_PREFIX + name.upper()
        if variable in env:
            values[name] = _parse_env(variable, env[variable], expected)
    return Settings(**values)
