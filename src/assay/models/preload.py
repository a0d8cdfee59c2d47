"""Importing the provider SDKs in the background while a run builds its first sandboxes.

The anthropic SDK and its HTTP stack are some 3,000 modules (2-3 s on a loaded runner):
without this, every case of the first round waits for that import at its first model
call. A run that will call a model starts it here in a daemon thread as it starts, so
the import overlaps planning the report directory and building sandboxes (git processes
and file I/O, during which the interpreter lock is free). What the overlap buys under the
GIL is measured in docs/performance.md ("Per-case cost").

Only a run imports them: `validate`, `list` and `--version` never call this.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Iterable
from concurrent.futures import Future

from assay.models.names import provider_of

__all__ = ["sdk_imports_done", "sdk_modules_for", "start_sdk_imports"]

_pending: list[Future[None]] = []
"""Done when the import thread this process started has finished; emptied once waited on."""

_CALL_PATH = ("aiohttp",)
"""The transport every adapter imports besides its SDK."""

_PARSES_SOURCE = ("anyio", "anyio.abc")
"""Imported on the calling thread first: these parse their own source with `ast` at import.

On CPython 3.11 two threads in `ast` at once corrupt its shared recursion counter
("SystemError: AST constructor recursion depth mismatch"), and the main thread parses too
(assay reads its models' attribute docstrings with `ast` as it builds their schemas). So the
thread imports only third-party packages that parse nothing, and never assay's own
modules. `tests/models/test_preload.py` holds every built-in provider's modules to it, by
hooking `compile(..., PyCF_ONLY_AST)` while they import in the thread.
"""


def start_sdk_imports(models: Iterable[str]) -> threading.Thread | None:
    """Start importing what calls to `models` need; None when there is nothing to import."""
    modules = sdk_modules_for(models)
    if not modules:
        return None
    for name in _PARSES_SOURCE:
        importlib.import_module(name)
    done: Future[None] = Future()
    done.set_running_or_notify_cancel()  # a waiter cancelled must not cancel it for the rest
    thread = threading.Thread(
        target=_import_all,
        args=((*_CALL_PATH, *modules), done),
        name="assay-sdk-import",
        daemon=True,
    )
    _pending.append(done)
    thread.start()
    return thread


def sdk_modules_for(models: Iterable[str]) -> list[str]:
    """The SDK modules calls to `models` import, as each provider's `ProviderSpec` says."""
    return sorted({module for m in models for module in provider_of(m).sdk_modules})


async def sdk_imports_done() -> None:
    """Wait, without blocking the event loop, for the background imports to finish.

    The first call waits here rather than on the import lock of a module the thread is
    half-way through, so the loop keeps building sandboxes and other cases meanwhile. The
    wait takes no worker thread: every case of the first round waits at once, and the
    sandboxes still to build need the loop's thread pool.
    """
    while _pending:
        done = _pending[-1]
        await asyncio.wrap_future(done)
        if _pending and _pending[-1] is done:
            _pending.pop()


def _import_all(modules: tuple[str, ...], done: Future[None]) -> None:
    try:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - the first call imports it again and reports
                continue
    finally:
        done.set_result(None)
