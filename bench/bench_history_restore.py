"""Restoring the run history from an artifact: what `keep-history` costs a CI job.

A benchmark, not a test. It records `--runs` runs of `--cases` review cases each (the
viewer tests' reports) into a history directory with `record_run`, zips it as
upload-artifact does, serves it from the loopback GitHub fake (artifact list, run, 302 to
blob storage) and calls `restore_history` through PyGithub `--repeat` times into fresh
directories, printing each wall time, the history's size raw and zipped, and the machine.

    python bench/bench_history_restore.py [--runs 20] [--cases 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._machine import describe_machine  # noqa: E402
from tests.fakes.github import FakeGitHub  # noqa: E402
from tests.fakes.github_artifacts import (  # noqa: E402
    add_artifact,
    add_artifact_routes,
    add_workflow_run,
    zip_of_directory,
)
from tests.viewer_reports import viewer_report  # noqa: E402

from assay.action import github_api  # noqa: E402
from assay.action.github_api import github_client  # noqa: E402
from assay.action.history_artifact import restore_history  # noqa: E402
from assay.report.history import record_run  # noqa: E402

REPO = "acme/widgets"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(describe_machine())
    github_api.BACKOFF_S = 0.0
    with tempfile.TemporaryDirectory(prefix="assay-bench-history-") as scratch:
        source = Path(scratch) / "source"
        for n in range(args.runs):
            report = viewer_report(args.cases, run_id=f"run{n:03d}")
            record_run(report, source, branch="main", keep=args.runs)
        raw = sum(p.stat().st_size for p in source.rglob("*") if p.is_file())
        data = zip_of_directory(source)
        print(
            f"history: {args.runs} runs x {args.cases} cases, {raw / 1e6:.1f} MB raw, "
            f"{len(data) / 1e6:.2f} MB zipped"
        )
        with FakeGitHub(token="bench-token") as fake:
            add_artifact_routes(fake)
            fake.add_repo(REPO)
            run = add_workflow_run(fake, REPO)
            add_artifact(fake, REPO, run=run, data=data, name="assay-history")
            client = github_client(api_url=fake.url, token="bench-token")
            for attempt in range(args.repeat):
                started = time.perf_counter()
                restored = restore_history(
                    client,
                    repository=REPO,
                    artifact_name="assay-history",
                    history_dir=Path(scratch) / f"restored-{attempt}",
                    keep=args.runs,
                    allow_http=True,
                )
                print(
                    f"restore {attempt + 1}: {restored} runs in "
                    f"{time.perf_counter() - started:.2f} s"
                )


if __name__ == "__main__":
    main()
