"""What the OS sandbox costs per attempt, and what the resource limits cost to enforce.

A benchmark, not a test. Three measurements:

1. **One confined process**: `/bin/true` through `assay.isolation.processes.run_command`, with and
   without the bwrap confinement an agent gets, interleaved (`--processes` of each), so
   both see the same machine load. The difference is bwrap's setup (namespaces, mounts)
   and teardown per process. The confinement starts `prlimit` (the resource limits) and
   then the exec shim (`assay.isolation.exec_shim`: starts the program as Go does, reports how
   it ended), one interpreter start: each measured on its own too, in front of an
   unconfined `/bin/true` (the shim as it runs where prlimit is missing: setting the
   limits itself).
2. **Per attempt**: `assay.run` of a one-task suite whose agent and only verification
   command are `/bin/true` (two confined processes per attempt), `--repeat` attempts,
   with `--isolation none` and `--isolation bwrap`, alternating for `--rounds` rounds.
3. **Tar bomb**: two million empty members in a ~4 MB gzip, checked with the real
   limits in a fresh subprocess: its CPU time and peak RSS.

    /work/venv/bin/python bench/bench_isolation.py [--processes 100] [--repeat 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import describe_machine  # noqa: E402
from assay.isolation.bwrap import probe_bwrap, resolve_sandboxing  # noqa: E402
from assay.isolation.exec_shim import shim_source  # noqa: E402
from assay.isolation.limits import limit_argv, limit_word  # noqa: E402
from assay.isolation.processes import run_command  # noqa: E402


def one_process(work: Path, count: int) -> dict[str, list[float]]:
    # A masked directory (a suite checkout) beside the case's own, both there: bwrap
    # refuses a mask over a missing directory, or one inside the writable directory.
    hidden, case = work / "hidden", work / "case"
    hidden.mkdir(exist_ok=True)
    case.mkdir(exist_ok=True)
    sandboxing = resolve_sandboxing("bwrap", masked=[hidden])
    confinement = sandboxing.for_agent(case)
    assert confinement is not None
    times: dict[str, list[float]] = {"plain": [], "bwrap": [], "prlimit": [], "shim": []}
    shim = [confinement.python, "-I", "-S", "-c", shim_source(), "-1"]
    prefixes = {
        "prlimit": limit_argv(sandboxing.limits, prlimit=sandboxing.prlimit or "prlimit"),
        "shim": [*shim, limit_word(sandboxing.limits), ""],  # no relay
    }

    async def once(isolation: object, prefix: list[str] | None = None) -> float:
        started = time.perf_counter()
        result = await run_command(
            [*(prefix or []), "/bin/true"],
            cwd=case,
            env={"PATH": os.defpath},
            timeout_s=30,
            stdout_path=work / "out",
            stderr_path=work / "err",
            isolation=isolation,  # type: ignore[arg-type]
        )
        elapsed = time.perf_counter() - started
        assert result.exit_code == 0, result.stderr_tail  # a start that failed is no measure
        return elapsed

    async def main() -> None:
        for _ in range(count):
            times["plain"].append(await once(None))
            times["bwrap"].append(await once(confinement))
            for name, prefix in prefixes.items():
                times[name].append(await once(None, prefix))

    asyncio.run(main())
    return times


def task_suite(root: Path) -> Path:
    fixture = root / "fixtures" / "ws"
    fixture.mkdir(parents=True)
    (fixture / "a.txt").write_text("a\n")
    task = {
        "id": "noop",
        "name": "noop",
        "difficulty": "easy",
        "prompt": "nothing",
        "workspaceFixture": "fixtures/ws",
        "verificationCommands": [{"id": "true", "name": "true", "command": ["/bin/true"]}],
        "expectedChangedFiles": ["a.txt"],  # /bin/true changes nothing: a fail, timed all the same
    }
    suite = root / "suite.json"
    suite.write_text(json.dumps({"id": "bench", "name": "bench", "tasks": [task]}))
    return suite


def per_attempt(work: Path, repeat: int, rounds: int) -> dict[str, list[float]]:
    import assay
    from assay.options import RunOptions

    suite = task_suite(work / "project")
    times: dict[str, list[float]] = {"none": [], "bwrap": []}
    for index in range(rounds):
        for mode in ("none", "bwrap"):
            options = RunOptions(
                paths=(str(suite),),
                agent_command=("/bin/true",),
                repeat=repeat,
                concurrency=1,
                isolation=mode,  # type: ignore[arg-type]
                report_dir=work / f"report-{mode}-{index}",
                work_root=work / "sandboxes",
            )
            (work / "sandboxes").mkdir(exist_ok=True)
            started = time.perf_counter()
            report = assay.run(options)
            elapsed = time.perf_counter() - started
            assert report.run.isolation is not None and report.run.isolation.mode == mode
            times[mode].append(elapsed / repeat)
    return times


BOMB_CHECK = """
import resource, sys, time
from pathlib import Path
from assay._util.tarsafe import check_tarball
started = time.process_time()
problems = check_tarball(Path(sys.argv[1]))
cpu = time.process_time() - started
print(cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, problems[0])
"""


def tar_bomb(work: Path) -> str:
    header = tarfile.TarInfo("m").tobuf(format=tarfile.USTAR_FORMAT)
    bomb = work / "base.tar.gz"
    bomb.write_bytes(gzip.compress(header * 10_000, compresslevel=9) * 200)
    baseline = subprocess.run(
        [sys.executable, "-c", "import resource, assay._util.tarsafe; "
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", BOMB_CHECK, str(bomb)], capture_output=True, text=True, check=True
    )
    cpu, rss, problem = done.stdout.strip().split(" ", 2)
    return (
        f"tar bomb: 2,000,000 members, {bomb.stat().st_size / 1e6:.1f} MB gzip: refused in "
        f"{float(cpu):.2f} s CPU, peak RSS {int(rss) / 1024:.0f} MiB "
        f"(interpreter + imports alone: {int(baseline.stdout) / 1024:.0f} MiB): {problem}"
    )


def describe(times: list[float]) -> str:
    median, mean = statistics.median(times) * 1000, statistics.mean(times) * 1000
    return f"median {median:.1f} ms, mean {mean:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    bwrap, why = probe_bwrap()
    if bwrap is None:
        sys.exit(f"no working bwrap: {why}")
    print(describe_machine())
    print(subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory(prefix="assay-bench-isolation-") as scratch:
        work = Path(scratch)
        single = one_process(work, args.processes)
        print(
            f"/bin/true, {args.processes} each: "
            + "; ".join(f"{name} {describe(values)}" for name, values in single.items())
        )
        plain = statistics.median(single["plain"])
        for name in ("bwrap", "prlimit", "shim"):
            overhead = statistics.median(single[name]) - plain
            print(f"  {name} overhead per process: {overhead * 1000:.1f} ms (median difference)")
        times = per_attempt(work, args.repeat, args.rounds)
        for mode, values in times.items():
            print(
                f"per attempt, --isolation {mode}: "
                + ", ".join(f"{v * 1000:.1f}" for v in values)
                + f" ms (rounds); median {statistics.median(values) * 1000:.1f} ms"
            )
        extra = statistics.median(times["bwrap"]) - statistics.median(times["none"])
        print(f"  bwrap overhead per attempt (agent + 1 command): {extra * 1000:.1f} ms")
        print(tar_bomb(work))


if __name__ == "__main__":
    main()
