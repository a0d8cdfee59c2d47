"""The responses an attempt's bridge served through OpenAI's Responses API, by their id.

A Responses client may send only what is new plus `previous_response_id`: the server is
to know the conversation before it. The bridge keeps, per attempt, each response's whole
conversation as Responses input items (what came in, then what the model answered), so a
request naming it continues it. Only responses asked to be stored are kept (`store` is not
`false`, as the API does), and only within bounds: the newest `MAX_RESPONSES`, at most
`MAX_BYTES` of conversation in all (counted as JSON; a conversation shares its earlier
items with the one it continues, so the memory held is less). The oldest go first; one
larger than the whole bound is not kept. An id the bridge does not hold is the API's own
400 (`previous_response_not_found`).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_BYTES", "MAX_RESPONSES", "Conversation", "StoredResponses"]

MAX_RESPONSES = 200
"""Responses kept per attempt: far more turns than a case's agent takes."""
MAX_BYTES = 32 * 1024 * 1024
"""Conversation kept per attempt, as JSON: the largest request the bridge takes (a client
that sends the whole conversation every turn with `store` left on has each one kept, so
this is also about what an attempt's bridge holds in memory)."""


@dataclass(frozen=True)
class Conversation:
    """A stored response's conversation: Responses input items, its output last."""

    items: tuple[dict[str, Any], ...]
    size: int
    """Its items' length as JSON, counted as each turn added to it."""


class StoredResponses:
    """One attempt's stored conversations, oldest first."""

    def __init__(self, *, max_responses: int = MAX_RESPONSES, max_bytes: int = MAX_BYTES) -> None:
        self.max_responses = max_responses
        self.max_bytes = max_bytes
        self._by_id: OrderedDict[str, Conversation] = OrderedDict()
        self.bytes = 0
        self.served = 0
        """Responses answered in the attempt, stored or not: the count their ids come from."""

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, response_id: object) -> bool:
        return response_id in self._by_id

    def conversation(self, response_id: str) -> Conversation | None:
        """The conversation `response_id` ended; None when it is not kept."""
        return self._by_id.get(response_id)

    def keep(
        self, response_id: str, *, before: Conversation | None, added: list[dict[str, Any]]
    ) -> bool:
        """Keep the conversation of `response_id`: `before` (the one its request continued,
        as it was read then) and `added` (the request's new input, then the response's
        output). False when it is over the bound alone."""
        size = (before.size if before else 0) + len(json.dumps(added, ensure_ascii=False))
        if size > self.max_bytes:
            return False
        self._drop(response_id)
        self._by_id[response_id] = Conversation((*(before.items if before else ()), *added), size)
        self.bytes += size
        while len(self._by_id) > self.max_responses or self.bytes > self.max_bytes:
            self._drop(next(iter(self._by_id)))
        return True

    def _drop(self, response_id: str) -> None:
        stored = self._by_id.pop(response_id, None)
        if stored is not None:
            self.bytes -= stored.size
