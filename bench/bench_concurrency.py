"""How close concurrent model calls get to the ideal wall time.

Runs `assay.models.generate` (registry, limiter, retries, pricing, the real anthropic SDK)
against the loopback FakeAnthropic, which answers every call after a fixed latency. With
perfect concurrency, N calls at concurrency C take N x latency / C; the ratio of the
measured wall time to that ideal is the overhead (1.0 = none).

    python bench/bench_concurrency.py            # 20 calls at c=1, 200 at c=8 and c=32
    python bench/bench_concurrency.py --calls 256 --latency 0.2 --concurrency 32

`ratio` is the best of `--repeats` bursts over the ideal. N / C rarely divides evenly:
200 calls at c=32 need ceil(200/32) = 7 rounds of calls, so no client can beat 7 / 6.25
= 1.12 there; `floor` shows that bound beside the ratio.
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
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.models import Message, ModelRequest, generate  # noqa: E402
from assay.options import RunOptions  # noqa: E402
from tests.fakes.anthropic_api import FakeAnthropic, text_reply  # noqa: E402

DEFAULT_PLAN = ((1, 20), (8, 200), (32, 200))


def small_request(index: int) -> ModelRequest:
    return ModelRequest(
        model="anthropic/claude-haiku-4-5",
        system="You answer briefly.",
        messages=(Message("user", ({"type": "text", "text": f"ping {index}"},)),),
        max_tokens=16,
    )


async def run_calls(calls: int, concurrency: int, repeats: int) -> list[float]:
    """Wall times of `repeats` bursts of `calls` calls, on one client (as in a real run)."""
    options = RunOptions(concurrency=concurrency)
    # Open the client and its `concurrency` connections outside the clock.
    await asyncio.gather(
        *(generate(small_request(-i), options=options) for i in range(concurrency))
    )
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        await asyncio.gather(*(generate(small_request(i), options=options) for i in range(calls)))
        walls.append(time.perf_counter() - started)
    return walls


def serve_fake(latency_s: float, conn: Connection) -> None:
    """The fake runs in its own process, so its threads do not share our interpreter lock."""
    # A ThreadingHTTPServer's default listen backlog (5) would drop the SYNs of a burst
    # of 32 new connections, and each dropped SYN costs a 1 s TCP retransmit.
    socketserver.TCPServer.request_queue_size = 128
    with FakeAnthropic(responder=lambda body: text_reply("pong"), latency_s=latency_s) as fake:
        conn.send(fake.url)
        conn.recv()  # until the benchmark is done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per call (default 0.2)")
    parser.add_argument("--calls", type=int, help="calls per burst (default: 20 at c=1, else 200)")
    parser.add_argument(
        "--concurrency", type=int, action="append", help="repeatable (default 1, 8, 32)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="bursts per concurrency (default 3)")
    args = parser.parse_args()
    plan = (
        [(c, args.calls or (20 if c == 1 else 200)) for c in args.concurrency]
        if args.concurrency
        else [(c, args.calls or n) for c, n in DEFAULT_PLAN]
    )
    print(f"python {platform.python_version()} on {platform.platform()}, {os.cpu_count()} CPUs")
    print(
        f"fake latency {args.latency * 1000:.0f} ms per call; real anthropic SDK; assay.models.generate"
    )
    print(
        f"{'c':>4} {'calls':>6} {'ideal s':>8} {'best s':>8} {'median s':>9} {'ratio':>6} {'floor':>6}"
    )
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=serve_fake, args=(args.latency, theirs)
    )
    server.start()
    try:
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench-not-a-real-key"
        os.environ["ANTHROPIC_BASE_URL"] = ours.recv()
        for concurrency, calls in plan:
            walls = asyncio.run(run_calls(calls, concurrency, args.repeats))
            ideal = calls * args.latency / concurrency
            floor = math.ceil(calls / concurrency) * args.latency / ideal
            best, median = min(walls), statistics.median(walls)
            print(
                f"{concurrency:>4} {calls:>6} {ideal:>8.2f} {best:>8.2f} {median:>9.2f}"
                f" {best / ideal:>6.2f} {floor:>6.2f}"
            )
    finally:
        ours.send("stop")
        server.join(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
