"""The one place that decides which environment variables hold credentials.

Three uses, one rule: a child process that needs no credentials (a verification command)
must not see them; the agent under test, which needs its model's key but reads untrusted
code, must not see what belongs to the CI job (its GitHub token, the Actions runtime, the
files that steer later steps); and no text assay writes (error messages, agent output
tails, transcripts, reports, the PR comment) may contain credential values.

A variable is a credential by its name (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, the
GitHub token names; `-` counts as `_`, so the Action's `INPUT_ANTHROPIC-API-KEY` is one)
or by its value (a URL with a password, `postgres://user:pw@host/db`). Values assay learns
otherwise (the Action's inputs) are added with `remember_secret` and redacted everywhere
from then on.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Collection, Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

__all__ = [
    "MASK",
    "agent_environ",
    "declare_provider_variables",
    "holds_credential",
    "longest_secret_bytes",
    "mask_strings",
    "redact",
    "redact_chunks",
    "redact_file",
    "redact_json",
    "remember_secret",
    "scrubbed_environ",
    "secret_values",
    "written_forms",
]

MASK = "[redacted]"
_CREDENTIAL_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET")
_CREDENTIAL_PARTS = ("PASSWORD", "PASSWD")
_URL_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*:([^/?#@\s]+)@")
"""`scheme://user:password@host...`: the value of a DATABASE_URL-style variable."""
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


_provider_keys: set[str] = set()
"""Key variables the model providers declare (a plugin's may not look like `*_KEY`)."""
_provider_settings: set[str] = set()
"""Other variables of theirs (base URLs) that a verification command has no business seeing."""


def declare_provider_variables(keys: Collection[str], settings: Collection[str] = ()) -> None:
    """A model provider's key variables are credentials whatever their names; `settings`
    (its endpoint) are kept from verification commands like the built-in providers' own."""
    _provider_keys.update(name.upper() for name in keys)
    _provider_settings.update(name.upper() for name in settings)


_remembered: set[str] = set()
"""Secret values assay was told about (the Action's inputs), beyond its environment's."""


def remember_secret(value: str) -> None:
    """Redact `value` from every text assay writes from now on (when long enough)."""
    value = value.strip()
    if len(value) >= _MIN_SECRET_LENGTH:
        _remembered.add(value)


def holds_credential(name: str, value: str = "") -> bool:
    """Whether the variable is a credential by its name, or by its value (a URL with a
    password); its value is then redacted and kept from verification commands."""
    upper = name.upper().replace("-", "_")
    return (
        upper in _CREDENTIAL_NAMES
        or upper in _provider_keys
        or upper.endswith(_CREDENTIAL_SUFFIXES)
        or any(part in upper for part in _CREDENTIAL_PARTS)
        or _URL_PASSWORD.match(value) is not None
    )


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


def scrubbed_environ(
    base: Mapping[str, str] | None = None, *, pass_names: Collection[str] = ()
) -> dict[str, str]:
    """A copy of `base` (default os.environ) for a child that needs no credentials.

    `pass_names` are credential-shaped variables the user let through (`--pass-env`,
    `[tool.assay] pass_env`); what belongs to the CI job never passes.
    """
    source = os.environ if base is None else base
    allowed = set(pass_names)
    return {
        name: value
        for name, value in source.items()
        if not _belongs_to_the_job(name)
        and (
            name in allowed
            or (
                not holds_credential(name, value)
                and not name.upper().startswith(_WITHHELD_PREFIXES)
                and name.upper() not in _provider_settings
            )
        )
    }


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the credential variables of `environ` (default os.environ, plus what was
    remembered), longest first; for a URL with a password, the URL and the password.

    Every transcript, result line and report asks this of the same environment, so the
    answer is kept per (environment, what was remembered, what providers declared): the
    environment is only read, never classified again, until one of them changes.
    """
    env = os.environ if environ is None else environ
    # os.environ's own store (undecoded, its objects kept) is the cheap key: decoding
    # every variable to compare costs about as much as classifying them.
    raw = getattr(env, "_data", None) if env is os.environ else None
    snapshot: tuple[tuple[Any, Any], ...] = tuple((raw if raw is not None else env).items())
    remembered = frozenset(_remembered) if environ is None else frozenset()
    key = (snapshot, remembered, frozenset(_provider_keys))
    known = _secret_values_seen.get(key)
    if known is None:
        known = _classify(tuple(env.items()), remembered)
        if len(_secret_values_seen) >= _SEEN_ENVIRONMENTS:
            _secret_values_seen.clear()
        _secret_values_seen[key] = known
    return list(known)


_SEEN_ENVIRONMENTS = 16
"""How many distinct environments `secret_values` remembers (a run has one or two)."""
_secret_values_seen: dict[
    tuple[tuple[tuple[Any, Any], ...], frozenset[str], frozenset[str]], tuple[str, ...]
] = {}


def _classify(items: tuple[tuple[str, str], ...], remembered: frozenset[str]) -> tuple[str, ...]:
    values = set(remembered)
    for name, value in items:
        if not holds_credential(name, value):
            continue
        values.add(value)
        match = _URL_PASSWORD.match(value)
        if match:
            values.add(match[1])
    return tuple(sorted((v for v in values if len(v) >= _MIN_SECRET_LENGTH), key=len, reverse=True))


def redact(text: str, environ: Mapping[str, str] | None = None, *, mask: str = MASK) -> str:
    """`text` with every credential value of `environ` replaced by `mask`.

    assay's own secrets (its environment's and the remembered ones) are masked too: a
    child's environment never holds the CI job's tokens, yet the child may have found them.
    Longest first, so a secret that contains another is replaced whole. Configuration such
    as ANTHROPIC_BASE_URL is not a credential and stays readable.
    """
    return _replace_all(text, _known_secrets(environ), mask)


def redact_chunks(
    chunks: Iterable[str], environ: Mapping[str, str] | None = None, *, mask: str = MASK
) -> Iterator[str]:
    """`redact` over text that comes in pieces: joined, the pieces it yields are what
    `redact` gives for the joined text, though no more than about 1 MiB is held at once.
    """
    secrets = _known_secrets(environ)
    if not secrets:
        yield from chunks
        return
    yield from _masked_pieces(chunks, secrets, mask)


_Text = TypeVar("_Text", str, bytes)


def _masked_pieces(chunks: Iterable[_Text], secrets: list[_Text], mask: _Text) -> Iterator[_Text]:
    """`chunks` with every occurrence of `secrets` masked, in batches of about 1 MiB.

    A secret may straddle two pieces, so what is held is cut only where no occurrence of
    any secret crosses the cut; the rest waits for the next piece.
    """
    longest = max(map(len, secrets))
    empty = mask[:0]  # "" or b"", whichever the text is
    held = empty
    pending: list[_Text] = []
    size = 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size < _REDACT_BATCH + longest:
            continue
        text = held + empty.join(pending)
        cut = _uncrossed_cut(text, secrets, len(text) - longest)
        yield _replace_all(text[:cut], secrets, mask)
        held, pending, size = text[cut:], [], len(text) - cut
    yield _replace_all(held + empty.join(pending), secrets, mask)


_REDACT_BATCH = 1 << 20
"""Text is masked in batches of about this many characters (or bytes)."""


def _uncrossed_cut(text: _Text, secrets: list[_Text], cut: int) -> int:
    """The largest position <= `cut` that no occurrence of any of `secrets` crosses."""
    moved = True
    while moved:
        moved = False
        for value in secrets:
            # an occurrence crossing `cut` lies within [cut - len + 1, cut + len - 1)
            start = text.find(value, max(cut - len(value) + 1, 0), cut + len(value) - 1)
            if start != -1 and start < cut:
                cut, moved = start, True
    return cut


def _replace_all(text: _Text, secrets: list[_Text], mask: _Text) -> _Text:
    for value in secrets:
        text = text.replace(value, mask)
    return text


def _secret_set(environ: Mapping[str, str] | None) -> frozenset[str]:
    """Assay's own secret values, and those of `environ` when given."""
    own = secret_values()
    return frozenset(own if environ is None else {*own, *secret_values(environ)})


def _known_secrets(environ: Mapping[str, str] | None) -> list[str]:
    """Every secret assay knows, as written in text or in JSON, longest first."""
    return list(written_forms(_secret_set(environ)))


def longest_secret_bytes(environ: Mapping[str, str] | None = None) -> int:
    """The UTF-8 length of the longest text `redact(..., environ)` masks (0: none): how
    much more than it shows a tail must keep for a secret reaching into it to be masked."""
    return max((len(form.encode()) for form in _known_secrets(environ)), default=0)


@lru_cache(maxsize=16)
def written_forms(values: frozenset[str]) -> tuple[str, ...]:
    """`values` and the forms JSON writes them in: a password holding `"`, `\\` or a
    tab appears escaped in report.json, results.jsonl and transcripts, where looking for
    the value as it is would miss it (`\\u` escapes too: json.dumps' default)."""
    forms = set(values)
    for value in values:
        forms.add(json.dumps(value, ensure_ascii=False)[1:-1])
        forms.add(json.dumps(value)[1:-1])
    return tuple(sorted(forms, key=len, reverse=True))


def mask_strings(data: Any, secrets: Iterable[str], mask: str = MASK) -> Any:
    """`data` (decoded JSON) with every occurrence of `secrets` in its strings, keys
    included, replaced by `mask`, at any depth."""
    ordered = sorted(set(secrets), key=len, reverse=True)  # a secret holding another first
    if not ordered:
        return data

    def clean(node: Any) -> Any:
        if isinstance(node, str):
            return _replace_all(node, ordered, mask)
        if isinstance(node, dict):
            return {clean(key): clean(value) for key, value in node.items()}
        if isinstance(node, list | tuple):
            return [clean(item) for item in node]
        return node

    return clean(data)


def redact_json(text: str, environ: Mapping[str, str] | None = None, *, mask: str = MASK) -> str:
    """JSON `text` with every credential value inside its strings masked; `text` itself
    (the same object) when it holds none.

    The strings are masked as the values they decode to, not as text: a secret JSON
    escapes is found, and a mask never lands inside an escape (a tab before `ok_...`
    is `\\tok_...` in JSON, which masking the text for a secret `tok_...` would turn
    into the invalid `\\[redacted]`).
    """
    values = _secret_set(environ)
    if not any(form in text for form in written_forms(values)):
        return text
    masked = mask_strings(json.loads(text), values, mask)
    return json.dumps(masked, ensure_ascii=False, separators=(",", ":"))


def redact_file(path: Path, environ: Mapping[str, str] | None = None, *, mask: str = MASK) -> None:
    """Rewrite the file at `path` with every credential value of `environ` masked.

    For transcripts an agent wrote: they are uploaded as CI artifacts. An agent's capture
    may be 64 MiB, so the file is read in pieces, twice at most: once to look for a secret
    and, only when there is one, once more to write the masked copy that replaces it.
    """
    secrets = [value.encode() for value in _known_secrets(environ)]
    if not secrets:
        return
    try:
        with path.open("rb") as source:
            if not _holds_any(_file_pieces(source), secrets):
                return
            source.seek(0)
            masked = path.with_name(f".{path.name}.redacted")
            with masked.open("wb") as out:
                out.writelines(_masked_pieces(_file_pieces(source), secrets, mask.encode()))
    except FileNotFoundError:  # the program never started: nothing was written
        return
    os.chmod(masked, stat.S_IMODE(os.stat(path).st_mode))  # as the agent's file was
    os.replace(masked, path)


def _file_pieces(file: BinaryIO) -> Iterator[bytes]:
    while piece := file.read(_REDACT_BATCH):
        yield piece


def _holds_any(pieces: Iterable[bytes], secrets: list[bytes]) -> bool:
    """Whether any of `secrets` occurs in the joined `pieces` (one may straddle two)."""
    overlap = max(map(len, secrets)) - 1
    tail = b""
    for piece in pieces:
        window = tail + piece
        if any(value in window for value in secrets):
            return True
        tail = window[-overlap:] if overlap else b""
    return False
