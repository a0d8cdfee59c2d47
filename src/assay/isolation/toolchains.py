"""The toolchains installed under HOME that a confined program may still run, read-only.

The OS sandbox replaces HOME with an empty tmpfs: `~/.ssh`, `~/.git-credentials`,
`~/.config/gh`, `~/.docker/config.json`, `~/.cargo/credentials.toml` must not reach a
hostile agent. But toolchains live there too: on GitHub's runners `cargo` is
`~/.cargo/bin/cargo` (a rustup proxy that reads `~/.rustup`), pipx tools sit in
`~/.local/bin`, pyenv's shims in `~/.pyenv/shims`. Without them a verification command
(`cargo test`) is "not found" where PVYai, which has no sandbox, runs it: a wrong verdict.

So what PATH asks for stays runnable, and nothing else of HOME shows:

- each PATH entry under HOME is bound read-only at its own path, unless it is HOME
  itself, a symlink (its target decides what it is: left out), inside another masked
  directory (a suite checkout, the report dir: `isolation/exposure.py` decides what of
  those shows), or under a directory that holds credentials (`CREDENTIAL_DIRS`);
- beside an entry of a version manager, the data directory it needs
  (`VERSION_MANAGERS`: rustup's toolchains for `~/.cargo/bin`, never the rest of
  `~/.cargo`; pyenv's, nvm's, volta's and asdf's homes), and `$GOROOT` under HOME;
- a credentials file directly inside an exposed directory (`CREDENTIAL_FILES`) is
  covered all the same.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CREDENTIAL_DIRS",
    "CREDENTIAL_FILES",
    "VERSION_MANAGERS",
    "HomeToolchains",
    "home_toolchains",
]

CREDENTIAL_DIRS = frozenset(
    {".ssh", ".gnupg", ".aws", ".azure", ".config", ".docker", ".kube", ".password-store"}
)
"""Directories directly under HOME that hold keys and tokens: nothing in them is shown,
even on PATH."""
CREDENTIAL_FILES = frozenset(
    {
        "credentials",
        "credentials.toml",
        ".git-credentials",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".yarnrc.yml",
    }
)
"""Files that hold tokens, covered where an exposed directory holds them."""


@dataclass(frozen=True)
class VersionManager:
    """A tool whose PATH entries need a data directory beside them."""

    home_variable: str
    """The variable naming its home (`CARGO_HOME`), else `default` under HOME."""
    default: str
    on_path: str
    """Where under its home its PATH entries lie (`bin` for cargo; "" for anywhere)."""
    data_variable: str
    """The variable naming the directory it reads (`RUSTUP_HOME`; the home's own for the
    others), else `data_default` under HOME."""
    data_default: str


VERSION_MANAGERS = (
    # cargo's proxies run the toolchains rustup keeps; ~/.cargo also holds crates.io's token.
    VersionManager("CARGO_HOME", ".cargo", "bin", "RUSTUP_HOME", ".rustup"),
    VersionManager("PYENV_ROOT", ".pyenv", "", "PYENV_ROOT", ".pyenv"),
    VersionManager("NVM_DIR", ".nvm", "", "NVM_DIR", ".nvm"),
    VersionManager("VOLTA_HOME", ".volta", "", "VOLTA_HOME", ".volta"),
    VersionManager("ASDF_DATA_DIR", ".asdf", "", "ASDF_DATA_DIR", ".asdf"),
)


@dataclass(frozen=True)
class HomeToolchains:
    exposed: tuple[Path, ...] = ()
    """Directories under HOME bound read-only in every confinement."""
    covered: tuple[Path, ...] = ()
    """Credentials files inside them, made unreadable."""


def home_toolchains(environ: Mapping[str, str], *, masked: Iterable[Path]) -> HomeToolchains:
    """What of HOME the programs of a run may still run (see the module's docstring).

    `masked` are the run's other masked directories (suite checkouts, the report dir):
    what lies in them is never exposed here."""
    home = _directory(environ.get("HOME", ""))
    if home is None:
        return HomeToolchains()
    others = [Path(os.path.realpath(path)) for path in masked]
    others = [path for path in others if path != home]

    def usable(path: Path) -> bool:
        if path == home or not path.is_relative_to(home) or not path.is_dir():
            return False
        if path.relative_to(home).parts[0] in CREDENTIAL_DIRS:
            return False
        if Path(os.path.realpath(path)) != path:  # a link: where it leads is not HOME's
            return False
        return not any(path.is_relative_to(other) for other in others)

    entries = [
        Path(os.path.normpath(entry))
        for entry in environ.get("PATH", "").split(os.pathsep)
        if os.path.isabs(entry)
    ]
    exposed = dict.fromkeys(entry for entry in entries if usable(entry))
    for manager in VERSION_MANAGERS:
        tool_home = _under(home, environ.get(manager.home_variable), manager.default)
        where = tool_home / manager.on_path if manager.on_path else tool_home
        if any(entry == where or entry.is_relative_to(where) for entry in exposed):
            data = _under(home, environ.get(manager.data_variable), manager.data_default)
            if usable(data):
                exposed[data] = None
    goroot = _directory(environ.get("GOROOT", ""))
    if goroot is not None and usable(goroot):
        exposed[goroot] = None
    covered = [
        directory / name
        for directory in exposed
        for name in sorted(CREDENTIAL_FILES)
        if os.path.lexists(directory / name)
    ]
    return HomeToolchains(tuple(exposed), tuple(covered))


def _directory(raw: str) -> Path | None:
    if not raw or not os.path.isabs(raw) or not os.path.isdir(raw):
        return None
    return Path(os.path.realpath(raw))


def _under(home: Path, raw: str | None, default: str) -> Path:
    """A tool's directory: the variable's value when set (absolute), else `default` in HOME."""
    if raw and os.path.isabs(raw):
        return Path(os.path.normpath(raw))
    return home / default
