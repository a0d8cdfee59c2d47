"""promptfoo beside assay: the same review workload against the same loopback fake.

A benchmark, not a test. Each case makes 4 sequential model calls in both tools:

- assay: `assay run` on bench_cache's corpus (bench_review_cost.py's workload: the
  builtin reviewer calls list_dir, read_file, submit_findings; the findings judge is
  the 4th call), with a git sandbox built per case and a report written;
- promptfoo: `promptfoo eval` with the custom provider `promptfoo/reviewer.js` (the
  same three tools in a loop through promptfoo's own Anthropic SDK, reading the case's
  fixture directory; no sandbox) and an `llm-rubric` assertion (promptfoo's judge,
  through its own `anthropic:messages` provider) as the 4th call. Cache, result
  database, sharing, telemetry and update checks are off.

The fake answers both: a request with tools gets bench_review_cost's tool-loop
answers, one without (promptfoo's rubric grader) a passing rubric verdict. CPU is each
tool's own process tree (`wait4`), per case `(cpu(B) - cpu(A)) / (B - A)`.

    .venv/bin/python bench/bench_promptfoo.py --cases 50,250 --repeats 3
    .venv/bin/python bench/bench_promptfoo.py --cases 1000 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
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

from tests.fakes.anthropic_api import FakeAnthropic, text_reply  # noqa: E402

from bench_cache import KEY, write_corpus  # noqa: E402
from bench_review_cost import (
    CALLS_PER_CASE,  # noqa: E402
    run_assay,  # noqa: E402
)
from bench_review_cost import respond as assay_respond  # noqa: E402

HERE = Path(__file__).resolve().parent
RUBRIC_VERDICT = {"reason": "the finding is there", "pass": True, "score": 1}


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """Tool-loop answers for requests with tools; a rubric verdict for promptfoo's grader."""
    if not body.get("tools"):
        return text_reply(json.dumps(RUBRIC_VERDICT))
    return assay_respond(body)


def serve_fake(latency_s: float, conn: Connection) -> None:
    socketserver.TCPServer.request_queue_size = 128
    with FakeAnthropic(api_key=KEY, responder=respond, latency_s=latency_s) as fake:
        conn.send(fake.url)
        while conn.recv() == "calls":  # anything else stops it
            conn.send(fake.calls)


def write_promptfoo_config(evals: Path, cases: int, url: str) -> Path:
    """A promptfoo config over bench_cache's corpus in `evals` (one test per case)."""
    grader = {"id": "anthropic:messages:claude-haiku-4-5", "config": {"apiBaseUrl": url}}
    tests = []
    for n in range(cases):
        fixture = evals / "fixtures" / f"case-{n:02d}"
        tests.append(
            {
                "description": f"case-{n:02d}",
                # inline: promptfoo would run a `file://...ts` var as a script
                "vars": {"dir": str(fixture), "code": (fixture / "handler.ts").read_text()},
                "assert": [
                    {
                        "type": "llm-rubric",
                        "value": "reads .name of a user that Array.find() may not return",
                    }
                ],
            }
        )
    config = {
        "description": "assay's review workload",
        "prompts": [
            "Review this change, then call submit_findings with your findings.\n\n"
            "handler.ts:\n{{code}}"
        ],
        "providers": [{"id": f"file://{HERE / 'promptfoo' / 'reviewer.js'}"}],
        "defaultTest": {"options": {"provider": grader}},
        "tests": tests,
    }
    path = evals / "promptfooconfig.json"
    path.write_text(json.dumps(config, indent=1), encoding="utf-8")
    return path


def promptfoo_env(root: Path, url: str) -> dict[str, str]:
    node_modules = subprocess.run(
        ["npm", "root", "-g"], capture_output=True, text=True, check=True
    ).stdout.strip()
    env = dict(os.environ)
    env.update(
        ANTHROPIC_API_KEY=KEY,
        ANTHROPIC_BASE_URL=url,
        PROMPTFOO_NODE_MODULES=str(Path(node_modules) / "promptfoo" / "node_modules"),
        PROMPTFOO_CONFIG_DIR=str(root / "promptfoo-home"),  # its database, not ~/.promptfoo
        PROMPTFOO_DISABLE_TELEMETRY="1",
        PROMPTFOO_DISABLE_UPDATE="1",
        PROMPTFOO_DISABLE_SHARING="1",
    )
    return env


def run_promptfoo(
    root: Path, config: Path, env: dict[str, str], concurrency: int
) -> tuple[float, float, int]:
    """(wall s, CPU s of the promptfoo process tree, peak RSS KiB) of one `promptfoo eval`."""
    out = root / f"promptfoo-{time.monotonic_ns()}.json"
    argv = ["promptfoo", "eval", "-c", str(config), "--no-cache", "--no-write", "--no-share"]
    argv += ["--no-progress-bar", "--no-table", "-j", str(concurrency), "-o", str(out)]
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    results = json.loads(out.read_text()) if out.exists() else {}
    stats = results.get("results", {}).get("stats", {})
    if code != 0 or not stats or stats.get("failures") or stats.get("errors"):
        first = (results.get("results", {}).get("results") or [{}])[0]
        problem = first.get("error") or first.get("gradingResult")
        raise SystemExit(f"promptfoo eval exited {code}: {problem}\n{stderr[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", default="50,250", help="A,B case counts (or one count)")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-assay", action="store_true")
    args = parser.parse_args()
    counts = [int(x) for x in args.cases.split(",")]

    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=serve_fake, args=(args.latency, theirs)
    )
    server.start()
    url = ours.recv()
    try:
        with tempfile.TemporaryDirectory(prefix="assay-bench-promptfoo-") as scratch:
            root = Path(scratch)
            env = promptfoo_env(root, url)
            corpora = {n: write_corpus(root / f"c{n}", n) for n in counts}
            configs = {n: write_promptfoo_config(corpora[n], n, url) for n in counts}
            runs: dict[str, dict[int, list[tuple[float, float, int]]]] = {
                "assay": {n: [] for n in counts},
                "promptfoo": {n: [] for n in counts},
            }

            def calls() -> int:
                ours.send("calls")
                return int(ours.recv())

            def checked(tool: str, n: int, run: Any) -> tuple[float, float, int]:
                before = calls()
                result = run()
                made = calls() - before
                if made != CALLS_PER_CASE * n:
                    raise SystemExit(f"{tool} made {made} model calls for {n} cases")
                return result

            for _ in range(args.repeats):
                for n in counts:
                    if not args.skip_assay:
                        runs["assay"][n].append(
                            checked(
                                "assay",
                                n,
                                lambda n=n: run_assay(root, corpora[n], url, args.concurrency),
                            )
                        )
                    runs["promptfoo"][n].append(
                        checked(
                            "promptfoo",
                            n,
                            lambda n=n: run_promptfoo(root, configs[n], env, args.concurrency),
                        )
                    )
                    for tool in ("assay", "promptfoo"):
                        if runs[tool][n]:
                            wall, cpu, rss = runs[tool][n][-1]
                            print(
                                f"  {tool:9s} {n:5d} cases: {wall:6.2f}s wall, {cpu:6.2f}s CPU, "
                                f"{rss / 1024:6.1f} MiB, load {os.getloadavg()[0]:.1f}",
                                flush=True,
                            )
            for tool, by_count in runs.items():
                if not by_count[counts[0]]:
                    continue
                walls = {n: statistics.median(r[0] for r in by_count[n]) for n in counts}
                line = f"{tool}: median wall " + ", ".join(
                    f"{n} cases {w:.2f}s" for n, w in walls.items()
                )
                if len(counts) == 2:
                    a, b = counts
                    per_case = statistics.median(
                        (rb[1] - ra[1]) / (b - a)
                        for ra, rb in zip(by_count[a], by_count[b], strict=True)
                    )
                    line += f"; CPU per case beyond the fixed cost {per_case * 1000:.2f} ms"
                print(line)
    finally:
        ours.send("stop")
        server.join(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
