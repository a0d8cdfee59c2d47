"""Cassandra's suites run as Cassandra runs them: its judge prompt and message layout, its
lenient verdict decoding, its results JSON, what its manifest loader and sandbox accept."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigErrors, JudgeError, SandboxError
from assay.grading.base import Grade
from assay.grading.cassandra_verdict import read_cassandra_verdict
from assay.grading.rubric_judge import RubricJudge, judge_prompt_for
from assay.models.base import ModelRequest, ModelResponse
from assay.options import RunOptions
from assay.report.cassandra import to_cassandra_results
from assay.report.model import Attempt, CaseResult, Report, RunInfo, Source, Summary, Usage
from assay.sandbox import build_sandbox, remove_sandbox
from assay.sandbox.built_sandbox import Sandbox
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, RubricSpec
from assay.suites.load import load_suites
from tests.fakes.scripted_provider import reply, scripted_provider, sequence, tool_call

SEED = Path(__file__).parent / "data" / "suites" / "cassandra"
DIFF = (
    "diff --git a/config.go b/config.go\n"
    "--- a/config.go\n"
    "+++ b/config.go\n"
    "@@ -1 +1,2 @@\n"
    " package config\n"
    '+const APIKey = "hardcoded"\n'
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


# --- the judge ---------------------------------------------------------------------------------


def rubric_case(tmp_path: Path, *, fmt: str = "rubric-manifest") -> Case:
    diff = write(tmp_path / "fixture" / "input.diff", DIFF)
    spec = RubricSpec(rubric="Must flag the hardcoded key.", diff=diff, base=None)
    return Case(
        id="suite/hardcoded-key",
        suite="suite",
        name="hardcoded-key",
        kind="rubric",
        format=fmt,  # type: ignore[arg-type]
        source_path=tmp_path / "suite.json",
        source_line=1,
        spec=spec,
    )


def grade(
    tmp_path: Path,
    *responses: ModelResponse,
    options: RunOptions | None = None,
    fmt: str = "rubric-manifest",
) -> tuple[Grade, list[ModelRequest]]:
    case = rubric_case(tmp_path, fmt=fmt)
    sandbox = Sandbox(
        path=tmp_path,
        kind="rubric",
        base_commit="0" * 40,
        head_commit="1" * 40,
        diff="(the sandbox's own diff)",
        changed_files=("config.go",),
        repository=None,
    )
    ctx = AttemptContext(
        case=case,
        sandbox=sandbox,
        model="fake/subject",
        judge_model="fake/judge",
        timeout_s=60,
        attempt=0,
        artifacts_dir=tmp_path,
    )
    output = AgentOutput(review_text="The API key in config.go is hardcoded.")
    with scripted_provider(sequence(*responses)) as fake:
        result = asyncio.run(RubricJudge(options=options or RunOptions()).grade(ctx, output))
    return result, fake.requests


def answer(body: Any) -> ModelResponse:
    return reply(tool_call("record_evaluation", body))


def test_cassandra_suites_get_cassandras_prompt_and_message_layout(tmp_path: Path) -> None:
    result, requests = grade(
        tmp_path, answer({"score": 5, "rationale": "r", "findings": [], "met_rubric": True})
    )
    request = requests[0]
    assert "Cassandra" in request.system and "1-5 scale" in request.system
    assert request.messages[0].content[0]["text"] == (
        "RUBRIC:\nMust flag the hardcoded key.\n\n"
        f"DIFF:\n{DIFF}\n\n"
        "REVIEW TO EVALUATE:\nThe API key in config.go is hardcoded."
    )
    assert result.judge["prompt_version"] == "cassandra-judge.v1"
    assert (result.status, result.score) == ("pass", 1.0)


def test_judge_prompt_assay_keeps_assays_own(tmp_path: Path) -> None:
    body = {"score": 4, "rationale": "r", "findings": [], "met_rubric": True}
    result, requests = grade(tmp_path, answer(body), options=RunOptions(judge_prompt="assay"))
    assert result.judge["prompt_version"] == "rubric-judge.v1"
    assert requests[0].messages[0].content[0]["text"].startswith("## Rubric")
    assert "(the sandbox's own diff)" in requests[0].messages[0].content[0]["text"]


def test_the_default_prompt_is_per_format(tmp_path: Path) -> None:
    options = RunOptions()
    assert judge_prompt_for(rubric_case(tmp_path), options) == "cassandra"
    assert judge_prompt_for(rubric_case(tmp_path, fmt="rubric-dir"), options) == "cassandra"
    forced = RunOptions(judge_prompt="assay")
    assert judge_prompt_for(rubric_case(tmp_path), forced) == "assay"


@pytest.mark.parametrize(
    ("body", "verdict", "status", "score"),
    [
        # missing findings: Go leaves the slice nil
        ({"score": 4, "rationale": "r", "met_rubric": True}, (4, "r", None, True), "pass", 0.75),
        # null findings
        (
            {"score": 4, "rationale": "r", "findings": None, "met_rubric": True},
            (4, "r", None, True),
            "pass",
            0.75,
        ),
        # missing met_rubric: false
        ({"score": 5, "rationale": "r", "findings": ["a"]}, (5, "r", ["a"], False), "fail", 1.0),
        # extra keys are ignored
        (
            {"score": 3, "rationale": "r", "findings": [], "met_rubric": True, "extra": 1},
            (3, "r", [], True),
            "pass",
            0.5,
        ),
        # key case: Go matches keys case-insensitively
        (
            {"Score": 2, "RATIONALE": "r", "Findings": ["x"], "Met_Rubric": False},
            (2, "r", ["x"], False),
            "fail",
            0.25,
        ),
        # out of 1..5: Cassandra keeps the raw score; the case score clamps it
        ({"score": 7, "rationale": "r", "met_rubric": True}, (7, "r", None, True), "pass", 1.0),
        ({"score": 0, "rationale": "r", "met_rubric": False}, (0, "r", None, False), "fail", 0.0),
        # nothing at all: Go's zero values
        ({}, (0, "", None, False), "fail", 0.0),
    ],
)
def test_verdicts_are_read_as_leniently_as_cassandra(
    tmp_path: Path, body: dict[str, Any], verdict: tuple[Any, ...], status: str, score: float
) -> None:
    result, requests = grade(tmp_path, answer(body))
    kept = result.judge["verdict"]
    assert (kept["score"], kept["rationale"], kept["findings"], kept["met_rubric"]) == verdict
    assert (result.status, result.score, len(requests)) == (status, score, 1)


@pytest.mark.parametrize("score", [4.5, 4.0, "4", True, [4]])
def test_a_float_or_string_score_stays_an_error(tmp_path: Path, score: Any) -> None:
    bad = answer({"score": score, "rationale": "r", "findings": [], "met_rubric": True})
    with pytest.raises(JudgeError, match="score must be a whole number"):
        grade(tmp_path, bad, bad)


def test_other_wrong_types_are_errors_as_in_go() -> None:
    assert read_cassandra_verdict({"score": 3, "met_rubric": "yes"})[1] == [
        "met_rubric must be true or false, got 'yes'"
    ]
    assert read_cassandra_verdict({"score": 3, "findings": "x"})[0] is None
    assert read_cassandra_verdict({"score": 3, "findings": [1]})[0] is None
    assert read_cassandra_verdict([1])[0] is None
    verdict, _ = read_cassandra_verdict({"score": 3, "findings": ["a", None]})
    assert verdict is not None and verdict.findings == ["a", ""]


def test_a_wrong_type_goes_back_to_the_judge_once(tmp_path: Path) -> None:
    bad = answer({"score": "5", "rationale": "r", "met_rubric": True})
    good = answer({"score": 5, "rationale": "r", "met_rubric": True})
    result, requests = grade(tmp_path, bad, good)
    assert result.status == "pass" and result.judge["attempts"] == 2
    assert "score must be a whole number" in requests[1].messages[-1].content[0]["content"]


# --- the results JSON --------------------------------------------------------------------------

# The shape of menny/cassandra core/eval/results/*.json (e.g. cassandra_20260509_175713.json):
# a list of entries; `error` appears only on a case that failed to run.
REAL_ENTRY_KEYS = {"case_id", "case_name", "subject_result", "metrics"}
REAL_SUBJECT = {"score": int, "rationale": str, "findings": (list, type(None)), "met_rubric": bool}
REAL_TOKENS = {"input", "output", "thinking", "cached", "total_input", "total_output"}
REAL_METRICS = {"tokens", "iterations", "tool_calls"}
REAL_TOOL_CALLS = {"total", "by_tool"}
REAL_FAILED_ENTRY = {
    "case_id": "security-path-traversal",
    "case_name": "Security: Path Traversal",
    "subject_result": {"score": 0, "rationale": "", "findings": None, "met_rubric": False},
    "metrics": {
        "tokens": dict.fromkeys(sorted(REAL_TOKENS), 0),
        "iterations": 0,
        "tool_calls": {"total": 0, "by_tool": None},
    },
}


def assert_cassandra_shape(entry: dict[str, Any]) -> None:
    assert set(entry) - {"error"} == REAL_ENTRY_KEYS
    assert set(entry["subject_result"]) == set(REAL_SUBJECT)
    for key, kind in REAL_SUBJECT.items():
        assert isinstance(entry["subject_result"][key], kind), key
    assert set(entry["metrics"]) == REAL_METRICS
    assert set(entry["metrics"]["tokens"]) == REAL_TOKENS
    assert all(isinstance(v, int) for v in entry["metrics"]["tokens"].values())
    assert isinstance(entry["metrics"]["iterations"], int)
    assert set(entry["metrics"]["tool_calls"]) == REAL_TOOL_CALLS
    if "error" in entry:
        assert isinstance(entry["error"], str) and entry["error"]


def _result(case_id: str, status: str, **extra: Any) -> CaseResult:
    return CaseResult(
        id=f"evaluations/{case_id}",
        suite="evaluations",
        kind="rubric",
        source=Source(path="evaluations.json", line=1),
        status=status,  # type: ignore[arg-type]
        **extra,
    )


def test_cassandra_report_has_the_real_results_files_shape() -> None:
    judged = _result(
        "simple-bug",
        "pass",
        score=1.0,
        judge={
            "verdict": {"score": 5, "rationale": "r", "findings": ["f"], "met_rubric": True},
            "usage": {"input_tokens": 100, "output_tokens": 10},
        },
        usage=Usage(input_tokens=3153, output_tokens=138),
        attempts=[Attempt(status="pass", score=1.0)],
    )
    failed = _result(
        "security-path-traversal",
        "error",
        reason="failed to create sandbox: input.diff does not apply to the base",
    )
    report = Report(
        run=RunInfo(id="r", started_at="t", assay_version="0", threshold=0.75),
        summary=Summary(total=2, passed=1, failed=0, errors=1, skipped=0, score=1.0, gate="pass"),
        cases=[judged, failed],
    )
    names = {
        "evaluations/simple-bug": "Simple Bug Fix",
        "evaluations/security-path-traversal": "Security: Path Traversal",
    }
    entries = to_cassandra_results(report, names)
    for entry in entries:
        assert_cassandra_shape(entry)
    first, second = entries
    assert (first["case_id"], first["case_name"]) == ("simple-bug", "Simple Bug Fix")
    assert first["subject_result"] == {
        "score": 5,
        "rationale": "r",
        "findings": ["f"],
        "met_rubric": True,
    }
    assert "error" not in first  # omitempty
    assert first["metrics"]["tokens"]["input"] == 3053  # the subject's own, not the judge's
    assert {k: v for k, v in second.items() if k != "error"} == REAL_FAILED_ENTRY
    assert second["error"].startswith("failed to create sandbox")


# --- the manifest ------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree holding Cassandra's seed under core/eval/testdata."""
    root = tmp_path / "cassandra"
    shutil.copytree(SEED, root / "core/eval/testdata")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root / "core/eval/testdata"


def _manifest(testdata: Path, cases: list[dict[str, Any]], name: str = "evaluations") -> Path:
    return write(testdata / f"{name}.json", json.dumps({"name": name, "cases": cases}))


def test_a_case_without_an_id_is_named_after_its_fixture_directory(repo: Path) -> None:
    path = _manifest(repo, [{"rubric": "r", "fixture_path": "fixtures/sql-injection"}])
    (case,) = [c for c in load_suites([path]).cases]
    assert case.id == "evaluations/sql-injection"


def test_fixture_path_may_use_dotdot_inside_the_repository(repo: Path) -> None:
    shutil.copytree(repo / "fixtures/sql-injection", repo.parent / "shared/sql-injection")
    suites = repo / "suites"
    path = _manifest(
        suites, [{"id": "c", "rubric": "r", "fixture_path": "../../shared/sql-injection"}]
    )
    (case,) = load_suites([path]).cases
    assert case.spec.diff == repo.parent / "shared/sql-injection/input.diff"  # type: ignore[union-attr]
    outside = _manifest(suites, [{"id": "c", "rubric": "r", "fixture_path": "../" * 6 + "x"}])
    with pytest.raises(ConfigErrors, match="leads outside the repository"):
        load_suites([outside])


def test_no_cases_is_nothing_to_run_with_a_clear_message(repo: Path) -> None:
    path = _manifest(repo, [])
    loaded = load_suites([path])
    assert loaded.cases == ()
    assert [w.message for w in loaded.warnings] == [
        "the manifest lists no cases (`cases: []`): nothing to run from it"
    ]


def test_a_tgz_base_is_refused(repo: Path) -> None:
    shutil.copy(repo / "cases/hardcoded-api-key/base.tar.gz", repo / "fixtures/new-module/b.tgz")
    path = _manifest(
        repo,
        [{"id": "c", "rubric": "r", "fixture_path": "fixtures/new-module", "base_source": "b.tgz"}],
    )
    with pytest.raises(ConfigErrors, match=r"\.tgz included"):
        load_suites([path])


def _fixture(root: Path, diff: str, files: dict[str, str]) -> Path:
    for name, text in files.items():
        write(root / "base" / name, text)
    write(root / "input.diff", diff)
    return root


def test_an_empty_diff_is_the_base_alone(repo: Path, tmp_path: Path) -> None:
    _fixture(repo / "fixtures/empty", "", {"main.go": "package main\n"})
    path = _manifest(repo, [{"id": "empty", "rubric": "r", "fixture_path": "fixtures/empty"}])
    (case,) = load_suites([path]).cases
    work = tmp_path / "work"
    work.mkdir()
    sandbox = build_sandbox(case, parent=work)
    try:
        assert sandbox.head_commit == sandbox.base_commit
        assert sandbox.diff == "" and sandbox.changed_files == ()
        assert git(sandbox.path, "ls-files").split() == ["main.go"]
    finally:
        remove_sandbox(sandbox)


def test_gitignored_base_files_stay_untracked(repo: Path, tmp_path: Path) -> None:
    diff = (
        "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n"
        "@@ -1 +1,2 @@\n package main\n+// changed\n"
    )
    files = {
        ".gitignore": "*.log\nbuild/\n",
        "main.go": "package main\n",
        "debug.log": "secret\n",
        "build/out.bin": "bin\n",
    }
    _fixture(repo / "fixtures/ignored", diff, files)
    path = _manifest(repo, [{"id": "ig", "rubric": "r", "fixture_path": "fixtures/ignored"}])
    (case,) = load_suites([path]).cases
    work = tmp_path / "work"
    work.mkdir()
    sandbox = build_sandbox(case, parent=work)
    try:
        for branch in ("main", "eval"):
            tracked = git(sandbox.path, "ls-tree", "-r", "--name-only", branch).split()
            assert tracked == [".gitignore", "main.go"]
        assert (sandbox.path / "debug.log").read_text() == "secret\n"  # on disk, untracked
        assert git(sandbox.path, "status", "--porcelain").strip() == ""
        assert sandbox.changed_files == ("main.go",)
    finally:
        remove_sandbox(sandbox)


@pytest.mark.parametrize(
    "header",
    [
        "diff --git a/../evil.go b/../evil.go\n--- /dev/null\n+++ b/../evil.go\n",
        "diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to ../../y\n",
        "diff --git a/x b/y\nsimilarity index 100%\ncopy from /etc/passwd\ncopy to y\n",
        "diff --git a/x.go b/x.go\n--- /tmp/x.go\n+++ b/x.go\n",
    ],
)
def test_a_diff_naming_a_path_outside_the_base_is_refused(
    repo: Path, tmp_path: Path, header: str
) -> None:
    diff = header + "@@ -0,0 +1 @@\n+x\n" if "@@" not in header and "---" in header else header
    _fixture(repo / "fixtures/escape", diff, {"x": "x\n"})
    path = _manifest(repo, [{"id": "e", "rubric": "r", "fixture_path": "fixtures/escape"}])
    with pytest.raises(ConfigErrors, match="names a path outside the base"):
        load_suites([path])
    # The sandbox refuses it too, before `git apply` runs (a case built without `validate`).
    spec = RubricSpec(rubric="r", diff=repo / "fixtures/escape/input.diff", base=None)
    case = Case("s/e", "s", "e", "rubric", "rubric-manifest", path, 1, spec)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(SandboxError, match="outside the base"):
        build_sandbox(case, parent=work)
    assert not (tmp_path / "evil.go").exists() and not (repo / "evil.go").exists()


def test_a_removed_sql_comment_line_is_not_a_header(repo: Path) -> None:
    diff = (
        "diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n"
        "@@ -1,2 +1 @@\n--- ../../comment\n SELECT 1;\n"
    )
    _fixture(repo / "fixtures/sql", diff, {"q.sql": "-- ../../comment\nSELECT 1;\n"})
    path = _manifest(repo, [{"id": "sql", "rubric": "r", "fixture_path": "fixtures/sql"}])
    assert [c.id for c in load_suites([path]).cases] == ["evaluations/sql"]


def test_a_metadata_dir_may_name_its_id_and_diff(repo: Path) -> None:
    case_dir = repo / "cases/hardcoded-api-key"
    metadata = json.loads((case_dir / "metadata.json").read_text())
    (case_dir / "input.diff").rename(case_dir / "change.diff")
    metadata.update(id="api-key", diff_path="change.diff")
    (case_dir / "metadata.json").write_text(json.dumps(metadata))
    (case,) = load_suites([case_dir / "metadata.json"]).cases
    assert case.id == "cases/api-key"
    assert case.spec.diff == case_dir / "change.diff"  # type: ignore[union-attr]
