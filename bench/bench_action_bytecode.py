"""The Action's install and first import, with and without its bytecode kept in the cache.

A benchmark, not a test (it downloads the lock's packages from PyPI the first time). It
runs action.yml's own "Install assay" script (the uv branch) in a scratch RUNNER_TEMP,
then times what a run imports before its first model call (the provider SDK, its
transport and assay's runner), started as the "Run the evals" step starts assay:

- `no prefix`: the venv as uv leaves it, without .pyc files: each job compiles.
- `cache miss`: `-X pycache_prefix` under the install cache, empty: the first workflow
  run of a lock compiles, and writes the bytecode there.
- `cache hit`: the install cache saved and restored as actions/cache does (a tar round
  trip, which keeps file times), the venv installed again from it: a later workflow run.

    python bench/bench_action_bytecode.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._machine import describe_machine  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIRST_CALL_IMPORTS = "import anthropic, aiohttp, assay.runner.session, assay.report.html"
RUNNER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""A runner writes bytecode; a developer's shell may say not to (this project's build
machine does), which would measure every import as a first one."""


def _step(name: str) -> str:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in action["runs"]["steps"] if s.get("name") == name]
    return str(step["run"])


def install(runner_temp: Path) -> str:
    """Run the Action's install script; the pycache prefix it reports ("" for pip's)."""
    output = runner_temp / "github-output"
    output.write_text("")
    env = {
        **RUNNER_ENV,
        "PYTHON": sys.executable,
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_OUTPUT": str(output),
        "UV_CACHE_DIR": str(runner_temp / "assay-install-cache" / "uv"),
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
    }
    subprocess.run(["bash", "-c", _step("Install assay")], env=env, cwd=runner_temp, check=True)
    lines = output.read_text().splitlines()
    return next((line.split("=", 1)[1] for line in lines if line.startswith("pycache-prefix=")), "")


def first_import(runner_temp: Path, prefix: str) -> float:
    """Wall seconds of the first call's imports, in a process started as the step starts it."""
    python = runner_temp / "assay-venv" / "bin" / "python"
    flags = ["-X", f"pycache_prefix={prefix}"] if prefix else []
    started = time.perf_counter()
    subprocess.run([python, "-P", *flags, "-c", FIRST_CALL_IMPORTS], env=RUNNER_ENV, check=True)
    return time.perf_counter() - started


def save_and_restore(runner_temp: Path) -> None:
    """What actions/cache does between workflow runs: a tar of the cache, a fresh runner."""
    cache = runner_temp / "assay-install-cache"
    archive = runner_temp.parent / "cache.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(cache, arcname=cache.name)
    shutil.rmtree(runner_temp)
    runner_temp.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(runner_temp, filter="tar")
    archive.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(describe_machine())
    with tempfile.TemporaryDirectory(prefix="assay-bench-bytecode-") as scratch:
        runner_temp = Path(scratch) / "runner-temp"
        runner_temp.mkdir()
        started = time.perf_counter()
        prefix = install(runner_temp)
        print(f"install (cold uv cache): {time.perf_counter() - started:.1f} s")
        if not prefix:
            raise SystemExit("the install used pip, not uv: no bytecode prefix to measure")
        # Each job installs a fresh venv (--clear): a first import is always into one.
        no_prefix = [first_import(runner_temp, "")]
        for _ in range(args.repeat - 1):
            install(runner_temp)
            no_prefix.append(first_import(runner_temp, ""))
        install(runner_temp)
        miss = first_import(runner_temp, prefix)
        save_and_restore(runner_temp)
        hit, installs = [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            install(runner_temp)
            installs.append(time.perf_counter() - started)
            hit.append(first_import(runner_temp, prefix))
        size = sum(f.stat().st_size for f in Path(prefix).rglob("*.pyc")) / 2**20
    print(f"install (restored cache): {', '.join(f'{t:.1f}' for t in installs)} s")
    print(f"first-call imports, no prefix: {', '.join(f'{t:.2f}' for t in no_prefix)} s")
    print(f"first-call imports, cache miss (compiles, writes {size:.0f} MiB): {miss:.2f} s")
    print(f"first-call imports, cache hit: {', '.join(f'{t:.2f}' for t in hit)} s")


if __name__ == "__main__":
    main()
