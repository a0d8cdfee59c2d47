"""CPU per model call, layer by layer: the bare SDK, assay's adapter, and `models.generate`.

A benchmark, not a test. In one process, against the loopback FakeAnthropic served from
its own process (as bench_review_cost does), the same review-shaped request is sent
sequentially N times through each of:

- the bare anthropic SDK (`messages.with_raw_response.create` on its aiohttp client);
- `AnthropicProvider.generate` (assay's adapter: the request built, the body read);
- `assay.models.generate` (the adapter, plus the name, limiter, retry, timeout and price);

in interleaved rounds, so that drift in the machine's speed falls on all three alike.
Last, `generate` over a provider that answers at once: its own work, without the SDK.

    .venv/bin/python bench/bench_model_layer.py --calls 400 --rounds 6
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cache import KEY  # noqa: E402
from bench_review_cost import serve_fake  # noqa: E402

MODEL = "claude-haiku-4-5"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per layer per round")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=serve_fake, args=(0.0, theirs, False), daemon=True
    )
    server.start()
    url = ours.recv()
    os.environ.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=url)
    try:
        layers, own = asyncio.run(measure(url, args.calls, args.rounds))
    finally:
        ours.send("stop")
        server.join(timeout=10)
    for name, per_call in layers.items():
        rounds = ", ".join(f"{ms:.3f}" for ms in per_call)
        print(f"{name:9s} median {statistics.median(per_call):.3f} ms a call ({rounds})")
    print(f"generate's own work (a provider that answers at once): {own * 1e6:.1f} us a call")
    return 0


async def measure(url: str, calls: int, rounds: int) -> tuple[dict[str, list[float]], float]:
    import anthropic

    from assay.models.api import generate
    from assay.models.base import Message, ModelRequest, ToolSpec
    from assay.models.registry import provider_for

    tool = ToolSpec(
        name="list_dir",
        description="List a directory.",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    )
    prompt = "case 1 reads the handler. " * 40
    request = ModelRequest(
        model=f"anthropic/{MODEL}",
        system="You review code. " * 20,
        messages=(Message(role="user", content=[{"type": "text", "text": prompt}]),),
        tools=(tool,),
        tool_choice="any",
        max_tokens=1024,
    )
    body = {
        "model": MODEL,
        "max_tokens": 1024,
        "system": [
            {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
        ],
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        "tools": [
            {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        ],
        "tool_choice": {"type": "any"},
    }
    client = anthropic.AsyncAnthropic(
        api_key=KEY, base_url=url, max_retries=0, http_client=anthropic.DefaultAioHttpClient()
    )
    adapter = await provider_for("anthropic")
    wire_request = dataclasses.replace(request, model=MODEL)

    async def bare() -> None:
        await client.messages.with_raw_response.create(**body)

    async def through_adapter() -> None:
        await adapter.generate(wire_request)

    async def through_generate() -> None:
        await generate(request)

    layers: dict[str, Callable[[], Awaitable[None]]] = {
        "bare SDK": bare,
        "adapter": through_adapter,
        "generate": through_generate,
    }
    try:
        for call in layers.values():  # warm: connections, caches, first-use imports
            for _ in range(30):
                await call()
        per_call: dict[str, list[float]] = {name: [] for name in layers}
        for _ in range(rounds):
            for name, call in layers.items():
                started = time.process_time()
                for _ in range(calls):
                    await call()
                per_call[name].append((time.process_time() - started) / calls * 1000)
    finally:
        await client.close()
    return per_call, await _own_work(request)


async def _own_work(request: object) -> float:
    """CPU seconds per `generate` call over a provider that answers at once, minus the
    provider's own call."""
    from assay.core.usage import Usage
    from assay.models.api import generate
    from assay.models.base import ModelRequest, ModelResponse
    from assay.models.providers import PROVIDERS
    from assay.models.scope import BuiltProvider, close_provider, current_scope

    assert isinstance(request, ModelRequest)

    class Instant:
        name = "anthropic"

        async def generate(self, request: ModelRequest) -> ModelResponse:
            usage = Usage(input_tokens=100, output_tokens=10)
            return ModelResponse([{"type": "text", "text": "x"}], "end_turn", usage)

    spec = PROVIDERS.get("anthropic")
    assert spec is not None
    scope = await current_scope()
    await close_provider(scope.providers["anthropic"].provider)  # the real adapter's client
    scope.providers["anthropic"] = BuiltProvider(spec.factory, Instant())  # type: ignore[arg-type]
    instant = Instant()
    n = 20_000
    for _ in range(1000):
        await generate(request)
    started = time.process_time()
    for _ in range(n):
        await instant.generate(request)
    direct = time.process_time() - started
    started = time.process_time()
    for _ in range(n):
        await generate(request)
    return (time.process_time() - started - direct) / n


if __name__ == "__main__":
    sys.exit(main())
