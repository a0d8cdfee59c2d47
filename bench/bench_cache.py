"""Record/replay cache: a second run of the same corpus makes no model calls at all.

A benchmark, not a test. It writes a corpus of review cases (a tiny fixture file and a
should_find each) to a temp dir and runs it with `assay run --cache DIR` three times,
each a fresh process as a user runs it, against the loopback FakeAnthropic (which
counts the calls it answers):

1. recording: every case calls the model (the builtin reviewer lists the repository
   with one tool call, then submits a finding; the judge returns a valid verdict), and
   every call is written to the cache;
2. replaying: the same run again must make 0 calls, and write the same report (run ids,
   timestamps and durations aside); the speed-up is run 1's wall time over run 2's;
3. `--offline` with an empty cache: every case is skipped "not in cache", 0 calls.

    /work/venv/bin/python bench/bench_cache.py [--cases 20] [--latency 0.2] [--concurrency 8]

`--latency` is the fake's answer time per call; real API calls take seconds, so the
speed-up grows with it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.anthropic_api import FakeAnthropic, tool_use_reply  # noqa: E402

from _assay_runs import assay_env, comparable  # noqa: E402
from _machine import describe_machine  # noqa: E402

KEY = "sk-ant-bench-cache-not-a-real-key"
MODEL = "anthropic/claude-haiku-4-5"
"""Keys whose values differ between two runs of the same cases (clocks)."""
FINDING = {
    "severity": "high",
    "confidence": "high",
    "title": "user.name is read without a null check",
    "description": "find() may return undefined.",
    "location": {"path": "handler.ts", "startLine": 2},
}


def write_corpus(root: Path, cases: int) -> Path:
    """`cases` review cases in one YAML suite, each with its own fixture file."""
    evals = root / "evals"
    (evals / "skills").mkdir(parents=True)
    (evals / "skills" / "bugs.md").write_text("Find functional bugs in the change.\n")
    entries = []
    for n in range(cases):
        fixture = evals / "fixtures" / f"case-{n:02d}" / "handler.ts"
        fixture.parent.mkdir(parents=True)
        fixture.write_text(
            f"export const name{n} = (users: {{id: number, name: string}}[], id: number) =>\n"
            "  users.find((u) => u.id === id).name;\n"
        )
        entries.append(
            f"  - name: case-{n:02d}\n"
            f"    given: case {n} reads a property of a user that may be missing\n"
            "    files:\n"
            f"      - fixtures/case-{n:02d}/handler.ts\n"
            "    should_find:\n"
            "      - finding: reads .name of a user that Array.find() may not return\n"
            "        severity: high\n"
        )
    (evals / "review.yaml").write_text(
        f"skill: skills/bugs.md\nmodel: {MODEL}\nevals:\n" + "".join(entries)
    )
    return evals


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The judge says the finding is there; the agent lists the repo once, then submits."""
    if body["system"][0]["text"].startswith("You are the judge"):
        verdict = {"index": 0, "met": True, "matchedFindingIndex": 0, "reasoning": "found"}
        return tool_use_reply("record_verdict", {"should_find": [verdict], "should_not_find": []})
    answered_a_tool = any(
        block.get("type") == "tool_result"
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
    )
    if answered_a_tool:
        return tool_use_reply("submit_findings", {"findings": [FINDING]})
    return tool_use_reply("list_dir", {"path": "."})


def run_assay(argv: list[str], *, env: dict[str, str], cwd: Path) -> tuple[int, float]:
    """`assay ARGV` as a fresh process, as a user runs it; (exit code, wall seconds)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "assay.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"assay {' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return done.returncode, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per fake call")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    print(describe_machine())
    with tempfile.TemporaryDirectory(prefix="assay-bench-cache-") as scratch:
        root = Path(scratch)
        evals = write_corpus(root, args.cases)
        with FakeAnthropic(api_key=KEY, responder=respond, latency_s=args.latency) as fake:
            env = assay_env()
            env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake.url)
            common = ["run", str(evals), "--concurrency", str(args.concurrency)]
            cache = root / "cache"

            code, first_s = run_assay(
                [*common, "--cache", str(cache), "--report-dir", "r1"], env=env, cwd=root
            )
            first_calls = fake.calls
            assert code == 0, f"the recording run failed its gate (exit {code})"
            entries = sum(1 for _ in cache.rglob("*.json"))

            code, second_s = run_assay(
                [*common, "--cache", str(cache), "--report-dir", "r2"], env=env, cwd=root
            )
            second_calls = fake.calls - first_calls
            assert code == 0, f"the replaying run failed its gate (exit {code})"

            empty = root / "empty-cache"
            offline = [*common, "--cache", str(empty), "--offline", "--report-dir", "r3"]
            code, offline_s = run_assay(offline, env=env, cwd=root)
            offline_calls = fake.calls - first_calls - second_calls

        same = comparable(root / "r1" / "report.json") == comparable(root / "r2" / "report.json")
        skipped = json.loads((root / "r3" / "report.json").read_text(encoding="utf-8"))
        reasons = {c["status"] + ": " + c["reason"] for c in skipped["cases"]}

    print(
        f"corpus: {args.cases} review cases; fake latency {args.latency * 1000:.0f} ms/call; "
        f"concurrency {args.concurrency}"
    )
    print(f"run 1 (record):   {first_s:6.2f} s, {first_calls} model calls, {entries} cache entries")
    print(f"run 2 (replay):   {second_s:6.2f} s, {second_calls} model calls")
    print(f"speed-up:         {first_s / second_s:.1f}x")
    print(f"reports equal (run id, timestamps, durations aside): {same}")
    print(
        f"--offline, empty cache: {offline_s:.2f} s, {offline_calls} model calls, exit {code}, "
        f"cases: {sorted(reasons)}"
    )
    assert second_calls == 0, "the replaying run called the model"
    assert same, "the replayed report differs from the recorded one"
    assert offline_calls == 0 and len(reasons) == 1, reasons
    (reason,) = reasons
    assert reason.startswith("skipped: ") and "not in cache" in reason, reason
    return 0


if __name__ == "__main__":
    sys.exit(main())
