"""The one place that decides which environment variables hold credentials.

Three uses, one rule: a child process that needs no credentials (a verification command)
must not see them; the agent under test, which needs its model's key but reads untrusted
code, must not see what belongs to the CI job (its GitHub token, the Actions runtime, the
files that steer later steps); and no text assay writes (error messages, agent output
tails, transcripts, reports) may contain credential values.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "MASK",
    "agent_environ",
    "holds_credential",
    "redact",
    "redact_file",
    "scrubbed_environ",
    "secret_values",
]

MASK = "[redacted]"
_CREDENTIAL_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
_CREDENTIAL_NAMES = frozenset({"GITHUB_TOKEN", "GH_TOKEN"})
# What belongs to the CI job rather than to any program it runs: GitHub tokens, the
# Actions runtime's tokens and endpoints, the Action's own inputs (its key and token as
# given), and the files through which a step sets the environment, PATH and outputs of
# the steps after it (a prompt-injected agent writing LD_PRELOAD into GITHUB_ENV would
# run code with the later steps' secrets).
_JOB_NAMES = frozenset(
    {
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GH_ENTERPRISE_TOKEN",
        "GITHUB_ENTERPRISE_TOKEN",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_STATE",
        "GITHUB_STEP_SUMMARY",
    }
)
_JOB_PREFIXES = ("ACTIONS_", "INPUT_")
# Whole families a verification command has no business seeing, credentials or not
# (base URLs and org ids of the model providers), beyond what belongs to the job.
_WITHHELD_PREFIXES = ("ANTHROPIC_", "OPENAI_", "OPENROUTER_")
_MIN_SECRET_LENGTH = 8
"""Shorter values ("1", "on", "abc") are not real secrets, and replacing them would
mangle ordinary text."""


def holds_credential(name: str) -> bool:
    """Whether the variable's name says it holds a credential (its value is redacted)."""
    upper = name.upper()
    return upper in _CREDENTIAL_NAMES or upper.endswith(_CREDENTIAL_SUFFIXES)


def _belongs_to_the_job(name: str) -> bool:
    upper = name.upper()
    return upper in _JOB_NAMES or upper.startswith(_JOB_PREFIXES)


def agent_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `base` (default os.environ) for the agent under test.

    The agent is the user's own program: it keeps its model's key, its provider's
    settings and the caller's environment, but nothing that belongs to the CI job.
    """
    source = os.environ if base is None else base
    return {name: value for name, value in source.items() if not _belongs_to_the_job(name)}


def scrubbed_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `base` (default os.environ) for a child that needs no credentials."""
    source = os.environ if base is None else base
    return {
        name: value
        for name, value in source.items()
        if not holds_credential(name)
        and not name.upper().startswith(_WITHHELD_PREFIXES)
        and not _belongs_to_the_job(name)
    }


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the credential variables of `environ` (default os.environ), longest first."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if holds_credential(name) and len(value) >= _MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str, environ: Mapping[str, str] | None = None, *, mask: str = MASK) -> str:
    """`text` with every credential value of `environ` replaced by `mask`.

    Longest first, so a secret that contains another is replaced whole. Configuration such
    as ANTHROPIC_BASE_URL is not a credential and stays readable.
    """
    for value in secret_values(environ):
        text = text.replace(value, mask)
    return text


def redact_file(path: Path, environ: Mapping[str, str] | None = None, *, mask: str = MASK) -> None:
    """Rewrite the file at `path` with every credential value of `environ` masked.

    For transcripts an agent wrote: they are uploaded as CI artifacts. Read whole (they
    are capped well below memory sizes), written back only when something was masked.
    """
    secrets = secret_values(environ)
    if not secrets:
        return
    try:
        raw = path.read_bytes()
    except FileNotFoundError:  # the program never started: nothing was written
        return
    masked = raw
    for value in secrets:
        masked = masked.replace(value.encode(), mask.encode())
    if masked != raw:
        path.write_bytes(masked)
