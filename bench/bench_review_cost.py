"""Per-case cost of review cases: CPU per model call, end-to-end wall time, peak RSS.

A benchmark, not a test. It writes N review cases (bench_cache's corpus) and runs
`assay run` on them as a fresh process against the loopback FakeAnthropic, served from
its own process so that the fake's threads do not share assay's interpreter lock. Each
case makes 4 sequential calls (list_dir, read_file, submit_findings, the judge).

- `--cpu A,B`: CPU (user+sys of the assay process itself, at its exit) of runs of A and B
  cases; (cpu(B) - cpu(A)) / (calls(B) - calls(A)), the calls as the fake counted them,
  is the CPU per model call beyond the run's fixed cost. Beside it, the bare anthropic
  SDK (aiohttp transport, as assay uses) makes the same number of sequential calls in
  this process: its CPU per call, twice. First with one small request (a line of text,
  one tool), then replaying the very request bodies assay sent in the larger run (its
  system prompt, skill, tools and growing transcripts): the SDK's own cost of assay's
  calls, which the first underestimates.
- `--e2e N`: wall time of N cases at `--latency`/`--concurrency` over the ideal
  `ceil(N / c) * 4 * latency`.
- `--memory A,B`: peak RSS (`ru_maxrss`) of runs of A and B cases.
- `--fixture-kb K`: each case's fixture file grows to about K kB of TypeScript (with
  template literals: backticks), as a large change would be: its diff, the file the agent
  reads and the prompts that quote them grow with it. Without it a fixture is two lines.
- `--mixed`: the cases do not all pass. By case number modulo 5: passes; the judge says
  the finding is missing (fail); the judge answers outside its schema (error); the agent
  answers in plain text (error); the agent reports nothing (fail). A run whose report
  has every outcome, so the code only failures take is measured too.

Each `assay run` reads and writes bytecode in the scratch directory, compiled by a first,
unmeasured run of one case: as an installed assay (pip compiles it), where a checkout run
with PYTHONDONTWRITEBYTECODE set would compile every module it imports at each start.

Scratch space (corpus, sandboxes, reports) is the system temp directory: TMPDIR picks
another. On an ext4 without a journal (this project's build machine), creating a file soon
after many were deleted walks past every recently freed inode in the kernel, which made
half of a run's CPU system time there; `TMPDIR=/dev/shm` measures assay without it.

    .venv/bin/python bench/bench_review_cost.py --cpu 50,250 --repeats 3
    .venv/bin/python bench/bench_review_cost.py --e2e 256 --latency 0.5 --concurrency 32
    .venv/bin/python bench/bench_review_cost.py --memory 1000,5000 --repeats 1
    .venv/bin/python bench/bench_review_cost.py --mixed --memory 1000,5000 --repeats 1
    .venv/bin/python bench/bench_review_cost.py --fixture-kb 100 --cpu 20,120 --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import re
import socketserver
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.fakes.anthropic_api import FakeAnthropic, text_reply, tool_use_reply  # noqa: E402

from _assay_runs import bytecode_env  # noqa: E402
from bench_cache import FINDING, KEY, write_corpus  # noqa: E402

CALLS_PER_CASE = 4


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """Agent: list_dir, then read_file, then submit; the judge finds the finding."""
    if body["system"][0]["text"].startswith("You are the judge"):
        verdict = {"index": 0, "met": True, "matchedFindingIndex": 0, "reasoning": "found"}
        return tool_use_reply("record_verdict", {"should_find": [verdict], "should_not_find": []})
    results = sum(
        1
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    )
    if results == 0:
        return tool_use_reply("list_dir", {"path": "."})
    if results == 1:
        return tool_use_reply("read_file", {"path": "handler.ts"})
    return tool_use_reply("submit_findings", {"findings": [FINDING]})


_CASE_NUMBER = re.compile(r"case (\d+) reads")
"""bench_cache's `given`, which the agent's prompt and the judge's both quote."""


def respond_mixed(body: dict[str, Any]) -> dict[str, Any]:
    """`--mixed`: each case number's outcome (see the module's docstring)."""
    found = _CASE_NUMBER.search(json.dumps(body["messages"]))
    outcome = int(found.group(1)) % 5 if found else 0
    if body["system"][0]["text"].startswith("You are the judge"):
        if outcome == 2:
            return tool_use_reply("record_verdict", {"should_find": [], "should_not_find": []})
        met = outcome not in (1, 4)
        verdict = {"index": 0, "met": met, "reasoning": "found" if met else "missing"}
        verdict["matchedFindingIndex"] = 0 if met else None
        return tool_use_reply("record_verdict", {"should_find": [verdict], "should_not_find": []})
    if outcome == 3:
        return text_reply("Reviewed it; nothing to add.")
    if outcome == 4 and '"tool_result"' in json.dumps(body["messages"]):
        return tool_use_reply("submit_findings", {"findings": []})
    return respond(body)


def serve_fake(latency_s: float, conn: Connection, mixed: bool = False) -> None:
    """Serves the fake until told "stop". "times" answers with (and forgets) the wall
    clock of every request it has seen, for `--e2e`'s timeline; "bodies" with (and
    forgets) the request bodies, for `--cpu`'s replay."""
    socketserver.TCPServer.request_queue_size = 128
    seen: list[float] = []
    bodies: list[dict[str, Any]] = []

    def timed(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(time.time())
        bodies.append(body)
        return respond_mixed(body) if mixed else respond(body)

    with FakeAnthropic(api_key=KEY, responder=timed, latency_s=latency_s) as fake:
        conn.send(fake.url)
        while (asked := conn.recv()) in ("times", "bodies"):
            kept = seen if asked == "times" else bodies
            conn.send(list(kept))
            kept.clear()


_SELF_USAGE = """
import atexit, os, resource, runpy, sys
out = sys.argv[1]
def dump():
    u = resource.getrusage(resource.RUSAGE_SELF)
    open(out, "w").write(f"{u.ru_utime + u.ru_stime} {u.ru_maxrss} {u.ru_utime} {u.ru_stime}")
atexit.register(dump)
sys.argv = ["assay", *sys.argv[2:]]
if os.environ.get("BENCH_CPROFILE"):  # the main thread (the event loop) only
    import cProfile
    profile = cProfile.Profile()
    atexit.register(lambda: profile.dump_stats(os.environ["BENCH_CPROFILE"]))
    profile.enable()
runpy.run_module("assay.cli", run_name="__main__")
"""
"""Runs `assay` and records the CPU time and peak RSS of its own process (RUSAGE_SELF:
not its git children, not the fake), for the bare-SDK comparison to be like for like."""

LAST_SPAN: list[float] = []
"""(start, end) wall clock (`time.time`) of the last `run_assay`, for `--e2e`'s timeline."""

LAST_SPLIT: list[float] = []
"""(user s, system s) of the last `run_assay`: system time is the kernel's (mkdir, open, fork)."""

EXPECTED_EXITS = {0}
"""`assay run`'s exit codes that are not a failure of the benchmark (1 too with `--mixed`)."""

PROFILE: list[str] = []
"""`--profile FILE`: the py-spy command line each `assay run` is started under."""


def run_assay(root: Path, evals: Path, url: str, concurrency: int) -> tuple[float, float, int]:
    """(wall s, CPU s of the assay process, peak RSS KiB) of one `assay run`."""
    env = bytecode_env(root / "pycache")
    env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=url)
    report = tempfile.mkdtemp(prefix="r-", dir=root)
    usage_file = Path(report) / "rusage.txt"
    argv = [*PROFILE, sys.executable, "-c", _SELF_USAGE, str(usage_file)]
    argv += ["run", str(evals), "--report-dir", report]
    argv += ["--concurrency", str(concurrency), "--work-root", str(root / "work")]
    started, started_at = time.perf_counter(), time.time()
    proc = subprocess.Popen(
        argv, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, _ = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    LAST_SPAN[:] = [started_at, started_at + wall]
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in EXPECTED_EXITS:
        raise SystemExit(f"assay run exited {proc.returncode}:\n{stderr[-2000:]}")
    cpu, peak, user, system = usage_file.read_text().split()
    LAST_SPLIT[:] = [float(user), float(system)]
    return wall, float(cpu), int(peak)


_SMALL_TOOL = {
    "name": "list_dir",
    "description": "List a directory.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def grow_fixtures(evals: Path, kilobytes: int) -> None:
    """`--fixture-kb`: append about `kilobytes` kB of code to every case's fixture."""
    line = "export function f{0}(x: number): number {{ return x * {0} + `${{x}}`.length; }}\n"
    body = "".join(line.format(n) for n in range(kilobytes * 1024 // len(line.format(0))))
    for fixture in (evals / "fixtures").glob("*/handler.ts"):
        with fixture.open("a", encoding="utf-8") as out:
            out.write(body)


def small_request(n: int) -> dict[str, Any]:
    """A minimal review-shaped request: one line of system prompt, one tool, one message."""
    return {
        "model": "claude-haiku-4-5",
        "max_tokens": 1024,
        "system": [
            {"type": "text", "text": "You review code.", "cache_control": {"type": "ephemeral"}}
        ],
        "messages": [{"role": "user", "content": [{"type": "text", "text": f"case {n}"}]}],
        "tools": [_SMALL_TOOL],
    }


async def bare_sdk_cpu(url: str, requests: list[dict[str, Any]]) -> float:
    """CPU seconds per sequential call through the bare SDK on aiohttp (warm client), each
    sending one of `requests` (messages.create keyword arguments) in turn."""
    import anthropic

    client = anthropic.AsyncAnthropic(
        api_key=KEY, base_url=url, max_retries=0, http_client=anthropic.DefaultAioHttpClient()
    )

    async def one(request: dict[str, Any]) -> None:
        await client.messages.with_raw_response.create(**request)

    try:
        for request in requests[:20]:
            await one(request)
        started = time.process_time()
        for request in requests:
            await one(request)
        return (time.process_time() - started) / len(requests)
    finally:
        await client.close()


def load() -> str:
    return os.getloadavg().__repr__()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cpu", help="A,B case counts")
    parser.add_argument("--e2e", type=int, help="cases for the end-to-end run")
    parser.add_argument("--memory", help="case counts, comma-separated")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", help="write a py-spy raw profile (collapsed stacks) here")
    parser.add_argument("--gil", action="store_true", help="with --profile: GIL holder only")
    parser.add_argument("--mixed", action="store_true", help="cases pass, fail and error")
    parser.add_argument("--fixture-kb", type=int, default=0, help="grow each fixture to ~K kB")
    args = parser.parse_args()
    if args.mixed and args.e2e:
        parser.error("--e2e's ideal is 4 calls a case; --mixed cases make 2 to 5")
    if args.mixed:
        EXPECTED_EXITS.add(1)  # the gate fails
    if args.profile:
        PROFILE[:] = ["py-spy", "record", "--format", "raw", "-r", "200", "-o", args.profile]
        # --gil: only the thread holding the interpreter lock, i.e. where Python CPU goes
        PROFILE[:] += ["--gil", "--"] if args.gil else ["--"]

    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=serve_fake, args=(args.latency, theirs, args.mixed)
    )
    server.start()
    url = ours.recv()

    def taken(kept: str) -> list[Any]:
        """What the fake kept ("times" or "bodies") since it was last asked; it forgets it."""
        ours.send(kept)
        return list(ours.recv())

    corpora: dict[int, Path] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="assay-bench-cost-") as scratch:
            root = Path(scratch)

            def corpus(n: int) -> Path:
                if n not in corpora:
                    corpora[n] = write_corpus(root / f"c{n}", n)
                    grow_fixtures(corpora[n], args.fixture_kb)
                return corpora[n]

            run_assay(root, corpus(1), url, 1)  # compiles what a run imports, as installed

            if args.cpu:
                a, b = (int(x) for x in args.cpu.split(","))
                per_call, bare, replayed = [], [], []
                for _ in range(args.repeats):
                    taken("bodies")  # the warm-up's, or the previous repeat's bare SDK calls
                    _, cpu_a, _ = run_assay(root, corpus(a), url, args.concurrency)
                    user_a, sys_a = LAST_SPLIT
                    calls_a = len(taken("bodies"))
                    _, cpu_b, _ = run_assay(root, corpus(b), url, args.concurrency)
                    user_b, sys_b = LAST_SPLIT
                    sent = taken("bodies")
                    # As the fake counted them: 4 a case, 2-5 with --mixed (retries).
                    calls = len(sent) - calls_a
                    per_call.append((cpu_b - cpu_a) / calls)
                    per_case_sys = (sys_b - sys_a) / (b - a)
                    per_case_user = (user_b - user_a) / (b - a)
                    small = [small_request(n) for n in range(calls)]
                    bare.append(asyncio.run(bare_sdk_cpu(url, small)))
                    replayed.append(asyncio.run(bare_sdk_cpu(url, sent[:calls])))
                    print(
                        f"  cpu({a})={cpu_a:.2f}s cpu({b})={cpu_b:.2f}s "
                        f"assay {per_call[-1] * 1000:.2f} ms/call, bare sdk "
                        f"{bare[-1] * 1000:.2f} ms/call (small request), "
                        f"{replayed[-1] * 1000:.2f} ms/call (assay's requests); per case user "
                        f"{per_case_user * 1000:.2f} ms, system {per_case_sys * 1000:.2f} ms, "
                        f"load {load()}"
                    )
                m, s = statistics.median(per_call), statistics.median(bare)
                r = statistics.median(replayed)
                print(
                    f"CPU per call beyond fixed cost: assay {m * 1000:.2f} ms; bare SDK "
                    f"{s * 1000:.2f} ms with a small request (ratio {m / s:.2f}), "
                    f"{r * 1000:.2f} ms replaying assay's requests (ratio {m / r:.2f}); "
                    f"median of {args.repeats}"
                )
            if args.e2e:
                n, c = args.e2e, args.concurrency
                ideal = math.ceil(n / c) * CALLS_PER_CASE * args.latency or float("nan")
                walls = []
                for _ in range(args.repeats):
                    taken("times")  # the requests of earlier runs
                    wall, cpu, rss = run_assay(root, corpus(n), url, c)
                    walls.append(wall)
                    times = taken("times")
                    start, end = LAST_SPAN
                    # The fake answers `latency` after a request arrives, and notes the
                    # time as it answers.
                    first_sent = min(times) - args.latency - start
                    print(
                        f"  {wall:.2f}s wall, {cpu:.2f}s CPU, "
                        f"ratio {wall / ideal:.2f}, load {load()}; first request sent at "
                        f"{first_sent:.2f}s, last answer at {max(times) - start:.2f}s, "
                        f"exit {end - max(times):.2f}s after it"
                    )
                print(
                    f"e2e {n} cases c={c} latency {args.latency}s: ideal {ideal:.2f}s, "
                    f"median {statistics.median(walls):.2f}s = "
                    f"{statistics.median(walls) / ideal:.2f}x, best {min(walls) / ideal:.2f}x"
                )
            if args.memory:
                for n in (int(x) for x in args.memory.split(",")):
                    rss = []
                    for _ in range(args.repeats):
                        wall, cpu, peak = run_assay(root, corpus(n), url, args.concurrency)
                        rss.append(peak / 1024)
                        print(f"  {n} cases: {peak / 1024:.1f} MiB, {wall:.1f}s, load {load()}")
                    print(f"peak RSS {n} cases: median {statistics.median(rss):.1f} MiB")
    finally:
        ours.send("stop")
        server.join(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
