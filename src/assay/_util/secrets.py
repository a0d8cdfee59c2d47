"""The one place that decides which environment variables hold credentials.

Three uses, one rule: a child process that needs no credentials (a verification command)
must not see them; the agent under test, which needs its model's key but reads untrusted
code, must not see what belongs to the CI job (its GitHub token, the Actions runtime, the
files that steer later steps); and no text assay writes (error messages, agent output
tails, transcripts, reports, the PR comment) may contain credential values.

A variable is a credential by its name (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`,
`*CREDENTIAL*`, `*WEBHOOK*`, a part `AUTH...` but not `AUTHOR`, the GitHub token names; `-`
counts as `_`, so the Action's `INPUT_ANTHROPIC-API-KEY` is one) or by its value (a URL
with a password, `postgres://user:pw@host/db`; a value that is or holds a word of at least
20 characters starting with a known key prefix: `sk-`, `ghp_`, `ghs_`, `gho_`, `ghu_`,
`ghr_`, `github_pat_`, `xox`, `AKIA`, `ASIA`, `AIza`). Values assay learns otherwise (the
Action's inputs) are added with `remember_secret` and redacted everywhere from then on.
A value (or a password or key inside one) shorter than 8 characters is no secret.

Redaction is one rule (`assay._util.masking`): each secret is looked for in every form
it can be written in (`assay._util.secret_forms`: as it is, JSON-escaped, URL-encoded,
hex, base64 at its three offsets), through any run of control or format characters
between its characters (`core.text.INVISIBLE_CHARACTERS`), and the whole span, those
characters included, becomes `[redacted]`. Text is never normalised outside a match: a
line break next to a secret stays. Every output (the report, each file of the report
directory, the terminal and CI log, the job summary, workflow-command annotations, the
PR comment, the check run) goes through `redact`, `redact_chunks`, `redact_json` or
`redact_file`.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
from collections.abc import Collection, Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from assay._util.masking import found_forms, holds_any, mask_forms, uncrossed_cut, visible_start
from assay._util.secret_forms import secret_forms

__all__ = [
    "MASK",
    "agent_environ",
    "declare_provider_variables",
    "holds_credential",
    "json_may_hold",
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
_CREDENTIAL_PARTS = ("PASSWORD", "PASSWD", "CREDENTIAL", "WEBHOOK")
_NOT_AUTH = frozenset({"AUTHOR", "AUTHORS"})
"""Name parts that start with AUTH and are no credential (`GIT_AUTHOR_NAME`)."""
_KEY_SHAPED = re.compile(
    r"(?<![^\s\"'=:,;])"  # at the start of the value or of a word in it
    r"(?:sk-|gh[psour]_|github_pat_|xox|AKIA|ASIA|AIza)[^\s\"',;]{16,}"
)
"""A word that starts with a known key prefix and is long enough to be a key (AWS key
ids, the shortest, have 20 characters): `sk-learn` is a package, not a key."""
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
    password, a key-shaped word); its value is then redacted and kept from verification
    commands."""
    upper = name.upper().replace("-", "_")
    return (
        upper in _CREDENTIAL_NAMES
        or upper in _provider_keys
        or upper.endswith(_CREDENTIAL_SUFFIXES)
        or any(part in upper for part in _CREDENTIAL_PARTS)
        or any(p.startswith("AUTH") and p not in _NOT_AUTH for p in upper.split("_"))
        or _URL_PASSWORD.match(value) is not None
        or _KEY_SHAPED.search(value) is not None
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
        values.update(_KEY_SHAPED.findall(value))  # a key inside a header or a command line
    return tuple(sorted((v for v in values if len(v) >= _MIN_SECRET_LENGTH), key=len, reverse=True))


def redact(text: str, environ: Mapping[str, str] | None = None, *, mask: str = MASK) -> str:
    """`text` with every credential value of `environ` replaced by `mask`.

    assay's own secrets (its environment's and the remembered ones) are masked too: a
    child's environment never holds the CI job's tokens, yet the child may have found them.
    Longest first, so a secret that contains another is replaced whole. Configuration such
    as ANTHROPIC_BASE_URL is not a credential and stays readable.
    """
    return mask_forms(text, _known_secrets(environ), mask)


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


def _masked_pieces(chunks: Iterable[str], forms: list[str], mask: str) -> Iterator[str]:
    """`chunks` with every match of `forms` masked, in batches of about 1 MiB.

    A secret may straddle two pieces, so what is held is cut only where no match of any
    form crosses the cut (`masking.uncrossed_cut`); the rest waits for the next piece.
    """
    longest = max(map(len, forms))
    held = ""
    pending: list[str] = []
    size = 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size < _REDACT_BATCH + longest:
            continue
        text = held + "".join(pending)
        pending.clear()  # what is held at once bounds the memory a large file takes
        cut = uncrossed_cut(text, forms)
        head, held = text[:cut], text[cut:]
        del text
        yield mask_forms(head, forms, mask)
        size = len(held)
    yield mask_forms(held + "".join(pending), forms, mask)


_REDACT_BATCH = 1 << 20
"""Text is masked in batches of about this many characters."""


def _secret_set(environ: Mapping[str, str] | None) -> frozenset[str]:
    """Assay's own secret values, and those of `environ` when given."""
    own = secret_values()
    return frozenset(own if environ is None else {*own, *secret_values(environ)})


def _known_secrets(environ: Mapping[str, str] | None) -> list[str]:
    """Every form of every secret assay knows (`written_forms`), longest first."""
    return list(written_forms(_secret_set(environ)))


def longest_secret_bytes(environ: Mapping[str, str] | None = None) -> int:
    """The UTF-8 length of the longest form `redact(..., environ)` masks (0: none): how
    much more than it shows a tail must keep for a secret reaching into it to be masked
    (one with invisible characters inside is longer, and may be cut)."""
    return max((len(form.encode()) for form in _known_secrets(environ)), default=0)


@lru_cache(maxsize=16)
def written_forms(values: frozenset[str]) -> tuple[str, ...]:
    """Every form `values` can be written in (`secret_forms`: as they are, as JSON writes
    them, URL-encoded, hex, base64), stripped of invisible characters, longest first. A
    password holding `"`, `\\` or a tab appears escaped in report.json, results.jsonl and
    transcripts, where looking for the value as it is would miss it."""
    forms: set[str] = set()
    for value in values:
        forms |= secret_forms(value, min_length=_MIN_SECRET_LENGTH)
    return tuple(sorted(forms, key=len, reverse=True))


def mask_strings(data: Any, secrets: Iterable[str], mask: str = MASK) -> Any:
    """`data` (decoded JSON) with every occurrence of `secrets` in its strings, keys
    included, replaced by `mask`, at any depth."""
    ordered = written_forms(frozenset(secrets))  # a secret holding another first
    if not ordered:
        return data

    def clean(node: Any) -> Any:
        if isinstance(node, str):
            return mask_forms(node, ordered, mask)
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
    if not json_may_hold(text, values):
        return text
    masked = mask_strings(json.loads(text), values, mask)
    return json.dumps(masked, ensure_ascii=False, separators=(",", ":"))


_JSON_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)")


def json_may_hold(text: str, values: Collection[str]) -> bool:
    """Whether JSON `text` may hold one of `values` in a string (then decode and
    `mask_strings`); False means it surely holds none.

    Looked for with every escape sequence taken out of the text and of each form alike,
    and through invisible characters (`masking.found_forms`), so a secret JSON escapes,
    or holds `\\u0001` in, is seen.
    """
    forms = written_forms(frozenset(values))
    if not forms:
        return False
    if "\\" in text:
        text = _JSON_ESCAPE.sub("", text)
        forms = _unescaped(forms)
    return bool(found_forms(text, forms))


@lru_cache(maxsize=16)
def _unescaped(forms: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_JSON_ESCAPE.sub("", form) for form in forms)


def redact_file(path: Path, environ: Mapping[str, str] | None = None, *, mask: str = MASK) -> None:
    """Rewrite the file at `path` with every credential value of `environ` masked.

    For transcripts an agent wrote: they are uploaded as CI artifacts. An agent's capture
    may be 64 MiB, so the file is read in pieces, twice at most: once to look for a secret
    and, only when there is one, once more to write the masked copy that replaces it.
    """
    forms = _known_secrets(environ)
    if not forms:
        return
    try:
        with path.open("rb") as source:
            if not _holds_any(_file_text(source), forms):
                return
            source.seek(0)
            masked = path.with_name(f".{path.name}.redacted")
            with masked.open("wb") as out:
                for piece in _masked_pieces(_file_text(source), forms, mask):
                    out.write(piece.encode("utf-8", "surrogateescape"))
    except FileNotFoundError:  # the program never started: nothing was written
        return
    os.chmod(masked, stat.S_IMODE(os.stat(path).st_mode))  # as the agent's file was
    os.replace(masked, path)


def _file_text(file: BinaryIO) -> Iterator[str]:
    """The file's bytes as text in pieces; bytes that are not UTF-8 (a raw C1 byte among
    them) become lone surrogates, which encode back to the same bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    while piece := file.read(max(_REDACT_BATCH // 4, 1)):  # a batch is several pieces
        yield decoder.decode(piece)
    yield decoder.decode(b"", final=True)


def _holds_any(pieces: Iterable[str], forms: list[str]) -> bool:
    """Whether any of `forms` matches in the joined `pieces` (one may straddle two)."""
    longest = max(map(len, forms))
    held = ""
    for piece in pieces:
        window = held + piece
        if holds_any(window, forms):
            return True
        held = window[visible_start(window, len(window), longest - 1) :]
    return False
