"""The model bridge's overhead per model call: latency and assay's CPU, beside a direct call.

A benchmark, not a test. The loopback FakeAnthropic is served from its own process (as
bench_model_layer does), and a client process plays the agent CLI: the real anthropic SDK
sends the same review-shaped request N times, one after another, either

- `direct`: to the fake itself (what a preset's CLI does with `--bridge off`), or
- `bridge`: to an attempt's bridge in this process (`assay.bridge`), which forwards each
  call through `models.generate` (adapter, limiter, retries, pricing, transcript) to the
  fake; `bridge+sse`: the same, asking for `stream: true` (events synthesised).

in interleaved rounds. Latency is the client's wall time per call; the bridge's CPU is
this process's CPU time per call while the client runs (the bridge's server, translation,
`generate` and its SDK client; the fake and the client are other processes).

    .venv/bin/python bench/bench_bridge.py --calls 300 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cache import KEY  # noqa: E402
from bench_review_cost import serve_fake  # noqa: E402

MODEL = "claude-haiku-4-5"
PROMPT = "case 1 reads the handler. " * 40
BODY: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 1024,
    "system": [{"type": "text", "text": "You review code. " * 20}],
    "messages": [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}],
    "tools": [
        {
            "name": "list_dir",
            "description": "List a directory.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ],
    "tool_choice": {"type": "any"},
}


def client(url: str, key: str, calls: int, stream: bool, conn: Connection) -> None:
    """The agent CLI's part: `calls` sequential calls; sends the wall seconds per call."""
    import anthropic

    sdk = anthropic.Anthropic(api_key=key, base_url=url, max_retries=0)

    def call() -> None:
        if stream:
            with sdk.messages.stream(**BODY) as events:
                events.get_final_message()
        else:
            sdk.messages.create(**BODY)

    for _ in range(20):  # warm: the connection, first-use imports
        call()
    began = time.perf_counter()
    for _ in range(calls):
        call()
    conn.send((time.perf_counter() - began) / calls)


def run_client(url: str, key: str, calls: int, stream: bool) -> float:
    ours, theirs = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=client, args=(url, key, calls, stream, theirs), daemon=True
    )
    process.start()
    seconds: float = ours.recv()
    process.join(timeout=30)
    return seconds


async def through_bridge(calls: int, stream: bool, transcript: Path) -> tuple[float, float]:
    """(latency, this process's CPU) per call, the client calling an attempt's bridge."""
    from assay.bridge.server import serve
    from assay.bridge.session import BridgeSession
    from assay.options import RunOptions

    session = BridgeSession(options=RunOptions(), sample=0, transcript=transcript)
    loop = asyncio.get_running_loop()
    async with serve(session) as url:
        cpu = time.process_time()
        latency = await loop.run_in_executor(None, run_client, url, session.token, calls, stream)
        cpu = time.process_time() - cpu
    transcript.unlink(missing_ok=True)
    # The warm-up calls ran through the bridge too.
    return latency, cpu / (calls + 20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per way per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=serve_fake, args=(0.0, theirs, False), daemon=True
    )
    server.start()
    url = ours.recv()
    os.environ.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=url)
    latency: dict[str, list[float]] = {"direct": [], "bridge": [], "bridge+sse": []}
    cpu: dict[str, list[float]] = {"bridge": [], "bridge+sse": []}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            transcript = Path(scratch) / "model-calls.jsonl"

            async def rounds() -> None:
                loop = asyncio.get_running_loop()
                for _ in range(args.rounds):
                    direct = await loop.run_in_executor(
                        None, run_client, url, KEY, args.calls, False
                    )
                    latency["direct"].append(direct)
                    for name, stream in (("bridge", False), ("bridge+sse", True)):
                        wall, used = await through_bridge(args.calls, stream, transcript)
                        latency[name].append(wall)
                        cpu[name].append(used)

            asyncio.run(rounds())
    finally:
        ours.send("stop")
        server.join(timeout=10)
    direct = statistics.median(latency["direct"]) * 1000
    print(f"direct      latency median {direct:.3f} ms a call")
    for name in ("bridge", "bridge+sse"):
        wall = statistics.median(latency[name]) * 1000
        used = statistics.median(cpu[name]) * 1000
        print(
            f"{name:11s} latency median {wall:.3f} ms a call (+{wall - direct:.3f} ms), "
            f"bridge CPU {used:.3f} ms a call"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
