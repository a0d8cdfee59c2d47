"""What the runner itself costs per task case, and its memory for a large run.

A benchmark, not a test. The agent is `/bin/true` and the tasks have no verification
commands, so what is left is assay: planning, scheduling, the sandbox, the agent's
process, the change check, the result line, the report. The parts the runner composes
(the sandbox's build and removal, the command runtime running /bin/true, the task
checks) are timed inside the same run, around each of their calls, and taken off the
per-case time; what remains is the runner's share: scheduling, attempt directories,
results.jsonl, combining, report.

    /work/venv/bin/python bench/bench_harness.py [--cases 40] [--rounds 5]
        [--memory-cases 1000] [--dir DIR]

A second measurement isolates the runner further: verify cases answered by an in-process
agent and graded in code leave only the sandbox and the runner, with no child process.

Two clocks: wall time, and the CPU time of assay's own process (all its threads, not its
child processes). On a shared machine wall time mostly measures the neighbours; the
runner's share is in-process work, so its CPU time is the steadier number. Rounds
interleave every measurement and keep each one's best (the runner's share is taken per
run, then the best run kept). Timings use concurrency 1 so the parts add up; a
concurrency-8 run is shown for throughput. After the warm-up the
collector is settled as the `assay` console script does it. Peak memory comes from
a fresh interpreter running `--memory-cases` cases (its ru_maxrss, and tracemalloc's
peak of Python allocations).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from assay._util.heap import settle_after_startup
from assay.options import RunOptions
from assay.suites.case import Case, TaskSpec

NOOP_AGENT = ("/bin/true",)
Clock = tuple[float, float]
"""(wall seconds, CPU seconds of this process)."""


def now() -> Clock:
    return time.perf_counter(), time.process_time()


def since(start: Clock) -> Clock:
    wall, cpu = now()
    return wall - start[0], cpu - start[1]


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


def timed_run(
    cases: list[Case], root: Path, *, concurrency: int, parts: PartClocks | None = None
) -> Clock:
    from assay.runner import run

    # The verify cases name their in-process runtime, which an agent command would beat.
    noop = None if all(case.runtime == "bench-keep" for case in cases) else NOOP_AGENT
    options = RunOptions(
        agent_command=noop,
        concurrency=concurrency,
        report_dir=Path(tempfile.mkdtemp(dir=root, prefix="report-")),
        work_root=root,
    )
    with parts.timing() if parts else contextlib.nullcontext():
        start = now()
        report = run(options, cases=cases)
        elapsed = since(start)
    assert report.summary.passed == len(cases), report.summary
    return elapsed


class PartClocks:
    """Wall and CPU time spent inside the parts the runner composes, during a run.

    `timing()` wraps the sandbox's build and removal, the command runtime and the task
    grader for as long as it is entered. At concurrency 1 nothing else runs meanwhile,
    so the process's CPU clock over a call is that call's cost.
    """

    NAMES = ("sandbox", "agent", "checks")

    def __init__(self) -> None:
        self.totals = {name: [0.0, 0.0] for name in self.NAMES}

    def _add(self, name: str, clock: Clock) -> None:
        self.totals[name][0] += clock[0]
        self.totals[name][1] += clock[1]

    def _sync(self, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = now()
            try:
                return call(*args, **kwargs)
            finally:
                self._add(name, since(start))

        return timed

    def _async(self, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = now()
            try:
                return await call(*args, **kwargs)
            finally:
                self._add(name, since(start))

        return timed

    @contextlib.contextmanager
    def timing(self) -> Iterator[None]:
        import assay.workspace
        from assay.agents.command import CommandAgent
        from assay.grading.task_checks import TaskGrader

        # The runner imports these at call time, so patching their homes reaches it.
        patches = [
            (
                assay.workspace,
                "build_sandbox",
                self._sync("sandbox", assay.workspace.build_sandbox),
            ),
            (
                assay.workspace,
                "remove_sandbox",
                self._sync("sandbox", assay.workspace.remove_sandbox),
            ),
            (CommandAgent, "run", self._async("agent", CommandAgent.run)),
            (TaskGrader, "grade", self._async("checks", TaskGrader.grade)),
        ]
        originals = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
        for owner, name, wrapped in patches:
            setattr(owner, name, wrapped)
        try:
            yield
        finally:
            for owner, name, original in originals:
                setattr(owner, name, original)

    def per_case(self, count: int) -> dict[str, Clock]:
        return {name: (wall / count, cpu / count) for name, (wall, cpu) in self.totals.items()}


class _KeepAgent:
    """An in-process agent answering `keep` at once: no process, no model."""

    async def run(self, ctx: Any) -> Any:
        from assay.agents import AgentOutput

        return AgentOutput(verdict="keep")


def make_verify_cases(root: Path, count: int) -> list[Case]:
    """Verify cases for the in-process agent: graded in code, so only the sandbox and the
    runner remain, which isolates the runner without any child process."""
    from assay.agents import register_agent
    from assay.suites.case import FixtureFile, VerifySpec

    register_agent("bench-keep", lambda options: _KeepAgent())
    source = root / "handler.py"
    source.write_text("def handle(request):\n    return request.body\n" * 10)
    spec = VerifySpec(
        given="handler returns the raw body",
        files=(FixtureFile(source, "app/handler.py"),),
        candidate={"title": "unvalidated body"},
        expect_verdict="keep",
    )
    return [
        Case(
            id=f"bench/verify-{i:05d}",
            suite="bench",
            name=f"verify-{i:05d}",
            kind="verify",
            format="verification",
            source_path=root / "verify.json",
            source_line=1,
            spec=spec,
            runtime="bench-keep",
        )
        for i in range(count)
    ]


def _rest(total: Clock, count: int, parts: Iterable[Clock]) -> Clock:
    """Per case: the run's time less the parts' time in that same run."""
    parts = list(parts)
    return (
        (total[0] - count * sum(p[0] for p in parts)) / count,
        (total[1] - count * sum(p[1] for p in parts)) / count,
    )


def memory_child(count: int, base: str | None) -> None:
    """Run `count` cases in this (fresh) process and print its peak memory as JSON."""
    tracemalloc.start()
    with tempfile.TemporaryDirectory(prefix="assay-bench-", dir=base) as temp:
        root = Path(temp)
        cases = make_cases(make_fixture(root), count)
        settle_after_startup()
        wall, cpu = timed_run(cases, root, concurrency=8)
    _, traced_peak = tracemalloc.get_traced_memory()
    result = {
        "cases": count,
        "wall_s": wall,
        "cpu_s": cpu,
        "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "tracemalloc_peak_mib": traced_peak / 2**20,
    }
    print(json.dumps(result))


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
    load = os.getloadavg()[0]
    return (
        f"{os.cpu_count()} CPUs, {cpu}, Python {platform.python_version()}, {git}, "
        f"load average {load:.1f} at start"
    )


def import_cost() -> Clock:
    """Starting Python and importing what `assay run` needs before any case runs."""
    code = "import assay.cli, assay._cli.run, assay.runner, assay.suites, assay.workspace"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=40, help="cases per timing round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--memory-cases", type=int, default=1000)
    parser.add_argument(
        "--dir", help="where sandboxes and reports go (default: the system temp dir)"
    )
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child, args.dir)
        return

    print(f"machine: {machine()}")
    best: dict[str, list[float]] = {}

    def keep(name: str, clock: Clock, per: int = 1) -> None:
        old = best.setdefault(name, [float("inf"), float("inf")])
        best[name] = [min(old[0], clock[0] / per), min(old[1], clock[1] / per)]

    with tempfile.TemporaryDirectory(prefix="assay-bench-", dir=args.dir) as temp:
        root = Path(temp)
        print(f"sandboxes and reports under {root}")
        cases = make_cases(make_fixture(root), args.cases)
        verify = make_verify_cases(root, args.cases)
        timed_run(cases[:3], root, concurrency=1)  # warm imports and caches
        timed_run(verify[:3], root, concurrency=1)
        settle_after_startup()
        for _ in range(args.rounds):
            keep("one", timed_run(cases[:1], root, concurrency=1))
            parts = PartClocks()
            total = timed_run(cases, root, concurrency=1, parts=parts)
            keep("many", total, per=len(cases))
            shares = parts.per_case(len(cases))
            for name, clock in shares.items():
                keep(name, clock)
            keep("runner", _rest(total, len(cases), shares.values()))
            keep("parallel", timed_run(cases, root, concurrency=8), per=len(cases))
            parts = PartClocks()
            total = timed_run(verify, root, concurrency=1, parts=parts)
            keep("verify_many", total, per=len(verify))
            shares = parts.per_case(len(verify))
            keep("verify_sandbox", shares["sandbox"])
            keep("verify_runner", _rest(total, len(verify), [shares["sandbox"]]))
            keep("startup", import_cost())

    def both(value: Callable[[int], float]) -> str:
        return f"{value(0) * 1000:8.2f} ms {value(1) * 1000:8.2f} ms"

    def fixed(i: int) -> float:
        return best["one"][i] - best["many"][i]

    rows: list[tuple[str, Any]] = [
        ("python start + imports for `assay run`", lambda i: best["startup"][i]),
        ("fixed cost of a run (in process)", fixed),
        ("per case, concurrency 1", lambda i: best["many"][i]),
        ("  sandbox build + removal", lambda i: best["sandbox"][i]),
        ("  command runtime running /bin/true", lambda i: best["agent"][i]),
        ("  task checks (changes vs baseline, no commands)", lambda i: best["checks"][i]),
        ("  runner (the rest)", lambda i: best["runner"][i]),
        ("per case, concurrency 8 (throughput)", lambda i: best["parallel"][i]),
        ("verify case, in-process agent", lambda i: best["verify_many"][i]),
        ("  sandbox build + removal", lambda i: best["verify_sandbox"][i]),
        ("  runner (the rest)", lambda i: best["verify_runner"][i]),
    ]
    print(
        f"{args.rounds} rounds of {len(cases)} task cases, agent {' '.join(NOOP_AGENT)}, "
        "no verification commands; best of the rounds"
    )
    print(f"{'':42}{'wall':>11}{'CPU':>12}")
    for label, value in rows:
        print(f"{label:42}{both(value)}")

    child = subprocess.run(
        [sys.executable, __file__, "--memory-child", str(args.memory_cases)]
        + (["--dir", args.dir] if args.dir else []),
        capture_output=True,
        text=True,
        check=True,
    )
    memory = json.loads(child.stdout.strip().splitlines()[-1])
    print(
        f"{memory['cases']} cases, concurrency 8: {memory['wall_s']:.1f} s wall, "
        f"{memory['cpu_s']:.1f} s CPU, peak RSS {memory['max_rss_mib']:.1f} MiB, "
        f"tracemalloc peak {memory['tracemalloc_peak_mib']:.1f} MiB"
    )


if __name__ == "__main__":
    main()
