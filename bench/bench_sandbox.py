"""Sandbox construction: assay's builder against the plain git command sequence.

A benchmark, not a test. It builds N realistic review sandboxes (a skill, one supporting
file, two fixture files of 20-80 lines) twice per case, interleaved so that both see the
same machine load:

- assay: `build_sandbox` (objects, refs and index written directly, one `git diff`);
- plain: the Warden sequence as git commands - `git init`, copy, `git add`,
  `git commit` on main, `git checkout -b eval`, copy fixtures, `git add`, `git commit`,
  `git diff main...eval` - with the same isolated git environment.

Then it times rubric (base directory + `git apply`) and task (workspace copy) sandboxes,
and sandbox removal.

    /work/venv/bin/python bench/bench_sandbox.py [--cases 50] [--work-root DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from assay.isolation.git import git_environment
from assay.suites.case import Case, FixtureFile, ReviewSpec, RubricSpec, TaskSpec
from assay.workspace import Sandbox, build_sandbox, remove_sandbox

TYPES = ("string", "number", "boolean", "User", "Order")


def _source(rng: random.Random, lines: int, tag: str) -> str:
    body = [f"// {tag}", "import { db } from '../db';", ""]
    while len(body) < lines - 1:
        i = len(body)
        kind = rng.choice(TYPES)
        body.append(f"export async function get{tag}{i}(id: string): Promise<{kind} | null> {{")
        body.append(f"  const rows = await db.query('select * from t{i} where id = $1', [id]);")
        body.append("  return rows.find((row) => row.id === id) ?? null;")
        body.append("}")
    return "\n".join(body[: lines - 1] + ["// end"]) + "\n"


def _case(kind: str, name: str, spec: ReviewSpec | RubricSpec | TaskSpec, root: Path) -> Case:
    formats = {"review": "review-yaml", "rubric": "rubric-manifest", "task": "task-suite"}
    return Case(
        id=f"bench/{name}",
        suite="bench",
        name=name,
        kind=kind,  # type: ignore[arg-type]
        format=formats[kind],  # type: ignore[arg-type]
        source_path=root / "suite.yaml",
        source_line=1,
        spec=spec,
    )


def make_review_cases(root: Path, count: int) -> list[Case]:
    rng = random.Random(1)
    skill = root / "skills" / "bug-detection.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("# Bug detection\n\nReport null dereferences and off-by-one errors.\n" * 8)
    cases = []
    for i in range(count):
        case_dir = root / "fixtures" / f"case-{i}"
        source = case_dir / "github" / "acme" / "shop" / "src"
        source.mkdir(parents=True)
        (case_dir / "LICENSE").write_text("MIT License\n\nCopyright (c) acme\n" * 5)
        files = []
        for name in ("handler.ts", "orders.ts"):
            (source / name).write_text(_source(rng, rng.randint(20, 80), f"Case{i}"))
            files.append(FixtureFile(source / name, f"case-{i}/src/{name}"))
        spec = ReviewSpec(
            given="a null access",
            files=tuple(files),
            supporting_files=(FixtureFile(case_dir / "LICENSE", f"case-{i}/LICENSE"),),
            skill=skill,
            repository="acme/shop",
        )
        cases.append(_case("review", f"case-{i}", spec, root))
    return cases


def build_plain(spec: ReviewSpec, parent: Path) -> str:
    """The Warden recipe as plain git commands; returns the diff."""
    repo = Path(tempfile.mkdtemp(dir=parent))
    env = git_environment(ceiling=parent)

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
        ).stdout

    def copy(source: Path, dest: str) -> None:
        target = repo / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)

    git("init", "-q", "-b", "main")
    assert spec.skill is not None
    copy(spec.skill, f".assay/skill/{spec.skill.name}")
    for fixture in spec.supporting_files:
        copy(fixture.source, fixture.dest)
    git("add", "-A")
    git("commit", "-q", "-m", "skill and supporting files")
    git("checkout", "-q", "-b", "eval")
    for fixture in spec.files:
        copy(fixture.source, fixture.dest)
    git("add", "-A")
    git("commit", "-q", "-m", "fixture files")
    return git("diff", "main...eval")


def make_rubric_case(root: Path) -> Case:
    rng = random.Random(2)
    base = root / "rubric" / "base"
    for i in range(30):
        path = base / f"pkg{i % 5}" / f"mod{i}.go"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_source(rng, 40, f"Mod{i}"))
    (base / "AGENTS.md").write_text("Use the logging helpers.\n")
    work = root / "rubric" / "origin"
    shutil.copytree(base, work)
    env = git_environment(ceiling=work.parent)
    subprocess.run(["git", "init", "-q"], cwd=work, env=env, check=True)
    subprocess.run(["git", "add", "-A"], cwd=work, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "base"], cwd=work, env=env, check=True)
    for i in (3, 7, 11):
        path = work / f"pkg{i % 5}" / f"mod{i}.go"
        path.write_text(path.read_text().replace("?? null", "!"))
    diff = subprocess.run(
        ["git", "diff"], cwd=work, env=env, check=True, capture_output=True
    ).stdout
    (root / "rubric" / "input.diff").write_bytes(diff)
    spec = RubricSpec(rubric="r", diff=root / "rubric" / "input.diff", base=base)
    return _case("rubric", "rubric", spec, root)


def make_task_case(root: Path) -> Case:
    rng = random.Random(3)
    workspace = root / "task"
    for i in range(30):
        path = workspace / f"src{i % 5}" / f"file{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_source(rng, 40, f"F{i}"))
    spec = TaskSpec(prompt="p", workspace=workspace, commands=())
    return _case("task", "task", spec, root)


def _timed(action: Callable[..., object], *args: object, **kwargs: object) -> float:
    started = time.perf_counter()
    action(*args, **kwargs)
    return (time.perf_counter() - started) * 1000


def _summary(label: str, samples: list[float]) -> str:
    mean = statistics.fmean(samples)
    return (
        f"  {label:<10} {mean:6.1f} ms/case (median {statistics.median(samples):5.1f}, "
        f"min {min(samples):5.1f})  {1000 / mean:6.1f} cases/s"
    )


def machine() -> str:
    cpu = "unknown CPU"
    with open("/proc/cpuinfo", encoding="utf-8") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return f"{os.cpu_count()} CPUs, {cpu}, {git}, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--work-root", type=Path, default=None)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-sandbox-", dir=args.work_root) as tmp:
        root = Path(tmp)
        inputs, ours, plain = root / "inputs", root / "assay", root / "plain"
        for directory in (inputs, ours, plain):
            directory.mkdir()
        cases = make_review_cases(inputs, args.cases)
        print(f"machine: {machine()}")
        print(f"work root: {root}")

        # Warm up both paths (imports, page cache), and check they agree on the diff.
        sandbox = build_sandbox(cases[0], parent=ours)
        assert isinstance(cases[0].spec, ReviewSpec)
        assert sandbox.diff == build_plain(cases[0].spec, plain), "the two recipes disagree"

        built: list[Sandbox] = []
        assay_ms: list[float] = []
        plain_ms: list[float] = []
        for i, case in enumerate(cases):
            spec = case.spec
            assert isinstance(spec, ReviewSpec)
            if i % 2:  # alternate which goes first, so neither always gets a warmer cache
                plain_ms.append(_timed(build_plain, spec, plain))
            started = time.perf_counter()
            built.append(build_sandbox(case, parent=ours))
            assay_ms.append((time.perf_counter() - started) * 1000)
            if not i % 2:
                plain_ms.append(_timed(build_plain, spec, plain))

        print(
            f"review sandbox (skill + 1 supporting file + 2 fixture files of 20-80 lines), "
            f"{len(cases)} cases, interleaved:"
        )
        print(_summary("assay", assay_ms))
        print(_summary("plain git", plain_ms))
        ratio = statistics.fmean(plain_ms) / statistics.fmean(assay_ms)
        print(f"  assay is {ratio:.1f}x faster")

        removal = [_timed(remove_sandbox, sandbox) for sandbox in built]
        print(f"removal of a review sandbox: {statistics.fmean(removal):.1f} ms/sandbox")

        for label, case in (
            (
                "rubric sandbox (30-file base dir + git apply of a 3-file diff)",
                make_rubric_case(inputs),
            ),
            ("task sandbox (30-file workspace)", make_task_case(inputs)),
        ):
            build_sandbox(case, parent=ours)  # warm-up
            samples = [_timed(build_sandbox, case, parent=ours) for _ in range(args.cases)]
            print(f"{label}, {args.cases} builds:")
            print(_summary("assay", samples))


if __name__ == "__main__":
    main()
