"""What the fake model APIs share: scripted answers, a request log, an optional key check.

Answers come from, in order: the queue (`fake.reply(...)`), the `responder(request_json)`
callable, or the API's default answer. A scripted answer is either a body built with the
API module's helpers or a `Reply` (a fault). Faults can also be queued ahead of
everything with `fake.inject(...)` (see loopback.py).
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from typing import Any

from tests.fakes.loopback import LoopbackServer, Reply, Request

__all__ = ["Responder", "Scripted", "ScriptedModelServer", "dropped"]

Scripted = dict[str, Any] | Reply
Responder = Callable[[dict[str, Any]], Scripted]


def dropped() -> Reply:
    """The connection is closed without an answer."""
    return Reply(drop=True)


class ScriptedModelServer(LoopbackServer, ABC):
    """One POST endpoint (`PATH`) answering with scripted bodies; `calls` counts requests.

    Subclasses say what the API looks like: `authorised`, `unauthorised`, `invalid`,
    `default_answer` and `wrap` (a scripted body -> the complete response JSON).
    """

    PATH: str
    """A regular expression the request path fully matches (a literal path for most APIs)."""

    def __init__(
        self,
        *,
        replies: list[Scripted] | None = None,
        responder: Responder | None = None,
        api_key: str | None = None,
        latency_s: float = 0.0,
    ) -> None:
        super().__init__()
        self.responder = responder
        self.api_key = api_key
        """When set, only this key is accepted, like the real API."""
        self.latency_s = latency_s
        self._queue: deque[Scripted] = deque(replies or [])
        self._queue_lock = threading.Lock()
        self.route("POST", self.PATH, self._serve_scripted)

    @property
    def calls(self) -> int:
        return self.count(self.PATH, "POST")

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON body of every request to `PATH`, in arrival order."""
        return [r.json() for r in self.requests if re.fullmatch(self.PATH, r.path)]

    def reply(self, *answers: Scripted) -> None:
        """Queue answers for the next requests (after any injected faults)."""
        with self._queue_lock:
            self._queue.extend(answers)

    def slow_reply(self, delay_s: float, answer: dict[str, Any] | None = None) -> None:
        """The next request is answered correctly, but only after `delay_s` seconds."""
        self.inject(Reply(200, self.wrap(answer or self.default_answer(), {}), delay_s=delay_s))

    # -- what each API defines -----------------------------------------------------
    @abstractmethod
    def authorised(self, request: Request) -> bool: ...

    @abstractmethod
    def unauthorised(self) -> Reply: ...

    @abstractmethod
    def invalid(self, body: Any) -> Reply | None:
        """The real API's most basic checks, so an adapter bug fails loudly."""

    @abstractmethod
    def default_answer(self) -> dict[str, Any]: ...

    @abstractmethod
    def wrap(self, answer: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        """The complete response JSON around a scripted body."""

    # -- serving -------------------------------------------------------------------
    def _serve_scripted(self, request: Request) -> Reply:
        if self.api_key is not None and not self.authorised(request):
            return self.unauthorised()
        body = request.json()
        problem = self.invalid(body)
        if problem is not None:
            return problem
        with self._queue_lock:
            answer = self._queue.popleft() if self._queue else None
        if answer is None:
            answer = self.responder(body) if self.responder else self.default_answer()
        if isinstance(answer, Reply):
            return answer
        return Reply(200, self.wrap(answer, body))
