"""The fixed cost of assay's commands: what a user waits for before any case runs.

A benchmark, not a test. Each command runs as a fresh subprocess (the installed `assay`
console script), `--repeats` times, and the median wall time is reported:

- `python -c pass`: the interpreter alone, for reference;
- two floors, for reference: importing pydantic and building one model (what any
  validation with pydantic pays), and that plus asyncio and two no-op child processes
  awaited from an event loop (what any `assay run` built on these libraries pays);
- `assay --version`;
- `assay validate evals`: this repository's own corpus (every format);
- `assay validate evals/tasks`: a one-format project (suite models are built on first
  use, so a project pays only for the formats it has);
- `assay run` of a one-case task suite whose agent and only verification command are
  `/bin/true`: start-up, loading, planning, one sandbox, two no-op processes, the
  report files.

The same `assay run` is then repeated inside this process after a first call has paid
for the imports: what the run itself costs. Last, `python -X importtime` of that
`assay run` shows where start-up goes: the ten imports with the largest cumulative time
(and the ten with the largest own time).

Targets: `assay --version` and `assay validate` <= 0.3 s; the fixed cost of a run
<= 0.5 s.

    /work/venv/bin/python bench/bench_run_fixed_cost.py [--repeats 10]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _assay_runs import assay_env, bytecode_env  # noqa: E402
from _machine import describe_machine  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGETS_S = {
    "assay --version": 0.3,
    "assay validate evals": 0.3,
    "assay validate evals/tasks": 0.3,
    "assay run (1 task)": 0.5,
}
PYDANTIC_FLOOR = """
from pydantic import BaseModel, ConfigDict
class One(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int
One(x=1).model_dump_json()
"""
RUN_FLOOR = """
import asyncio
async def two_processes():
    for _ in range(2):
        await (await asyncio.create_subprocess_exec("/bin/true")).wait()
asyncio.run(two_processes())
"""
_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


def assay_command() -> list[str]:
    script = Path(sys.executable).parent / "assay"
    if script.exists():
        return [str(script)]
    found = shutil.which("assay")
    return [found] if found else [sys.executable, "-m", "assay.cli"]


def write_one_task_suite(root: Path) -> Path:
    fixture = root / "suite" / "fixtures" / "proj"
    fixture.mkdir(parents=True)
    (fixture / "README.md").write_text("A one-file workspace.\n")
    suite = {
        "id": "fixed-cost",
        "name": "Fixed cost",
        "tasks": [
            {
                "id": "noop",
                "name": "Nothing to do",
                "prompt": "Leave the workspace as it is.",
                "workspaceFixture": "fixtures/proj",
                # PVYai requires one; /bin/true changes nothing, so the case fails, as timed
                "expectedChangedFiles": ["README.md"],
                # A task needs one check; this one is a no-op process too.
                "verificationCommands": [{"id": "noop", "name": "no-op", "command": ["/bin/true"]}],
            }
        ],
    }
    path = root / "suite" / "tasks.json"
    path.write_text(json.dumps(suite, indent=2) + "\n")
    return path


def median_wall(argv: list[str], *, repeats: int, cwd: Path, env: dict[str, str]) -> float:
    walls = []
    for _ in range(repeats + 1):  # the first run warms the bytecode and file caches
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=120, check=False)
        walls.append(time.perf_counter() - started)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()}")
    return statistics.median(walls)


@dataclass(frozen=True)
class ImportTime:
    module: str
    self_us: int
    cumulative_us: int
    top_level: bool
    """Imported by the program itself, not by another module."""


def warm_run_median(run_args: list[str], *, repeats: int, report_root: Path) -> float:
    """`assay run` in this process once its modules are imported (the first call imports)."""
    from assay.cli import main as assay_main

    walls = []
    for attempt in range(repeats + 1):
        argv = [*run_args, "--report-dir", str(report_root / f"warm-{attempt}")]
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = assay_main(argv)
        if code not in (0, 1):
            raise SystemExit(f"assay {' '.join(argv)} exited {code}")
        walls.append(time.perf_counter() - started)
    return statistics.median(walls[1:])


def import_breakdown(
    argv: list[str], *, cwd: Path, env: dict[str, str]
) -> tuple[int, list[ImportTime]]:
    """The microseconds `argv` spends importing, and every module it imports, largest
    cumulative time first."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            # After "| ", two spaces per nesting level; a top-level import has one level.
            top_level = len(match.group(3)) == 3
            rows.append(
                ImportTime(match.group(4), int(match.group(1)), int(match.group(2)), top_level)
            )
    total = sum(row.cumulative_us for row in rows if row.top_level)  # they do not nest
    return total, sorted(_merge_repeats(rows), key=lambda row: row.cumulative_us, reverse=True)


def _merge_repeats(rows: list[ImportTime]) -> list[ImportTime]:
    """One row per module. A module imported while its package's __init__ is still
    running is listed twice (the outer entry with the inner one's time inside it)."""
    merged: dict[str, ImportTime] = {}
    for row in rows:
        seen = merged.get(row.module)
        if seen is not None:
            row = ImportTime(
                row.module,
                seen.self_us + row.self_us,
                max(seen.cumulative_us, row.cumulative_us),
                seen.top_level or row.top_level,
            )
        merged[row.module] = row
    return list(merged.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()

    print(describe_machine())
    assay = assay_command()
    as_given = assay_env()
    with tempfile.TemporaryDirectory(prefix="assay-bench-fixed-") as scratch:
        root = Path(scratch)
        compiled = bytecode_env(root / "pycache")
        suite = write_one_task_suite(root)
        run = ["run", str(suite), "--agent-command", "/bin/true"]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "floor: pydantic": [sys.executable, "-c", PYDANTIC_FLOOR],
            "floor: + asyncio, 2 procs": [sys.executable, "-c", PYDANTIC_FLOOR + RUN_FLOOR],
            "assay --version": [*assay, "--version"],
            "assay validate evals": [*assay, "validate", "evals"],
            "assay validate evals/tasks": [*assay, "validate", "evals/tasks"],
            "assay run (1 task)": [*assay, *run, "--report-dir", str(root / "r")],
        }
        medians = {
            name: [
                median_wall(argv, repeats=args.repeats, cwd=ROOT, env=env)
                for env in (compiled, as_given)
            ]
            for name, argv in commands.items()
        }
        warm_s = warm_run_median(run, repeats=args.repeats, report_root=root)
        total, imports = import_breakdown(
            ["-m", "assay.cli", *run, "--report-dir", str(root / "r")], cwd=ROOT, env=compiled
        )

    given = "PYTHONDONTWRITEBYTECODE=1" if as_given.get("PYTHONDONTWRITEBYTECODE") else "as set"
    print(f"command: {' '.join(assay)}; median of {args.repeats} fresh processes")
    print(f"  {'':26} {'bytecode':>9} {given:>26}")
    for name, (with_bytecode, as_set) in medians.items():
        target = TARGETS_S.get(name)
        verdict = ""
        if target is not None:
            verdict = (
                f"  target <= {target:.1f} s: {'met' if with_bytecode <= target else 'NOT met'}"
            )
        print(f"  {name:26} {with_bytecode * 1000:6.0f} ms {as_set * 1000:23.0f} ms{verdict}")
    print(
        f"  {'the run, imports warm':26} {warm_s * 1000:6.0f} ms  (in process, after a first run)"
    )
    print(f"\n`assay run` imports for {total / 1000:.0f} ms (python -X importtime, bytecode)")
    by_self = sorted(imports, key=lambda row: row.self_us, reverse=True)
    for title, rows in (("top 10 by cumulative time", imports), ("top 10 by own time", by_self)):
        print(f"{title}:\n  cumulative      self  module")
        for row in rows[:10]:
            print(
                f"  {row.cumulative_us / 1000:7.1f} ms {row.self_us / 1000:6.1f} ms  {row.module}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
