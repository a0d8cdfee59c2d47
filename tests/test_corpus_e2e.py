"""`assay run evals/` on the project's own corpus, offline, through the fake Messages API.

Every review, verify and rubric case goes through the builtin agent and the judges over
the real `anthropic` SDK to the loopback fake, where `corpus_responder` plays a plausible
reviewer, verifier and judge for any case (it never looks at case names). Task cases run
the example agent from `[tool.assay]`. The runs check what a user relies on:

- everything runs end to end, and report.json carries findings, the judge's verdict and
  reasoning, token usage, cost and a transcript for every model-backed case;
- ~30% of requests answered first by a fault (429, 529, 500, dropped connection) change
  no status and no score;
- without a key the model-backed cases are skipped and the tasks still pass;
- the API key appears in no file, transcript, workspace or console output;
- the report's cases, checks, findings, verdicts and summary equal the committed golden
  file `tests/data/corpus-golden.json` (times, temp paths and the task checks' own
  command output left out), so a refactor that changes what a run concludes is seen.
  After an intended change, regenerate it: `UPDATE_GOLDEN=1 pytest tests/test_corpus_e2e.py`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.models import retry
from assay.models.pricing import cost_usd
from assay.report.model import CaseResult, Report, Usage
from assay.suites import load_suites
from assay.suites.case import Case, ReviewSpec, VerifySpec
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.corpus_responder import (
    FINDING_SEVERITY,
    RUBRIC_SCORE,
    FaultyResponder,
    corpus_responder,
)

# The whole corpus through the CLI, once per module, and again with faults.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
API_KEY = "sk-ant-test-SECRET-1234567890"
MODEL = "anthropic/claude-sonnet-4-6"
MODEL_KINDS = ("review", "verify", "rubric")
GOLDEN = ROOT / "tests" / "data" / "corpus-golden.json"
ASSAY = [sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())"]
# What the scripted model spends per case (the fake's default tool-call usage is 40 in /
# 20 out per agent turn; the judges' answers state their own): (calls, input, output).
SPEND = {"review": (3, 200, 100), "verify": (2, 80, 40), "rubric": (3, 230, 90)}


@dataclass(frozen=True)
class CorpusRun:
    exit_code: int
    report: Report
    report_dir: Path
    work_root: Path
    output: str
    """stdout and stderr of the run."""
    calls: int
    """Requests the fake Messages API received."""

    def by_id(self) -> dict[str, CaseResult]:
        return {case.id: case for case in self.report.cases}


def run_args(base: Path, *extra: str) -> list[str]:
    return [
        "run",
        "evals",
        "--concurrency",
        "8",
        "--report-dir",
        str(base / "report"),
        "--work-root",
        str(base / "work"),
        *extra,
    ]


def corpus_cases() -> dict[str, Case]:
    return {case.id: case for case in load_suites([ROOT / "evals"]).cases}


def expected_status(case: Case) -> str:
    """The status each case must get from the scripted model and the example agent."""
    spec = case.spec
    if isinstance(spec, ReviewSpec):
        # The judge matches every should_find to the one finding; only severity can differ.
        required = [e.severity for e in spec.should_find if e.required and e.severity]
        return "pass" if all(s == FINDING_SEVERITY for s in required) else "fail"
    if isinstance(spec, VerifySpec):
        return "pass" if spec.expect_verdict == "keep" else "fail"  # the verifier keeps
    return "pass"  # rubric (met, score 4) and task cases (the example agent solves them)


def outcomes(run: CorpusRun) -> dict[str, tuple[str, float | None]]:
    return {case.id: (case.status, case.score) for case in run.report.cases}


@pytest.fixture(autouse=True)
def in_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    """`assay run evals` from the project root, as a user types it."""
    monkeypatch.chdir(ROOT)
    # The task fixtures' own test runs need none of this environment's pytest plugins;
    # loading them (hypothesis and others) takes seconds on every run.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CorpusRun]:
    """The whole corpus, fault free, through the real CLI in a subprocess, keeping workspaces."""
    base = tmp_path_factory.mktemp("clean")
    fake = FakeAnthropic(api_key=API_KEY, responder=corpus_responder)
    with fake:
        env = {**offline_environ(), "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.url}
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # see in_the_project
        done = subprocess.run(
            [*ASSAY, *run_args(base, "--keep-workspaces", "--cassandra-report")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        calls = fake.calls
    report = Report.model_validate_json((base / "report" / "report.json").read_text())
    yield CorpusRun(
        done.returncode,
        report,
        base / "report",
        base / "work",
        done.stdout + done.stderr,
        calls,
    )


def offline_environ() -> dict[str, str]:
    """This process's environment without credentials or CI variables (as conftest clears
    them for each test; a module-scoped fixture runs before that)."""
    return {
        name: value
        for name, value in os.environ.items()
        if not (
            name.endswith(("_API_KEY", "_BASE_URL"))
            or name in {"GITHUB_TOKEN", "GH_TOKEN", "RUNNER_TEMP"}
            or name.startswith(("GITHUB_", "INPUT_", "ASSAY_"))
        )
    }


# -- (1) every case end to end -----------------------------------------------------------------


def test_every_case_of_the_corpus_runs_end_to_end(clean_run: CorpusRun) -> None:
    cases = corpus_cases()
    results = clean_run.by_id()
    assert sorted(results) == sorted(cases)
    assert {c.kind for c in cases.values()} == {"review", "verify", "rubric", "task"}
    assert {i: r.status for i, r in results.items()} == {
        i: expected_status(c) for i, c in cases.items()
    }, clean_run.output

    model_backed = [r for r in results.values() if r.kind in MODEL_KINDS]
    assert clean_run.calls == sum(SPEND[r.kind][0] for r in model_backed)
    for result in model_backed:
        check_model_backed(result, cases[result.id], clean_run.report_dir)
    for result in results.values():
        if result.kind == "task":
            assert (result.status, result.score, result.runtime) == ("pass", 1.0, "command")

    summary = clean_run.report.summary
    assert (summary.errors, summary.skipped) == (0, 0)
    assert summary.tokens.input == sum(SPEND[r.kind][1] for r in model_backed)
    assert summary.cost_usd == pytest.approx(sum(r.usage.cost_usd or 0 for r in model_backed))
    assert clean_run.report.run.judge_model == MODEL
    expected_exit = 0 if summary.gate == "pass" else 1
    assert clean_run.exit_code == expected_exit, clean_run.output


def test_cassandra_report_lists_every_rubric_case_in_cassandras_layout(
    clean_run: CorpusRun,
) -> None:
    from tests.test_cassandra_parity import assert_cassandra_shape

    entries = json.loads((clean_run.report_dir / "cassandra-results.json").read_text())
    rubric = {r.id: r for r in clean_run.report.cases if r.kind == "rubric"}
    assert len(entries) == len(rubric) > 0
    for entry in entries:
        assert_cassandra_shape(entry)
        result = next(r for r in rubric.values() if r.id.endswith(f"/{entry['case_id']}"))
        assert entry["subject_result"]["score"] == result.judge["verdict"]["score"]
        assert "error" not in entry


def check_model_backed(result: CaseResult, case: Case, report_dir: Path) -> None:
    where = result.id
    assert (result.model, result.runtime) == (MODEL, "builtin"), where
    _, tokens_in, tokens_out = SPEND[result.kind]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (tokens_in, tokens_out)
    priced = cost_usd(MODEL, Usage(input_tokens=tokens_in, output_tokens=tokens_out))
    assert priced is not None and priced > 0
    assert result.usage.cost_usd == pytest.approx(priced), where

    transcript = result.attempts[0].transcript
    assert transcript is not None, where
    saved = json.loads((report_dir / transcript).read_text())
    assert saved["case_id"] == result.id and saved["error"] is None
    read_results = tool_results(saved)
    # The agent's first move reads the first changed file: it must exist in the sandbox.
    assert read_results and not read_results[0]["is_error"], (where, read_results)
    assert read_results[0]["content"].startswith("     1\t"), where

    if result.kind == "verify":
        assert result.findings == [] and result.judge == {}
        return
    (finding,) = result.findings
    assert finding["severity"] == FINDING_SEVERITY
    assert result.workspace is not None
    assert (Path(result.workspace) / finding["location"]["path"]).is_file(), where
    verdict = result.judge["verdict"]
    assert result.judge["model"] == MODEL and result.judge["attempts"] == 1
    if result.kind == "rubric":
        assert verdict["score"] == RUBRIC_SCORE and verdict["met_rubric"] is True
        assert verdict["rationale"] and result.checks[0].message == verdict["rationale"]
        assert result.score == (RUBRIC_SCORE - 1) / 4
        return
    spec = case.spec
    assert isinstance(spec, ReviewSpec)
    assert [e["index"] for e in verdict["should_find"]] == list(range(len(spec.should_find)))
    assert len(verdict["should_not_find"]) == len(spec.should_not_find)
    for entry in verdict["should_find"]:
        assert entry["met"] and entry["matchedFindingIndex"] == 0 and entry["reasoning"]
    assert all(e["reasoning"] and not e["violated"] for e in verdict["should_not_find"])
    reasoned = {c.id: c.message for c in result.checks if c.kind == "should_find"}
    assert all(reasoned.values()) and len(reasoned) == len(spec.should_find)


def tool_results(transcript: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in transcript["messages"]
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


# -- (2) transient faults change nothing ---------------------------------------------------


def test_injected_faults_give_the_same_statuses_and_scores(
    clean_run: CorpusRun,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def no_sleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(retry, "sleep", no_sleep)
    faulty = FaultyResponder(corpus_responder, seed=20240611, rate=0.3)
    fake = FakeAnthropic(api_key=API_KEY, responder=faulty)
    with fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        code = main(run_args(tmp_path))
        calls = fake.calls
    output = capsys.readouterr()
    report = Report.model_validate_json((tmp_path / "report" / "report.json").read_text())
    run = CorpusRun(code, report, tmp_path / "report", tmp_path / "work", output.out, calls)

    served = sum(faulty.faults_served.values())
    assert set(faulty.faults_served) == {"429", "529", "500", "dropped"}, faulty.faults_served
    assert 0.15 * clean_run.calls <= served <= 0.45 * clean_run.calls
    # Each fault cost exactly one retry: nothing else was asked again.
    assert calls == clean_run.calls + served
    assert run.report.summary.errors == 0, output.out
    assert outcomes(run) == outcomes(clean_run)
    assert code == clean_run.exit_code
    clean = clean_run.by_id()
    for result in run.report.cases:
        if result.kind in MODEL_KINDS:
            before = clean[result.id]
            assert result.findings == before.findings, result.id
            assert result.judge == before.judge, result.id
            assert result.usage == before.usage, result.id


# -- (3) no key -------------------------------------------------------------------------------


def test_without_a_key_model_cases_are_skipped_and_tasks_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeAnthropic(responder=corpus_responder)
    with fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)  # reachable, but never asked
        code = main(run_args(tmp_path))
        calls = fake.calls
    out = capsys.readouterr().out
    report = Report.model_validate_json((tmp_path / "report" / "report.json").read_text())

    assert code == 0, out
    assert calls == 0
    kinds = {case.kind for case in report.cases}
    assert kinds == {"review", "verify", "rubric", "task"}
    for case in report.cases:
        if case.kind == "task":
            assert case.status == "pass", (case.id, case.reason)
        else:
            assert case.status == "skipped", case.id
            assert "ANTHROPIC_API_KEY" in case.reason, case.reason
    assert report.summary.gate == "pass"


# -- (4) no secret anywhere ---------------------------------------------------------------


def test_the_api_key_appears_in_no_output(clean_run: CorpusRun) -> None:
    reports = list(files_under(clean_run.report_dir))
    workspaces = list(files_under(clean_run.work_root))
    # Not a vacuous scan: transcripts were written and --keep-workspaces kept the sandboxes.
    assert any(path.name == "transcript.json" for path in reports)
    assert any(".git" in path.parts for path in workspaces)
    scanned = reports + workspaces
    leaks = [str(path) for path in scanned if API_KEY.encode() in readable_bytes(path)]
    assert leaks == []
    assert API_KEY not in clean_run.output
    assert "SECRET-1234567890" not in clean_run.output


def files_under(root: Path) -> Iterator[Path]:
    return (path for path in root.rglob("*") if path.is_file() and not path.is_symlink())


def readable_bytes(path: Path) -> bytes:
    """The file's bytes, plus the inflated content of a loose git object (zlib-compressed)."""
    data = path.read_bytes()
    if ".git" in path.parts and "objects" in path.parts:
        try:
            return data + zlib.decompress(data)
        except zlib.error:
            pass
    return data


# -- (5) the same conclusions as before ---------------------------------------------------

_VOLATILE = {"duration_s", "durationS", "started_at", "finished_at"}
"""Clocks, which differ between any two runs."""
_MKDTEMP_SUFFIX = re.compile(r"-[a-z0-9_]{8}/")
_COMMAND_OUTPUT = {"stdout", "stderr", "outputTail"}
"""A task check's own command output: the fixture's pytest words it, not assay."""


def golden_view(report: dict[str, Any], base: Path) -> dict[str, Any]:
    """What a run concludes: every case (its checks, findings, judge, usage, attempts) and
    the summary, without clocks, command output or the run's temp and checkout paths."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: clean(item)
                for key, item in value.items()
                if key not in _VOLATILE and key not in _COMMAND_OUTPUT
            }
        if isinstance(value, list):
            return [clean(item) for item in value]
        if isinstance(value, str):
            value = value.replace(str(base), "<tmp>").replace(str(ROOT), "<repo>")
            if value.startswith("<tmp>"):  # a kept workspace: mkdtemp's random suffixes
                value = _MKDTEMP_SUFFIX.sub("-<random>/", value)
            return re.sub(r"\b\d+\.\d+s\b", "<time>", value)
        return value

    return clean({"summary": report["summary"], "cases": report["cases"]})


def test_the_corpus_report_matches_the_golden_file(clean_run: CorpusRun) -> None:
    raw = json.loads((clean_run.report_dir / "report.json").read_text(encoding="utf-8"))
    observed = golden_view(raw, clean_run.report_dir.parent)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(observed, indent=1, ensure_ascii=False) + "\n", "utf-8")
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert observed["summary"] == expected["summary"]
    assert [c["id"] for c in observed["cases"]] == [c["id"] for c in expected["cases"]]
    for case, before in zip(observed["cases"], expected["cases"], strict=True):
        assert case == before, case["id"]
