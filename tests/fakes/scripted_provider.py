"""An in-process model provider answering from a Python function (no network, no SDK).

Register it under a test-only provider name; model strings `<name>/<anything>` then go
through the real `assay.models.generate` (registry, retries, pricing) to `respond`:

    with scripted_provider(lambda request: reply(tool_call("submit_findings", {...}))) as fake:
        ... run the agent with model "fake/reviewer" ...
    fake.requests  # every ModelRequest it saw
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from assay.core.usage import Usage
from assay.models.base import ModelRequest, ModelResponse
from assay.models.registry import register_provider

Responder = Callable[[ModelRequest], ModelResponse]
_ids = itertools.count(1)


def tool_call(name: str, arguments: Any, *, call_id: str | None = None) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call_id or f"toolu_{next(_ids):04d}",
        "name": name,
        "input": arguments,
    }


def text(body: str) -> dict[str, Any]:
    return {"type": "text", "text": body}


def reply(
    *blocks: dict[str, Any], input_tokens: int = 100, output_tokens: int = 20
) -> ModelResponse:
    uses_tools = any(block["type"] == "tool_use" for block in blocks)
    return ModelResponse(
        content=list(blocks),
        stop_reason="tool_use" if uses_tools else "end_turn",
        usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
    )


class ScriptedProvider:
    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.requests: list[ModelRequest] = []

    async def generate(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.respond(request)

    def purposes(self) -> list[str]:
        return [request.purpose for request in self.requests]


def sequence(*responses: ModelResponse) -> Responder:
    """A responder giving `responses` in order (a test fails loudly if it asks for more)."""
    pending = list(responses)

    def respond(request: ModelRequest) -> ModelResponse:
        assert pending, f"the script ran out of responses at request {request.messages[-1]}"
        return pending.pop(0)

    return respond


@contextmanager
def scripted_provider(respond: Responder, *, name: str = "fake") -> Iterator[ScriptedProvider]:
    provider = ScriptedProvider(respond)
    register_provider(name, lambda: provider)
    yield provider
