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
from assay.grading.rubric_judge import RubricJudge, judge_prompt_for
from assay.models.base import ModelRequest, ModelResponse
from assay.options import RunOptions
from assay.report.cassandra import to_cassandra_results
from assay.report.model import Attempt, CaseResult, Report, RunInfo, Source, Summary, Usage
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, RubricSpec
from assay.suites.load import load_suites
from assay.upstream.cassandra.verdict import read_cassandra_verdict
from assay.workspace import build_sandbox, remove_sandbox
from assay.workspace.built_sandbox import Sandbox
from tests.fakes.scripted_provider import (
    ScriptedProvider,
    reply,
    scripted_provider,
    sequence,
    tool_call,
)
from tests.fakes.scripted_provider import text as text_block

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


def rubric_case(tmp_path: Path, *, fmt: str = "rubric-manifest", diff_bytes: bytes = b"") -> Case:
    diff = write(tmp_path / "fixture" / "input.diff", DIFF)
    if diff_bytes:
        diff.write_bytes(diff_bytes)
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
    diff_bytes: bytes = b"",
) -> tuple[Grade, list[ModelRequest]]:
    with scripted_provider(sequence(*responses)) as fake:
        result = grade_with(tmp_path, fake, options=options, fmt=fmt, diff_bytes=diff_bytes)
    return result, fake.requests


def grade_with(
    tmp_path: Path,
    fake: ScriptedProvider,
    *,
    options: RunOptions | None = None,
    fmt: str = "rubric-manifest",
    diff_bytes: bytes = b"",
) -> Grade:
    """Grade the hardcoded-key case with the judge `fake` (already registered)."""
    case = rubric_case(tmp_path, fmt=fmt, diff_bytes=diff_bytes)
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
    return asyncio.run(RubricJudge(options=options or RunOptions()).grade(ctx, output))


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
    assert result.judge["prompt_version"] == "cassandra-judge.v2"
    assert (result.status, result.score) == ("pass", 1.0)


def test_the_judge_is_asked_as_cassandras_anthropic_provider_asks(tmp_path: Path) -> None:
    # llm/anthropic/provider.go GenerateStructuredContent: the forced `submit_review` tool,
    # EvaluationResultSchema's properties and required only, DefaultStructuredMaxTokens.
    _, requests = grade(
        tmp_path, answer({"score": 5, "rationale": "r", "findings": [], "met_rubric": True})
    )
    (tool,) = requests[0].tools
    assert (tool.name, tool.description) == ("submit_review", "Returns the structured code review.")
    assert requests[0].tool_choice == "submit_review" and requests[0].max_tokens == 8192
    assert tool.input_schema == {
        "properties": {
            "findings": {
                "description": "Specific strengths or weaknesses identified in the review.",
                "items": {"type": "string"},
                "type": "array",
            },
            "met_rubric": {
                "description": (
                    "Whether the review successfully addressed the primary requirements of the "
                    "rubric."
                ),
                "type": "boolean",
            },
            "rationale": {
                "description": (
                    "A detailed explanation of why this score was given, referencing the rubric "
                    "and the diff."
                ),
                "type": "string",
            },
            "score": {
                "description": (
                    "A score from 1 to 5, where 5 is an excellent, accurate, and helpful review, "
                    "and 1 is a poor or misleading review."
                ),
                "maximum": 5,
                "minimum": 1,
                "type": "integer",
            },
        },
        "required": ["score", "rationale", "findings", "met_rubric"],
        "type": "object",
    }
    assert "`submit_review` tool" in requests[0].system
    # assay's own prompt keeps assay's own tool
    _, assay_requests = grade(
        tmp_path,
        answer({"score": 5, "rationale": "r", "findings": [], "met_rubric": True}),
        options=RunOptions(judge_prompt="assay"),
    )
    (own,) = assay_requests[0].tools
    assert own.name == "record_evaluation" and assay_requests[0].max_tokens == 4096
    assert own.input_schema["additionalProperties"] is False


def test_the_judge_sees_the_diff_byte_for_byte(tmp_path: Path) -> None:
    crlf = DIFF.replace("\n", "\r\n").encode()
    _, requests = grade(
        tmp_path,
        answer({"score": 5, "rationale": "r", "findings": [], "met_rubric": True}),
        diff_bytes=crlf,
    )
    prompt = requests[0].messages[0].content[0]["text"]
    assert f"DIFF:\n{crlf.decode()}\n\nREVIEW" in prompt


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


@pytest.mark.parametrize("score", [4.5, 4.0, "4", True, [4], 2**63])
def test_a_float_or_string_score_stays_an_error(tmp_path: Path, score: Any) -> None:
    bad = answer({"score": score, "rationale": "r", "findings": [], "met_rubric": True})
    with pytest.raises(JudgeError, match="score must be a whole number"):
        grade(tmp_path, bad)


def test_other_wrong_types_are_errors_as_in_go() -> None:
    assert read_cassandra_verdict({"score": 3, "met_rubric": "yes"})[1] == [
        "met_rubric must be true or false, got 'yes'"
    ]
    assert read_cassandra_verdict({"score": 3, "findings": "x"})[0] is None
    assert read_cassandra_verdict({"score": 3, "findings": [1]})[0] is None
    assert read_cassandra_verdict([1])[0] is None
    verdict, _ = read_cassandra_verdict({"score": 3, "findings": ["a", None]})
    assert verdict is not None and verdict.findings == ["a", ""]


def test_a_wrong_type_is_an_error_at_once_as_in_cassandra(tmp_path: Path) -> None:
    # Cassandra asks its judge once and never retries a verdict it cannot decode.
    bad = answer({"score": "5", "rationale": "r", "met_rubric": True})
    with scripted_provider(sequence(bad)) as fake:
        with pytest.raises(JudgeError) as caught:
            grade_with(tmp_path, fake)
    assert str(caught.value) == (
        "failed to parse judge result: score must be a whole number, got '5'"
    )
    assert len(fake.requests) == 1 and caught.value.raw and '"score": "5"' in caught.value.raw


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        # no tool call: the text is the answer (GenerateStructuredContent keeps resp.Text)
        ([text_block('{"score": 2, "rationale": "text", "findings": [], "met_rubric": false}')], 2),
        # the first tool call, whatever its name
        ([tool_call("other_tool", {"score": 3, "rationale": "r", "met_rubric": True})], 3),
        (
            [
                tool_call("submit_review", {"score": 2, "rationale": "first"}),
                tool_call("submit_review", {"score": 5, "rationale": "second"}),
            ],
            2,
        ),
        # a text beside a tool call: the tool call wins
        ([text_block("thinking aloud"), tool_call("submit_review", {"score": 4})], 4),
    ],
)
def test_the_answer_is_taken_where_cassandra_takes_it(
    tmp_path: Path, blocks: list[dict[str, Any]], expected: int
) -> None:
    result, requests = grade(tmp_path, reply(*blocks))
    assert result.judge["verdict"]["score"] == expected and len(requests) == 1


@pytest.mark.parametrize("body", ["not json", "", '{"score": 4} trailing', "[1]"])
def test_a_text_answer_that_is_no_verdict_is_an_error(tmp_path: Path, body: str) -> None:
    with pytest.raises(JudgeError, match="^failed to parse judge result: "):
        grade(tmp_path, reply(text_block(body)))


def test_a_null_answer_is_go_s_zero_verdict(tmp_path: Path) -> None:
    result, _ = grade(tmp_path, reply(text_block("null")))
    assert result.judge["verdict"] == {
        "score": 0,
        "rationale": "",
        "findings": None,
        "met_rubric": False,
    }


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # every spelling of a field is decoded in turn: the later wins, whatever its case
        ({"score": 3, "SCORE": 5, "met_rubric": False, "Met_Rubric": True}, (5, True)),
        ({"Score": 5, "score": 3}, (3, False)),
        # Go folds `ſ` to s and the Kelvin sign to k
        ({"score": 2, "\u017fcore": 4}, (4, False)),
        # null leaves a scalar as it was
        ({"score": 4, "Score": None, "met_rubric": True, "MET_RUBRIC": None}, (4, True)),
    ],
)
def test_duplicate_keys_are_decoded_as_go_decodes_them(
    body: dict[str, Any], expected: tuple[int, bool]
) -> None:
    verdict, problems = read_cassandra_verdict(body)
    assert problems == [] and verdict is not None
    assert (verdict.score, verdict.met_rubric) == expected


def test_null_empties_findings_and_a_bad_duplicate_is_still_an_error() -> None:
    verdict, _ = read_cassandra_verdict({"findings": ["a"], "Findings": None})
    assert verdict is not None and verdict.findings is None
    # Go reports a value of the wrong type even when a later spelling is right
    assert read_cassandra_verdict({"score": "4", "Score": 4})[0] is None


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
            "usage": {"input_tokens": 100, "output_tokens": 10, "cache_read_tokens": 5},
        },
        usage=Usage(input_tokens=3153, output_tokens=138, cache_read_tokens=205),
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
        "evaluations/simple-bug": ("simple-bug", "Simple Bug Fix"),
        "evaluations/security-path-traversal": (
            "security-path-traversal",
            "Security: Path Traversal",
        ),
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
    tokens = first["metrics"]["tokens"]
    assert tokens["input"] == 3053  # the subject's own, not the judge's
    # core.SessionMetrics: cache reads are `cached`, and `total_input` is input + cached
    assert (tokens["cached"], tokens["total_input"]) == (200, 3253)
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
    with pytest.raises(SandboxError, match="outside the base"):
        _build_unvalidated(path, repo / "fixtures/escape/input.diff", tmp_path)
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


# --- paths: Cassandra joins them, assay keeps them inside the repository -----------------------


def test_base_source_and_diff_path_may_use_dotdot_inside_the_repository(repo: Path) -> None:
    # LoadSuite joins base_source and diff_path to the fixture directory, `..` included:
    # a base or diff shared by several cases (`../common/base.tar.gz`).
    common = repo / "fixtures/common"
    shutil.copytree(repo / "fixtures/sql-injection/base", common / "base")
    shutil.copy(repo / "fixtures/sql-injection/input.diff", common / "shared.diff")
    write(repo / "fixtures/uses-common/README", "the case's own directory\n")
    path = _manifest(
        repo,
        [
            {
                "id": "c",
                "rubric": "r",
                "fixture_path": "fixtures/uses-common",
                "base_source": "../common/base",
                "diff_path": "../common/shared.diff",
            }
        ],
    )
    (case,) = load_suites([path]).cases
    assert case.spec.base == common / "base"  # type: ignore[union-attr]
    assert case.spec.diff == common / "shared.diff"  # type: ignore[union-attr]
    # a rubric-dir case (LoadCases) joins them to its directory the same way
    metadata = repo / "cases/hardcoded-api-key/metadata.json"
    data = json.loads(metadata.read_text())
    metadata.write_text(json.dumps({**data, "base_source": "../../fixtures/common/base"}))
    (old,) = load_suites([metadata]).cases
    assert old.spec.base == common / "base"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("base_source", "/etc", "base_source '/etc' is absolute"),
        ("diff_path", "/etc/passwd", "diff_path '/etc/passwd' is absolute"),
        ("base_source", "../" * 8 + "tmp", "leads outside the repository"),
        ("diff_path", "../" * 8 + "x.diff", "leads outside the repository"),
    ],
)
def test_absolute_or_escaping_paths_stay_refused(
    repo: Path, key: str, value: str, problem: str
) -> None:
    # Security: suite paths never leave the project (Cassandra would read them as given).
    path = _manifest(
        repo, [{"id": "c", "rubric": "r", "fixture_path": "fixtures/sql-injection", key: value}]
    )
    with pytest.raises(ConfigErrors, match=problem):
        load_suites([path])


def test_a_symlink_out_of_the_repository_stays_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(repo / "fixtures/sql-injection/base", outside)
    (repo / "fixtures/sql-injection/elsewhere").symlink_to(outside)
    path = _manifest(
        repo,
        [
            {
                "id": "c",
                "rubric": "r",
                "fixture_path": "fixtures/sql-injection",
                "base_source": "elsewhere",
            }
        ],
    )
    with pytest.raises(ConfigErrors, match="a symlink escapes the root"):
        load_suites([path])


def test_fixture_path_dot_is_the_manifests_directory(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / "base/math.go", "package math\n")
    write(root / "input.diff", "")
    write(root / "suite.json", '{"cases":[{"id":"here","rubric":"r","fixture_path":"."}]}')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for target in (root / "suite.json", root):  # named, and found by the directory walk
        (case,) = load_suites([target]).cases
        assert case.id == "suite/here" and case.spec.base == root / "base"  # type: ignore[union-attr]


# --- the loader reads the manifest as Go's decoder does ----------------------------------------


def test_null_strings_are_go_s_empty_strings(repo: Path) -> None:
    path = write(
        repo / "evaluations.json",
        json.dumps(
            {
                "name": None,
                "description": None,
                "cases": [
                    {
                        "id": "c1",
                        "name": None,
                        "description": None,
                        "rubric": "r",
                        "fixture_path": "fixtures/sql-injection",
                        "base_source": None,
                        "diff_path": None,
                    }
                ],
            }
        ),
    )
    (case,) = load_suites([path]).cases
    assert case.spec.base == repo / "fixtures/sql-injection/base"  # type: ignore[union-attr]
    assert case.spec.cassandra_name == ""  # type: ignore[union-attr]


def test_keys_match_in_any_case(repo: Path) -> None:
    path = write(
        repo / "evaluations.json",
        '{"Name":"x","Cases":[{"ID":"c1","Rubric":"r","Fixture_Path":"fixtures/sql-injection",'
        '"DIFF_PATH":"input.diff"}]}',
    )
    loaded = load_suites([path])
    (case,) = loaded.cases
    assert (case.id, case.spec.rubric) == ("evaluations/c1", "r")  # type: ignore[union-attr]
    assert loaded.warnings == ()
    metadata = repo / "cases/hardcoded-api-key/metadata.json"
    data = json.loads(metadata.read_text())
    metadata.write_text(json.dumps({"RUBRIC": data.pop("rubric"), "Id": "api-key"}))
    (old,) = load_suites([metadata]).cases
    assert old.id == "cases/api-key" and old.spec.rubric.startswith("The agent MUST")  # type: ignore[union-attr]


@pytest.mark.parametrize("rubric", [{"rubric": ""}, {"rubric": None}, {}, {"rubric": "  "}])
def test_an_empty_or_missing_rubric_is_accepted_with_a_warning(
    repo: Path, rubric: dict[str, Any]
) -> None:
    path = _manifest(repo, [{"id": "c1", "fixture_path": "fixtures/sql-injection", **rubric}])
    loaded = load_suites([path])
    (case,) = loaded.cases
    assert case.spec.rubric.strip() == ""  # type: ignore[union-attr]
    assert [w.message for w in loaded.warnings] == [
        "the rubric is empty or missing: the judge scores the review against an empty "
        "rubric (Cassandra accepts this too)"
    ]


def test_null_cases_is_nothing_to_run(repo: Path) -> None:
    path = write(repo / "evaluations.json", '{"name": "x", "cases": null}')
    loaded = load_suites([path])
    assert loaded.cases == () and len(loaded.warnings) == 1


def test_what_stays_refused_as_an_assay_case_id(repo: Path) -> None:
    # Cassandra runs both cases of a repeated id, and any id text; an assay case id is
    # unique and part of file names and CI output.
    fixture = "fixtures/sql-injection"
    same = _manifest(repo, [{"id": "c", "rubric": "r", "fixture_path": fixture}] * 2)
    with pytest.raises(ConfigErrors, match="duplicate case id"):
        load_suites([same])
    slash = _manifest(repo, [{"id": "a/b", "rubric": "r", "fixture_path": fixture}])
    with pytest.raises(ConfigErrors, match="must not contain '/'"):
        load_suites([slash])


def test_a_whitespace_only_diff_is_refused(repo: Path, tmp_path: Path) -> None:
    # Cassandra runs `git apply` on it, which finds no patch; only an empty diff is skipped.
    _fixture(repo / "fixtures/blank", " \n\n", {"main.go": "package main\n"})
    path = _manifest(repo, [{"id": "blank", "rubric": "r", "fixture_path": "fixtures/blank"}])
    with pytest.raises(ConfigErrors, match="holds only whitespace"):
        load_suites([path])
    with pytest.raises(SandboxError, match="^failed to create sandbox: failed to apply diff: "):
        _build_unvalidated(path, repo / "fixtures/blank/input.diff", tmp_path)


def _build_unvalidated(manifest: Path, diff: Path, tmp_path: Path) -> None:
    """Build the sandbox of a rubric case made without `validate` (no base)."""
    spec = RubricSpec(rubric="r", diff=diff, base=None)
    case = Case("s/c", "s", "c", "rubric", "rubric-manifest", manifest, 1, spec)
    work = tmp_path / "work"
    work.mkdir()
    build_sandbox(case, parent=work)


# --- the results file --------------------------------------------------------------------------


def test_results_name_cases_as_cassandras_loader_does(repo: Path) -> None:
    from assay.report.cassandra import cassandra_names

    path = _manifest(
        repo,
        [
            {"rubric": "r", "fixture_path": "fixtures/sql-injection"},
            {
                "id": "named",
                "name": "A name",
                "rubric": "r",
                "fixture_path": "fixtures/new-module",
                "diff_path": "change.diff",
            },
        ],
    )
    metadata = repo / "cases/hardcoded-api-key/metadata.json"
    data = json.loads(metadata.read_text())
    metadata.write_text(json.dumps({"rubric": data["rubric"]}))
    cases = load_suites([path, metadata]).cases
    # LoadSuite keeps a missing id and name empty; LoadCases names a case after its dir
    assert cassandra_names(cases) == {
        "evaluations/sql-injection": ("", ""),
        "evaluations/named": ("named", "A name"),
        "cases/hardcoded-api-key": ("hardcoded-api-key", ""),
    }
    assert [c.name for c in cases] == ["sql-injection", "A name", "hardcoded-api-key"]


@pytest.mark.parametrize(
    ("reason", "judge", "error"),
    [
        (
            "failed to create sandbox: failed to apply diff: input.diff does not apply",
            {},
            "failed to create sandbox: failed to apply diff: input.diff does not apply",
        ),
        (
            "failed to parse judge result: score must be a whole number, got '4'",
            {"error": "failed to parse judge result: score must be a whole number, got '4'"},
            "judge failed: failed to parse judge result: score must be a whole number, got '4'",
        ),
        ("timeout after 60s in judge", {}, "judge failed: timeout after 60s in judge"),
        ("timeout after 60s in agent", {}, "subject failed: timeout after 60s in agent"),
        (
            "the builtin agent did not finish within 60 s",
            {},
            "subject failed: the builtin agent did not finish within 60 s",
        ),
    ],
)
def test_a_failed_case_says_where_it_failed_in_cassandras_words(
    reason: str, judge: dict[str, Any], error: str
) -> None:
    report = Report(
        run=RunInfo(id="r", started_at="t", assay_version="0", threshold=0.75),
        summary=Summary(total=1, passed=0, failed=0, errors=1, skipped=0, score=0.0, gate="fail"),
        cases=[_result("c", "error", reason=reason, judge=judge)],
    )
    (entry,) = to_cassandra_results(report, {})
    assert entry["error"] == error


def test_a_failed_judge_call_is_a_judge_error(tmp_path: Path) -> None:
    from assay.errors import ModelError

    def fail(request: ModelRequest) -> ModelResponse:
        raise ModelError("fake/judge: rejected (401 authentication_error)")

    with scripted_provider(fail) as fake:
        with pytest.raises(JudgeError, match="^the judge call failed: fake/judge: rejected"):
            grade_with(tmp_path, fake)


# --- the reviewer ------------------------------------------------------------------------------


def test_the_builtin_reviewer_is_shown_the_raw_input_diff(repo: Path, tmp_path: Path) -> None:
    # RunCase sends "Review the following git diff for issues:\n\n<input.diff>": the file as
    # written, not git's rendering of the sandbox (which drops what .gitignore ignores).
    from assay.agents.builtin import BuiltinAgent

    diff = (
        "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n"
        "@@ -1 +1,2 @@\n package main\n+// changed\n"
        "diff --git a/debug.log b/debug.log\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/debug.log\n@@ -0,0 +1 @@\n+token=abc\n"
    )
    _fixture(repo / "fixtures/ign", diff, {".gitignore": "*.log\n", "main.go": "package main\n"})
    path = _manifest(repo, [{"id": "ign", "rubric": "r", "fixture_path": "fixtures/ign"}])
    (case,) = load_suites([path]).cases
    work = tmp_path / "work"
    work.mkdir()
    sandbox = build_sandbox(case, parent=work)
    try:
        assert "debug.log" not in sandbox.diff  # git's own diff leaves the ignored file out
        ctx = AttemptContext(
            case=case,
            sandbox=sandbox,
            model="fake/subject",
            judge_model="fake/judge",
            timeout_s=60,
            attempt=0,
            artifacts_dir=tmp_path / "artifacts",
        )
        review = {"review": "fine", "findings": []}
        with scripted_provider(sequence(reply(tool_call("submit_findings", review)))) as fake:
            asyncio.run(BuiltinAgent(options=RunOptions()).run(ctx))
        shown = fake.requests[0].messages[0].content[0]["text"]
        assert "Review the following git diff for issues." in shown
        assert diff in shown and "index " not in shown
    finally:
        remove_sandbox(sandbox)


def test_a_base_that_is_a_file_is_refused_saying_what_cassandra_would_do(repo: Path) -> None:
    # LoadSuite looks for a `base` directory only: a file of that name is ignored there and
    # the case runs on an empty base, which is almost always a mistake.
    write(repo / "fixtures/new-module/base", "not a directory\n")
    path = _manifest(
        repo,
        [
            {
                "id": "c",
                "rubric": "r",
                "fixture_path": "fixtures/new-module",
                "diff_path": "change.diff",
            }
        ],
    )
    with pytest.raises(
        ConfigErrors, match="Cassandra ignores it and runs the case on an empty base"
    ):
        load_suites([path])
