"""Resume and shard + merge give the report an uninterrupted, unsharded run gives.

A benchmark, not a test. A task suite (tiny workspace fixtures, a deterministic agent
script, real verification commands; some tasks pass, some fail) is run three ways, each
`assay run` a real subprocess:

1. plain: one run;
2. killed and resumed: a run is killed with SIGKILL (its whole process group, agents
   included) once some cases have finished, then `assay run --resume DIR` finishes it;
3. sharded: `--shard 1/3`, `2/3`, `3/3` into three report dirs, then `assay merge`.

The three final report.json files must be equal apart from run ids, timestamps and
durations; the script prints the wall time of each way and asserts the equality.

    /work/venv/bin/python bench/bench_resume_shard.py [--tasks 12] [--kill-after 4]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _assay_runs import assay_env, comparable  # noqa: E402
from _machine import describe_machine  # noqa: E402

ASSAY = [sys.executable, "-m", "assay.cli"]
AGENT_DELAY_S = 0.25
"""How long the agent works on a task, so that a kill lands in the middle of the run."""
AGENT = """\
import pathlib, sys, time
task_id, workspace = sys.argv[1], pathlib.Path(sys.argv[2])
time.sleep(float(sys.argv[3]))
number = int(task_id.rsplit("-", 1)[1])
# Every third task is left undone, so the report holds failures as well as passes.
if number % 3:
    (workspace / "value.txt").write_text(f"done {number}\\n")
print('{"type": "tool", "name": "write_file"}')
"""


def write_suite(root: Path, tasks: int) -> Path:
    suites = root / "evals"
    fixture = suites / "fixtures" / "proj"
    fixture.mkdir(parents=True)
    (fixture / "value.txt").write_text("todo\n")
    (fixture / "README.md").write_text("A tiny workspace.\n")
    check = (
        "import pathlib, sys; "
        "sys.exit(not pathlib.Path('value.txt').read_text().startswith('done'))"
    )
    suite = {
        "id": "demo",
        "name": "Resume and shard demo",
        "tasks": [
            {
                "id": f"task-{n:02d}",
                "name": f"Task {n}",
                "prompt": f"Finish task {n}",
                "workspaceFixture": "fixtures/proj",
                "verificationCommands": [
                    {
                        "id": "done",
                        "name": "value.txt is done",
                        "command": [sys.executable, "-c", check],
                    }
                ],
                "expectedChangedFiles": ["value.txt"],
            }
            for n in range(1, tasks + 1)
        ],
    }
    (suites / "tasks.json").write_text(json.dumps(suite, indent=2) + "\n")
    (root / "agent.py").write_text(AGENT)
    return suites


def assay(args: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[int, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [*ASSAY, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"assay {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done.returncode, time.perf_counter() - started


def killed_midway(
    args: list[str], *, cwd: Path, env: dict[str, str], results: Path, after: int
) -> int:
    """Start `assay ARGS`, SIGKILL its process group once `after` results are written."""
    process = subprocess.Popen(
        [*ASSAY, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    finished = 0
    while time.monotonic() < deadline and process.poll() is None:
        finished = _lines(results)
        if finished >= after:
            os.killpg(process.pid, signal.SIGKILL)
            break
        time.sleep(0.02)
    process.wait(timeout=60)
    if process.returncode != -signal.SIGKILL:
        raise SystemExit(f"the run ended before the kill (exit {process.returncode})")
    return _lines(results)


def _lines(path: Path) -> int:
    try:
        return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    except FileNotFoundError:
        return 0


def differences(a: Any, b: Any, path: str = "$") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            found += differences(a.get(key), b.get(key), f"{path}.{key}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--kill-after", type=int, default=4, help="finished cases before the kill")
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()

    print(describe_machine())
    with tempfile.TemporaryDirectory(prefix="assay-bench-resume-") as scratch:
        root = Path(scratch)
        suites = write_suite(root, args.tasks)
        env = assay_env()
        env["ASSAY_AGENT_COMMAND"] = (
            f"{sys.executable} {root / 'agent.py'} {{task_id}} {{workspace}} {AGENT_DELAY_S}"
        )
        run = ["run", str(suites), "--concurrency", str(args.concurrency)]

        plain_code, plain_s = assay([*run, "--report-dir", "plain"], cwd=root, env=env)

        started = time.perf_counter()
        before_kill = killed_midway(
            [*run, "--report-dir", "resumed"],
            cwd=root,
            env=env,
            results=root / "resumed" / "results.jsonl",
            after=args.kill_after,
        )
        resumed_code, _ = assay([*run, "--resume", "resumed"], cwd=root, env=env)
        resumed_s = time.perf_counter() - started
        rerun = _lines(root / "resumed" / "results.jsonl") - before_kill

        started = time.perf_counter()
        for index in (1, 2, 3):
            assay(
                [*run, "--shard", f"{index}/3", "--report-dir", f"shards/{index}"],
                cwd=root,
                env=env,
            )
        merged_code, _ = assay(["merge", "shards", "-o", "merged/report.json"], cwd=root, env=env)
        sharded_s = time.perf_counter() - started

        plain = comparable(root / "plain" / "report.json")
        resumed = comparable(root / "resumed" / "report.json")
        merged = comparable(root / "merged" / "report.json")
        summary = plain["summary"]

    print(
        f"task suite: {args.tasks} tasks, agent {AGENT_DELAY_S * 1000:.0f} ms each, "
        f"concurrency {args.concurrency}; {summary['passed']} pass, {summary['failed']} fail, "
        f"gate {summary['gate']}"
    )
    print(f"plain run:                    {plain_s:6.2f} s, exit {plain_code}")
    print(f"SIGKILL after {before_kill:2d} + --resume: {resumed_s:6.2f} s, exit {resumed_code}")
    print(f"  the resumed run ran the {rerun} cases without a result line, and no others")
    print(f"3 shards (in turn) + merge:   {sharded_s:6.2f} s, exit {merged_code}")
    problems = differences(plain, resumed) + differences(plain, merged)
    print(
        "reports equal (run id, timestamps, durations aside): "
        + ("yes" if not problems else "NO\n  " + "\n  ".join(problems[:20]))
    )
    assert 0 < before_kill < args.tasks, before_kill
    assert rerun == args.tasks - before_kill, (rerun, before_kill)
    assert plain_code == resumed_code == merged_code
    assert not problems
    return 0


if __name__ == "__main__":
    sys.exit(main())
