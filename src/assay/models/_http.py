"""HTTP plumbing shared by the SDK clients."""

from __future__ import annotations

import ssl
from functools import cache

__all__ = ["shared_ssl_context"]


@cache
def shared_ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every client in the process.

    Each SDK client otherwise loads the CA bundle again (about 0.1 s of CPU), and a
    client is built per event loop. The context is the SDKs' own default, built once.
    """
    import httpx2  # the HTTP library both SDKs are built on

    return httpx2.create_ssl_context()
