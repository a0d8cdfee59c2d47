"""The one HTTP client for talking to carriers."""

from __future__ import annotations

import functools

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

CONNECT_TIMEOUT_S = 3.05
READ_TIMEOUT_S = 10
USER_AGENT = "shipping-service/0.7 (+https://status.example.com)"


class _TimeoutAdapter(HTTPAdapter):
    def send(self, request, **kwargs):  # type: ignore[override]
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)
        return super().send(request, **kwargs)


@functools.cache
def client() -> requests.Session:
    retry = Retry(
        total=3,
        backoff_factor=0.5,
        status_forcelist=(429, 500, 502, 503, 504),
        allowed_methods=frozenset({"GET", "POST"}),
    )
    session = requests.Session()
    session.headers["User-Agent"] = USER_AGENT
    adapter = _TimeoutAdapter(max_retries=retry)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session
