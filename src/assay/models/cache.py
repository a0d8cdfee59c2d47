"""Record/replay of model calls (`--cache DIR`, `--offline`).

An entry is keyed by the sha256 of the canonical request: provider, model, system,
messages, tools, tool_choice, max_tokens, temperature and purpose, serialised as sorted
JSON. Never keys, headers or base URLs: a recording made against one endpoint replays
anywhere. Entries live at `<dir>/<purpose>/<key[:2]>/<key>.json`, so judge verdicts sit
apart from agent calls and changing an assertion re-judges without re-running the agent.

A replayed call returns the recorded usage and cost, so a rerun reports the same numbers.
A corrupt entry is logged, ignored and overwritten by the fresh answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from assay.core.usage import Usage
from assay.models.base import ModelRequest, ModelResponse

__all__ = ["CacheEntryFile", "CacheStats", "ResponseCache", "request_key"]

logger = logging.getLogger("assay.models")

CACHE_FORMAT: Literal[1] = 1
PURPOSES = ("agent", "judge")

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
    """Entries that could not be read and were refetched."""


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
            entry = _read_entry(path, key)
        except FileNotFoundError:
            self.stats.misses += 1
            return None
        except (OSError, ValidationError, ValueError) as exc:
            # OSError: a directory or an unreadable file sits where the entry belongs.
            reason = str(exc).splitlines()[0]
            logger.warning("ignoring corrupt cache entry %s (%s); fetching again", path, reason)
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

    def store(self, provider: str, request: ModelRequest, response: ModelResponse) -> Path:
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
        _write_atomically(path, entry.model_dump_json(indent=1).encode("utf-8"))
        self.stats.writes += 1
        return path

    # -- maintenance (`assay cache stats|prune`) ----------------------------------------
    def entries(self, *, on_warning: Warn | None = None) -> Iterator[StoredEntry]:
        """Every entry file, including symlinks (a dangling one too: it only costs misses).

        A directory where an entry belongs is not one: it is skipped, with a warning,
        and never removed, since assay did not make it.
        """
        warn = on_warning or _ignore
        for purpose in PURPOSES:
            for path in sorted((self.root / purpose).glob("??/*.json")):
                try:
                    info = _entry_stat(path)
                except FileNotFoundError:
                    continue  # removed since the listing (a concurrent prune)
                except OSError as exc:
                    warn(f"skipping {path}: {exc.strerror or exc}")
                    continue
                if stat.S_ISDIR(info.st_mode):
                    warn(f"skipping {path}: a directory, not a cache entry")
                    continue
                yield StoredEntry(path, purpose, info.st_size, info.st_mtime)

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
                    entry.path.unlink(missing_ok=True)
                except OSError as exc:
                    warn(f"cannot remove {entry.path}: {exc.strerror or exc}")
                    continue
                removed.append(entry)
        for shard in {e.path.parent for e in removed}:
            try:
                shard.rmdir()
            except OSError:
                pass  # still holds other entries
        return removed


def _read_entry(path: Path, key: str) -> CacheEntryFile:
    entry = CacheEntryFile.model_validate_json(path.read_bytes())
    if entry.key != key:
        raise ValueError(f"entry is for key {entry.key[:12]}")
    return entry


def _entry_stat(path: Path) -> os.stat_result:
    """What the entry points at (a replay touches that), or the link when it points nowhere."""
    try:
        return path.stat()
    except FileNotFoundError:
        return path.lstat()


def _ignore(_message: str) -> None:
    pass


def _touch(path: Path) -> None:
    # A replay counts as use, so `prune --older-than` keeps what runs still need.
    try:
        os.utime(path)
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
