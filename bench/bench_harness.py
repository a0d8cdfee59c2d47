"""What the runner itself costs per task case, and its memory for a large run.

A benchmark, not a test. The agent is `/bin/true` and the tasks have no verification
commands, so what is left is assay: planning, scheduling, the sandbox, the agent's
process, the change check, the result line, the report. The sandbox, the agent process
and the change check are timed on their own (sequentially, on the same cases) and
taken off the per-case time, leaving the harness's share.

    /work/venv/bin/python bench/bench_harness.py [--cases 200] [--memory-cases 1000]

Timings use concurrency 1 so the parts add up; a concurrency-8 run is shown for
throughput. Peak memory is measured in a fresh interpreter running `--memory-cases`
cases (ru_maxrss of that process, plus tracemalloc's peak of Python allocations).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from assay.options import RunOptions
from assay.suites.case import Case, TaskSpec

NOOP_AGENT = ("/bin/true",)


def make_fixture(root: Path) -> Path:
    fixture = root / "fixture"
    (fixture / "pkg").mkdir(parents=True)
    (fixture / "pkg" / "__init__.py").write_text("")
    (fixture / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n" * 10)
    (fixture / "README.md").write_text("# bench fixture\n")
    return fixture


def make_cases(fixture: Path, count: int) -> list[Case]:
    spec = TaskSpec(prompt="do nothing", workspace=fixture, commands=())
    return [
        Case(
            id=f"bench/task-{i:05d}",
            suite="bench",
            name=f"task-{i:05d}",
            kind="task",
            format="task-suite",
            source_path=fixture.parent / "suite.json",
            source_line=i + 1,
            spec=spec,
        )
        for i in range(count)
    ]


def timed_run(cases: list[Case], root: Path, *, concurrency: int) -> float:
    from assay.runner import run

    options = RunOptions(
        agent_command=NOOP_AGENT,
        concurrency=concurrency,
        report_dir=Path(tempfile.mkdtemp(dir=root, prefix="report-")),
        work_root=root,
    )
    started = time.perf_counter()
    report = run(options, cases=cases)
    elapsed = time.perf_counter() - started
    assert report.summary.passed == len(cases), report.summary
    return elapsed


def component_costs(case: Case, root: Path, count: int) -> dict[str, float]:
    """Seconds per case for the parts that are not the runner: sandbox, agent, change check."""
    from assay.sandbox import build_sandbox, remove_sandbox, workspace_changes

    sandbox_s = agent_s = changes_s = 0.0
    for _ in range(count):
        t0 = time.perf_counter()
        sandbox = build_sandbox(case, parent=root)
        t1 = time.perf_counter()
        asyncio.run(_spawn(NOOP_AGENT, sandbox.path))
        t2 = time.perf_counter()
        workspace_changes(sandbox.path, baseline=sandbox.base_commit)
        t3 = time.perf_counter()
        remove_sandbox(sandbox)
        t4 = time.perf_counter()
        sandbox_s += (t1 - t0) + (t4 - t3)
        agent_s += t2 - t1
        changes_s += t3 - t2
    return {"sandbox": sandbox_s / count, "agent": agent_s / count, "changes": changes_s / count}


async def _spawn(argv: tuple[str, ...], cwd: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    await process.communicate()


def memory_child(count: int) -> None:
    """Run `count` cases in this (fresh) process and print its peak memory as JSON."""
    tracemalloc.start()
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as temp:
        root = Path(temp)
        cases = make_cases(make_fixture(root), count)
        elapsed = timed_run(cases, root, concurrency=8)
    _, traced_peak = tracemalloc.get_traced_memory()
    print(
        json.dumps(
            {
                "cases": count,
                "seconds": elapsed,
                "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "tracemalloc_peak_mib": traced_peak / 2**20,
            }
        )
    )


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return f"{os.cpu_count()} CPUs, {cpu}, Python {platform.python_version()}, {git}"


def import_cost() -> float:
    """Seconds to start Python and import what `assay run` needs before any case runs."""
    code = "import assay.cli, assay._cli.run, assay.runner, assay.suites, assay.sandbox"
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--memory-cases", type=int, default=1000)
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return

    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as temp:
        root = Path(temp)
        fixture = make_fixture(root)
        cases = make_cases(fixture, args.cases)
        timed_run(cases[:5], root, concurrency=1)  # warm imports and caches
        one = min(timed_run(cases[:1], root, concurrency=1) for _ in range(3))
        many = timed_run(cases, root, concurrency=1)
        parallel = timed_run(cases, root, concurrency=8)
        parts = component_costs(cases[0], root, min(args.cases, 100))

    per_case = (many - one) / (len(cases) - 1)
    fixed = one - per_case
    outside = parts["sandbox"] + parts["agent"] + parts["changes"]
    startup = import_cost()
    ms = 1000.0
    print(f"cases: {len(cases)} task cases, agent {' '.join(NOOP_AGENT)}, no verification commands")
    print(f"python start + imports for `assay run`:   {startup * ms:7.1f} ms")
    print(f"fixed cost of a run (in process):         {fixed * ms:7.1f} ms")
    print(f"per case, concurrency 1:                  {per_case * ms:7.2f} ms")
    print(f"  sandbox build + removal:                {parts['sandbox'] * ms:7.2f} ms")
    print(f"  agent process (/bin/true):              {parts['agent'] * ms:7.2f} ms")
    print(f"  change check (git status):              {parts['changes'] * ms:7.2f} ms")
    print(f"  harness (the rest):                     {(per_case - outside) * ms:7.2f} ms")
    print(f"per case, concurrency 8 (throughput):     {parallel / len(cases) * ms:7.2f} ms")

    child = subprocess.run(
        [sys.executable, __file__, "--memory-child", str(args.memory_cases)],
        capture_output=True,
        text=True,
        check=True,
    )
    memory = json.loads(child.stdout.strip().splitlines()[-1])
    print(
        f"{memory['cases']} cases, concurrency 8: {memory['seconds']:.1f} s, "
        f"peak RSS {memory['max_rss_mib']:.1f} MiB, "
        f"tracemalloc peak {memory['tracemalloc_peak_mib']:.1f} MiB"
    )


if __name__ == "__main__":
    main()
