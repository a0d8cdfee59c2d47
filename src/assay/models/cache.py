"""Record/replay of model calls (`--cache DIR`, `--offline`).

An entry is keyed by the sha256 of the canonical request: provider, model, system,
messages, tools, tool_choice, max_tokens, temperature, purpose, sample and (only when
set) thinking, serialised as sorted JSON. Never keys, headers or base URLs: a recording
made against one endpoint replays anywhere. Entries live at
`<dir>/<purpose>/<key[:2]>/<key>.json`, so judge verdicts sit apart from agent calls and
changing an assertion re-judges without re-running the agent.

A replayed call returns the recorded usage and cost, so a rerun reports the same numbers.
A corrupt entry is logged and treated as a miss; the fresh answer, when the model is
called, replaces it.

A cache directory may come from elsewhere (restored from a CI cache, shared on a team
drive), so nothing in it is trusted: no symbolic link inside it is followed (an entry or
a directory that is one is a miss, never read, written through or pruned through), only
a regular file is read, opened non-blocking (a FIFO cannot hang the run), and none past
MAX_ENTRY_BYTES (`_util/untrusted_files.py`). `prune` removes only files named and placed
as entries are.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from assay._util.untrusted_files import UntrustedFileError, file_kind, read_untrusted
from assay.core.usage import Usage
from assay.models._http import MAX_RESPONSE_BYTES
from assay.models.base import ModelRequest, ModelResponse

__all__ = [
    "MAX_ENTRY_BYTES",
    "CacheEntryFile",
    "CacheStats",
    "ResponseCache",
    "cache_dir_problem",
    "request_key",
]

logger = logging.getLogger("assay.models")

CACHE_FORMAT: Literal[1] = 1
PURPOSES = ("agent", "judge")
MAX_ENTRY_BYTES = MAX_RESPONSE_BYTES
"""An entry is one response, which is never read off the wire past this bound; `store`
writes no larger entry, so `load` refuses a larger file unread."""
_SHARD_NAME = re.compile(r"[0-9a-f]{2}")
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.json")
_NO_LINKS = "assay follows no symbolic link inside its cache"

Warn = Callable[[str], None]


def request_key(provider: str, request: ModelRequest) -> str:
    """sha256 of the canonical request; `request.model` is the provider's own model id."""
    canonical = {
        "format": CACHE_FORMAT,
        "provider": provider,
        "model": request.model,
        "system": request.system,
        "messages": [{"role": m.role, "content": list(m.content)} for m in request.messages],
        "tools": [asdict(t) for t in request.tools],
        "tool_choice": request.tool_choice,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "purpose": request.purpose,
        "sample": request.sample,
    }
    if request.thinking is not None:  # absent otherwise: keys recorded before it still match
        canonical["thinking"] = request.thinking
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _RecordedResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: list[dict[str, Any]]
    """The response's content blocks, as the provider adapter returned them."""
    stop_reason: str


class CacheEntryFile(BaseModel):
    """One recorded call, as stored on disk."""

    model_config = ConfigDict(extra="forbid")
    format: Literal[1]
    key: str
    """The request key; also the file name."""
    provider: str
    model: str
    purpose: Literal["agent", "judge"]
    recorded_at: str
    """UTC time of the recording, ISO 8601."""
    response: _RecordedResponse
    usage: Usage
    """Tokens and cost of the original call, reported again on every replay."""


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0
    corrupt: int = 0
    """Entries that could not be read (each is a miss too)."""


@dataclass(frozen=True)
class StoredEntry:
    path: Path
    purpose: str
    size: int
    mtime: float


class ResponseCache:
    """One cache directory; hit/miss counts accumulate over the process."""

    _instances: ClassVar[dict[Path, ResponseCache]] = {}

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stats = CacheStats()

    @classmethod
    def for_dir(cls, root: Path) -> ResponseCache:
        """The shared instance for `root`, so every call of a run counts in one place."""
        resolved = Path(root).expanduser().resolve()
        instance = cls._instances.get(resolved)
        if instance is None:
            instance = cls._instances[resolved] = cls(resolved)
        return instance

    def path_for(self, purpose: str, key: str) -> Path:
        return self.root / purpose / key[:2] / f"{key}.json"

    def load(self, provider: str, request: ModelRequest) -> ModelResponse | None:
        """The recorded response, or None (a miss; a corrupt entry is a miss too)."""
        key = request_key(provider, request)
        path = self.path_for(request.purpose, key)
        try:
            entry = self._read_entry(request.purpose, key)
        except FileNotFoundError:
            self.stats.misses += 1
            return None
        except (OSError, UntrustedFileError, ValidationError, ValueError) as exc:
            # OSError: an unreadable file; UntrustedFileError: a link, a FIFO, a directory,
            # a device, or a file too large to be an entry sits where the entry belongs.
            logger.warning(
                "ignoring corrupt cache entry %s: %s; treated as a miss", path, _problem(exc)
            )
            self.stats.corrupt += 1
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        _touch(path)
        return ModelResponse(
            content=entry.response.content,
            stop_reason=entry.response.stop_reason,
            usage=entry.usage.model_copy(),
        )

    def store(self, provider: str, request: ModelRequest, response: ModelResponse) -> Path | None:
        """Record `response`; None when it is not recorded (said in a warning): too large
        for `load` to read back, or its directory in the cache is a link."""
        key = request_key(provider, request)
        entry = CacheEntryFile(
            format=CACHE_FORMAT,
            key=key,
            provider=provider,
            model=request.model,
            purpose=request.purpose,
            recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
            response=_RecordedResponse(content=response.content, stop_reason=response.stop_reason),
            usage=response.usage,
        )
        path = self.path_for(request.purpose, key)
        data = entry.model_dump_json(indent=1).encode("utf-8")
        if len(data) > MAX_ENTRY_BYTES:
            logger.warning(
                "not recording %s: %d bytes, over the %d byte limit of an entry",
                path,
                len(data),
                MAX_ENTRY_BYTES,
            )
            return None
        if where := self._unsafe_directory(request.purpose, key):
            logger.warning("not recording %s: it is %s (%s)", path, where, _NO_LINKS)
            return None
        _write_atomically(path, data)
        self.stats.writes += 1
        return path

    def _read_entry(self, purpose: str, key: str) -> CacheEntryFile:
        if where := self._unsafe_directory(purpose, key):
            raise UntrustedFileError(f"is {where}", "link")
        raw = read_untrusted(self.path_for(purpose, key), max_bytes=MAX_ENTRY_BYTES)
        entry = CacheEntryFile.model_validate_json(raw)
        if entry.key != key:
            raise ValueError(f"entry is for key {entry.key[:12]}")
        return entry

    def _unsafe_directory(self, purpose: str, key: str) -> str | None:
        """`in DIR, which is a symbolic link` (or not a directory at all) for the first of
        the directories an entry lives in that is one; a missing one is fine (it is made
        when needed)."""
        for directory in (self.root / purpose, self.root / purpose / key[:2]):
            problem = _not_a_real_directory(directory)
            if problem:
                return f"in {directory}, which is {problem}"
        return None

    # -- maintenance (`assay cache stats|prune`) ----------------------------------------
    def entries(self, *, on_warning: Warn | None = None) -> Iterator[StoredEntry]:
        """Every entry file: `<purpose>/<xx>/<key>.json`, the key a sha256 in hex that starts
        with `xx`. A link at an entry's name is one (it only costs misses; removing it
        leaves what it points at alone).

        Nothing else is: a directory (or a FIFO, a device) where an entry belongs, a file of
        another name, and anything reached through a linked directory is skipped with a
        warning, and never removed, since assay did not make it.
        """
        warn = on_warning or _ignore
        for purpose in PURPOSES:
            folder = self.root / purpose
            problem = _not_a_real_directory(folder)
            if problem:
                warn(f"skipping {folder}: {problem}, not a cache directory ({_NO_LINKS})")
                continue
            for shard in _listing(folder, warn):
                if shard.name.startswith("."):
                    continue
                if not (_SHARD_NAME.fullmatch(shard.name) and _is_real_directory(shard)):
                    warn(f"skipping {shard.path}: not part of the cache")
                    continue
                for item in _listing(Path(shard.path), warn):
                    if not item.name.startswith("."):  # a write in progress
                        found = _stored_entry(item, purpose, shard.name, warn)
                        if found is not None:
                            yield found

    def prune(
        self, *, older_than_s: float | None = None, on_warning: Warn | None = None
    ) -> list[StoredEntry]:
        """Remove entries not used for `older_than_s` seconds (all when None)."""
        warn = on_warning or _ignore
        cutoff = None if older_than_s is None else time.time() - older_than_s
        removed = []
        for entry in list(self.entries(on_warning=warn)):
            if cutoff is None or entry.mtime < cutoff:
                try:
                    self._remove(entry)
                except FileNotFoundError:
                    pass  # removed since the listing (a concurrent prune)
                except OSError as exc:
                    warn(f"cannot remove {entry.path}: {exc.strerror or exc}")
                    continue
                removed.append(entry)
        for shard in {e.path.parent for e in removed}:
            try:
                with _directory(self.root / shard.parent.name) as folder:
                    os.rmdir(shard.name, dir_fd=folder)
            except OSError:
                pass  # still holds other entries (or was swapped for a link: left alone)
        return removed

    def _remove(self, entry: StoredEntry) -> None:
        """Unlink `entry` through descriptors opened without following links, so a
        directory swapped for a link since the listing cannot steer the removal."""
        with _directory(self.root / entry.purpose) as folder:
            with _directory(entry.path.parent.name, dir_fd=folder) as shard:
                os.unlink(entry.path.name, dir_fd=shard)


def cache_dir_problem(path: Path, *, must_exist: bool) -> str | None:
    """Why `path` cannot be a cache directory (`--cache`), or None. A missing one is fine
    for a run (the first recording makes it) unless `must_exist`."""
    if path.is_dir():
        return None
    if path.exists():
        return "is a file, not a cache directory" if path.is_file() else "is not a directory"
    if must_exist:
        return "no such cache directory"
    existing = next((p for p in path.absolute().parents if p.exists()), None)
    if existing is not None and not existing.is_dir():
        return f"cannot be made: {existing} is a file, not a directory"
    return None


def _stored_entry(
    item: os.DirEntry[str], purpose: str, shard: str, warn: Warn
) -> StoredEntry | None:
    path = Path(item.path)
    if not (_ENTRY_NAME.fullmatch(item.name) and item.name.startswith(shard)):
        warn(f"skipping {path}: not a cache entry")
        return None
    try:
        info = item.stat(follow_symlinks=False)
    except FileNotFoundError:
        return None  # removed since the listing (a concurrent prune)
    except OSError as exc:
        warn(f"skipping {path}: {exc.strerror or exc}")
        return None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        warn(f"skipping {path}: {file_kind(info.st_mode)}, not a cache entry")
        return None
    return StoredEntry(path, purpose, info.st_size, info.st_mtime)


def _listing(folder: Path, warn: Warn) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as found:
            return sorted(found, key=lambda item: item.name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        warn(f"skipping {folder}: {exc.strerror or exc}")
        return []


def _is_real_directory(item: os.DirEntry[str]) -> bool:
    try:
        return item.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _not_a_real_directory(path: Path) -> str | None:
    """What is at `path` when it is not a plain directory (a symbolic link, or not a
    directory at all); None for a directory, or for nothing."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return None if stat.S_ISDIR(mode) else "not a directory"


@contextmanager
def _directory(path: Path | str, *, dir_fd: int | None = None) -> Iterator[int]:
    """A directory's descriptor, opened without following a link (OSError if it is one)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def _problem(exc: Exception) -> str:
    """What is wrong with an entry, in a few words (pydantic's own first line only says
    `1 validation error for CacheEntryFile`)."""
    if isinstance(exc, UntrustedFileError):
        return f"the file {exc.problem}" + (f"; {_NO_LINKS}" if exc.reason == "link" else "")
    if isinstance(exc, ValidationError):
        # lazy: start-up (not loaded with this module)
        from assay._util.json_schema import describe_validation_error

        return describe_validation_error(exc, limit=1)
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc).splitlines()[0]


def _ignore(_message: str) -> None:
    pass


def _touch(path: Path) -> None:
    # A replay counts as use, so `prune --older-than` keeps what runs still need.
    try:
        os.utime(path, follow_symlinks=False)
    except OSError:
        pass


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:12]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
