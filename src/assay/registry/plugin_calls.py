"""Calling code of plugins: whom a message about its mistake names, and what it did.

A plugin's runtime, grader, renderer or format (installed: an entry point) runs inside
assay's own process, so its mistakes reach assay as exceptions and odd return values.
Each is said in one line that names the plugin (its distribution and entry point, when
it has one) and what it did, never as a traceback or as assay's own internal error.
"""

from __future__ import annotations

import asyncio
from typing import Any

from assay._util.entrypoints import Registry, entry_point_origin

__all__ = ["is_interruption", "plugin_origin", "what_it_raised"]


def plugin_origin(registry: Registry[Any], name: str) -> str:
    """`entry point 'x' (= pkg.mod:obj) of distribution 'd' in group 'assay.kind'` for a
    plugin's name; `renderer 'x'` for one assay or a library user registered.

    Looked up again in the installed metadata (only when a message needs it): the registry
    keeps the values it loaded, not where they came from.
    """
    # lazy: start-up (importlib.metadata only on this path)
    from importlib.metadata import entry_points

    for entry_point in entry_points(group=registry.group, name=name):
        return entry_point_origin(entry_point)
    return f"{registry.what} {name!r}"


def is_interruption(exc: BaseException) -> bool:
    """Ctrl-C or a cancelled task: never plugin code's failure, always passed on.

    Anything else plugin code raises is its failure, SystemExit and GeneratorExit included:
    a `sys.exit(0)` in an agent must not end the run as if its gate had passed.
    """
    return isinstance(exc, KeyboardInterrupt | asyncio.CancelledError)


def what_it_raised(exc: BaseException) -> str:
    """`RuntimeError: boom`; `SystemExit(0)` for an exception whose text alone says nothing
    (`str(SystemExit(0))` is `0`)."""
    if not isinstance(exc, Exception):
        return repr(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
