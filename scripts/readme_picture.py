#!/usr/bin/env python3
"""Take the README's picture: this repository's corpus (`assay run evals`) against the
loopback fake Anthropic server answering as a model would (tests/fakes/corpus_responder.py),
its report.html shot by headless chromium into docs/img/corpus-run.png.

    python scripts/readme_picture.py [--out docs/img/corpus-run.png]

Nothing leaves the machine; the task suites run the example agent (examples/), as
`assay run` does in this checkout. Needs chromium (`sudo apt-get install chromium`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.fakes

from tests.fakes.anthropic_api import FakeAnthropic  # noqa: E402
from tests.fakes.corpus_responder import corpus_responder  # noqa: E402

KEY = "sk-ant-readme-" + "k" * 24
ASSAY = [sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())"]


def _environ(fake_url: str) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not (name.endswith(("_API_KEY", "_BASE_URL")) or name.startswith(("ASSAY_", "GITHUB_")))
    }
    env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake_url)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the task fixtures' own tests need none
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "corpus-run.png")
    args = parser.parse_args()
    chromium = next(
        (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
    )
    if chromium is None:
        print("readme_picture: no chromium (sudo apt-get install chromium)", file=sys.stderr)
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="assay-picture-") as tmp,
        FakeAnthropic(api_key=KEY, responder=corpus_responder) as fake,
    ):
        report = Path(tmp) / "assay-report"
        done = subprocess.run(
            [*ASSAY, "run", "evals", "--report-dir", str(report)],
            cwd=ROOT,
            env=_environ(fake.url),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
        page = report / "report.html"
        if not page.is_file():
            return 1
        shot = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--window-size=1280,860",
                f"--screenshot={args.out}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if shot.returncode != 0:
            print(shot.stderr, file=sys.stderr)
            return 1
    print(f"readme_picture: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
