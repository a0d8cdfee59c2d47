"""How close concurrent model calls get to the ideal wall time.

Runs bursts of `assay.models.generate` calls (registry, limiter, retries, pricing, the
real anthropic SDK) against the loopback FakeAnthropic, which answers every call after a
fixed latency. With perfect concurrency, N calls at concurrency C take N x latency / C;
`ratio` is the best measured wall time over that ideal (1.00 = no overhead).

    python bench/bench_concurrency.py            # 20 calls at c=1, 200 at c=8 and c=32
    python bench/bench_concurrency.py --calls 256 --concurrency 32 --repeats 5

Two references sit beside the ratio:
- `floor`: N / C rarely divides evenly; 200 calls at c=32 need ceil(200/32) = 7 rounds,
  so nothing can beat 7 / 6.25 = 1.12 there.
- `sdk` and `sdk+aio`: the same burst through the bare SDK under an asyncio.Semaphore,
  with its default httpx transport and with its aiohttp one (which assay uses), i.e.
  what the SDK and this machine cost before assay adds anything.
The fake runs in its own process so its threads do not compete for our interpreter lock.
Before measuring, the collector is settled as the `assay` console script does it.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import os
import platform
import socketserver
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from pathlib import Path

import anthropic

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.anthropic_api import FakeAnthropic, text_reply  # noqa: E402

from assay._util.heap import settle_after_startup  # noqa: E402
from assay.models import Message, ModelRequest, generate  # noqa: E402
from assay.options import RunOptions  # noqa: E402

DEFAULT_PLAN = ((1, 20), (8, 200), (32, 200))
MODEL = "claude-haiku-4-5"
SYSTEM = "You answer briefly."
KEY = "sk-ant-bench-not-a-real-key"


def small_request(index: int) -> ModelRequest:
    return ModelRequest(
        model=f"anthropic/{MODEL}",
        system=SYSTEM,
        messages=(Message("user", ({"type": "text", "text": f"ping {index}"},)),),
        max_tokens=16,
    )


async def bursts(
    call: Callable[[int], Awaitable[object]], calls: int, concurrency: int, repeats: int
) -> list[float]:
    """Wall times of `repeats` bursts of `calls` calls; connections are opened beforehand."""
    await asyncio.gather(*(call(-i) for i in range(concurrency)))
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        await asyncio.gather(*(call(i) for i in range(calls)))
        walls.append(time.perf_counter() - started)
    return walls


async def through_assay(calls: int, concurrency: int, repeats: int) -> list[float]:
    options = RunOptions(concurrency=concurrency)

    async def call(index: int) -> object:
        return await generate(small_request(index), options=options)

    return await bursts(call, calls, concurrency, repeats)


async def through_bare_sdk(
    base_url: str, calls: int, concurrency: int, repeats: int, *, aiohttp: bool
) -> list[float]:
    transport = {"http_client": anthropic.DefaultAioHttpClient()} if aiohttp else {}
    client = anthropic.AsyncAnthropic(api_key=KEY, base_url=base_url, max_retries=0, **transport)
    gate = asyncio.Semaphore(concurrency)

    async def call(index: int) -> object:
        async with gate:
            return await client.messages.create(
                model=MODEL,
                max_tokens=16,
                system=[{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": [{"type": "text", "text": f"ping {index}"}]}],
            )

    try:
        return await bursts(call, calls, concurrency, repeats)
    finally:
        await client.close()


def serve_fake(latency_s: float, conn: Connection) -> None:
    # socketserver's default listen backlog (5) is too small for a burst of new
    # connections: opening 64 at once failed with connection errors in a trial.
    socketserver.TCPServer.request_queue_size = 128
    with FakeAnthropic(responder=lambda body: text_reply("pong"), latency_s=latency_s) as fake:
        conn.send(fake.url)
        conn.recv()  # until the benchmark is done


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per call (default 0.2)")
    parser.add_argument("--calls", type=int, help="calls per burst (default: 20 at c=1, else 200)")
    parser.add_argument(
        "--concurrency", type=int, action="append", help="repeatable (default 1, 8, 32)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="bursts per row (default 3)")
    args = parser.parse_args()
    levels = args.concurrency or [c for c, _ in DEFAULT_PLAN]
    plan = [(c, args.calls or (20 if c == 1 else 200)) for c in levels]

    print(f"python {platform.python_version()} on {platform.platform()}, {os.cpu_count()} CPUs")
    print(f"fake latency {args.latency * 1000:.0f} ms/call; best of {args.repeats} bursts per row")
    header = ("c", "calls", "ideal s", "assay s", "median s", "ratio", "floor", "sdk", "sdk+aio")
    print("{:>4} {:>6} {:>8} {:>8} {:>9} {:>6} {:>6} {:>6} {:>8}".format(*header))
    settle_after_startup()
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=serve_fake, args=(args.latency, theirs)
    )
    server.start()
    try:
        base_url = ours.recv()
        os.environ["ANTHROPIC_API_KEY"] = KEY
        os.environ["ANTHROPIC_BASE_URL"] = base_url
        for concurrency, calls in plan:
            walls = asyncio.run(through_assay(calls, concurrency, args.repeats))
            bare, bare_aio = (
                asyncio.run(
                    through_bare_sdk(base_url, calls, concurrency, args.repeats, aiohttp=aio)
                )
                for aio in (False, True)
            )
            ideal = calls * args.latency / concurrency
            floor = math.ceil(calls / concurrency) * args.latency / ideal
            row = (concurrency, calls, ideal, min(walls), statistics.median(walls))
            print(
                "{:>4} {:>6} {:>8.2f} {:>8.2f} {:>9.2f}".format(*row)
                + f" {min(walls) / ideal:>6.2f} {floor:>6.2f} {min(bare) / ideal:>6.2f}"
                + f" {min(bare_aio) / ideal:>8.2f}"
            )
    finally:
        ours.send("stop")
        server.join(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
