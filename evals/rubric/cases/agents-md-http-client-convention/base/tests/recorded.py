"""Replay recorded carrier responses instead of calling carriers in tests."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

RECORDINGS = Path(__file__).parent / "recordings"


@contextlib.contextmanager
def recorded_responses(name: str) -> Iterator[None]:
    payload = json.loads((RECORDINGS / name).read_text())
    response = mock.Mock(status_code=200)
    response.json.return_value = payload
    response.raise_for_status.return_value = None
    with mock.patch("requests.Session.post", return_value=response):
        yield
