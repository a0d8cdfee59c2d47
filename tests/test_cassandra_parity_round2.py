"""Cassandra parity, second round: what the reviewer is told, everything the judge sees,
bytes that are not UTF-8, tarball names and base directories as Cassandra's sandbox
reads them, the verdict whatever the stop reason, and the results file's tokens and bytes.

The reference is menny/cassandra (`core/eval/runner.go`, `sandbox.go`, `util/fs.go`
ValidatePathInRoot, `core/metrics_test.go`, `cmd/eval/main.go`), Go 1.24.4 as pinned.
"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.agents.builtin import BuiltinAgent
from assay.core.usage import Usage
from assay.errors import ConfigErrors, JudgeError, SandboxError
from assay.grading.rubric_judge import RubricJudge, cassandra_prompt
from assay.models.base import ModelRequest, ModelResponse
from assay.options import RunOptions
from assay.report.cassandra import cassandra_json, to_cassandra_results
from assay.report.model import Attempt, CaseResult, Report, RunInfo, Source, Summary
from assay.report.renderers import RENDERERS, RenderContext
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case
from assay.suites.load import load_suites
from assay.workspace import build_sandbox, remove_sandbox
from assay.workspace.built_sandbox import Sandbox
from tests.fakes.scripted_provider import reply, scripted_provider, sequence, tool_call
from tests.fakes.scripted_provider import text as text_block

BASE_GO = b"package m\n\nfunc Div(a, b int) int { return a + b }\n"
DIFF = (
    b"diff --git a/math.go b/math.go\n--- a/math.go\n+++ b/math.go\n"
    b"@@ -1,3 +1,3 @@\n package m\n \n-func Div(a, b int) int { return a + b }\n"
    b"+func Div(a, b int) int { return a / b }\n"
)
VERDICT = {"score": 4, "rationale": "r", "findings": [], "met_rubric": True}
FINDING = {
    "severity": "high",
    "confidence": "high",
    "title": "Division by zero",
    "description": "Div panics when b is 0.",
    "location": {"path": "math.go", "startLine": 3, "endLine": 3},
}


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A git work tree to hold the suite (suite paths stay inside it)."""
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def fixture(
    root: Path,
    name: str,
    *,
    diff: bytes = DIFF,
    files: dict[str, bytes] | None = None,
    members: list[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]] | None = None,
) -> str:
    """`fixtures/<name>`: input.diff, and a `base/` of `files` or a base.tar.gz of `members`."""
    directory = root / "fixtures" / name
    write(directory / "input.diff", diff)
    for rel, data in (files or {}).items():
        write(directory / "base" / rel, data)
    if members is not None:
        with tarfile.open(directory / "base.tar.gz", "w:gz") as archive:
            for item in members:
                info, data = item if isinstance(item, tuple) else (item, b"")
                archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return f"fixtures/{name}"


def regular(name: str, data: bytes = BASE_GO) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    return info, data


def symlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


def directory(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    return info


def manifest(root: Path, *cases: dict[str, Any]) -> Path:
    return write(root / "suite.json", json.dumps({"name": "s", "cases": list(cases)}))


def one_case(root: Path, fixture_path: str, **extra: Any) -> Case:
    entry = {"id": "c", "rubric": "R", "fixture_path": fixture_path, **extra}
    (case,) = load_suites([manifest(root, entry)]).cases
    return case


def build(case: Case, tmp_path: Path) -> Sandbox:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return build_sandbox(case, parent=work)


def context(case: Case, sandbox: Sandbox, tmp_path: Path) -> AttemptContext:
    return AttemptContext(
        case=case,
        sandbox=sandbox,
        model="fake/subject",
        judge_model="fake/judge",
        timeout_s=60,
        attempt=0,
        artifacts_dir=tmp_path / "artifacts",
    )


def review_and_judge(
    case: Case, tmp_path: Path, submission: dict[str, Any]
) -> tuple[list[ModelRequest], list[ModelRequest]]:
    """The builtin reviewer submits `submission`, Cassandra's judge grades it: the requests
    each of them made."""
    sandbox = build(case, tmp_path)
    try:
        ctx = context(case, sandbox, tmp_path)
        with scripted_provider(sequence(reply(tool_call("submit_findings", submission)))) as fake:
            output = asyncio.run(BuiltinAgent(options=RunOptions()).run(ctx))
        with scripted_provider(sequence(reply(tool_call("submit_review", VERDICT)))) as judge:
            asyncio.run(RubricJudge(options=RunOptions()).grade(ctx, output))
    finally:
        remove_sandbox(sandbox)
    return fake.requests, judge.requests


def first_text(request: ModelRequest) -> str:
    return request.messages[0].content[0]["text"]


# --- 1. the reviewer is told nothing of the case -----------------------------------------------


def test_the_builtin_reviewer_is_told_nothing_of_the_case(root: Path, tmp_path: Path) -> None:
    # RunCase asks "Review the following git diff for issues:\n\n<input.diff>": neither the
    # case's name nor its description (nor its id) reaches Cassandra's reviewer.
    case = one_case(
        root,
        fixture(root, "zeta-fixture", files={"math.go": BASE_GO}),
        id="zeta-id",
        name="Zeta <&> case",
        description="Tests if the agent finds division by zero.",
    )
    reviewer, _ = review_and_judge(case, tmp_path, {"review": "fine", "findings": []})
    prompt = first_text(reviewer[0])
    for told in ("Zeta", "division by zero", "zeta-id", "zeta-fixture", "Pull request title"):
        assert told not in prompt
    assert "Review the following git diff for issues." in prompt
    assert DIFF.decode() in prompt
    # the builtin agent's own framing stays: how to answer, and its tools
    assert "call `submit_findings` with your written review" in prompt
    assert {"read_file", "grep", "submit_findings"} <= {t.name for t in reviewer[0].tools}


# --- 2. the judge sees everything the reviewer said --------------------------------------------


def test_the_judge_sees_the_findings_the_builtin_reviewer_submitted(
    root: Path, tmp_path: Path
) -> None:
    case = one_case(root, fixture(root, "f", files={"math.go": BASE_GO}))
    submission = {"review": "Div divides by b unchecked.", "findings": [FINDING]}
    _, judge = review_and_judge(case, tmp_path, submission)
    evaluated = first_text(judge[0]).split("REVIEW TO EVALUATE:\n", 1)[1]
    assert evaluated.startswith("Div divides by b unchecked.\n\n```json\n")
    block = evaluated.split("```json\n", 1)[1].rsplit("\n```", 1)[0]
    (finding,) = json.loads(block)["findings"]
    assert (finding["title"], finding["description"]) == (FINDING["title"], FINDING["description"])
    assert finding["location"]["path"] == "math.go"


@pytest.mark.parametrize(
    ("output", "evaluated"),
    [
        # a CLI preset's findings block, or a command agent's answer file, without prose
        (
            AgentOutput(findings=[{"title": "t"}]),
            '```json\n{\n  "findings": [\n    {\n      "title": "t"\n    }\n  ]\n}\n```',
        ),
        # no findings: the text as it is
        (AgentOutput(review_text="Only prose."), "Only prose."),
        (AgentOutput(), ""),
    ],
)
def test_review_to_evaluate_is_the_text_then_the_findings(
    root: Path, output: AgentOutput, evaluated: str
) -> None:
    case = one_case(root, fixture(root, "f", files={"math.go": BASE_GO}))
    prompt = cassandra_prompt(case.spec, output)  # type: ignore[arg-type]
    assert prompt.endswith(f"REVIEW TO EVALUATE:\n{evaluated}")


# --- 3. a diff that is not UTF-8 ---------------------------------------------------------------


def test_a_diff_that_is_not_utf8_runs_as_in_cassandra(root: Path, tmp_path: Path) -> None:
    # Latin-1 `é`, and half of a three-byte sequence: git applies the bytes; where text is
    # needed, Go's JSON encoding of the string sends each invalid byte as U+FFFD.
    added = b"// caf\xe9 \xe2\x82!\n"
    diff = DIFF + b"diff --git a/notes.go b/notes.go\nnew file mode 100644\n--- /dev/null\n"
    diff += b"+++ b/notes.go\n@@ -0,0 +1 @@\n+" + added
    case = one_case(root, fixture(root, "latin", diff=diff, files={"math.go": BASE_GO}))
    sandbox = build(case, tmp_path)
    try:
        assert (sandbox.path / "notes.go").read_bytes() == added
        assert "input.diff" not in sandbox.changed_files
    finally:
        remove_sandbox(sandbox)
    reviewer, judge = review_and_judge(case, tmp_path, {"review": "ok", "findings": []})
    shown = "+// caf\ufffd \ufffd\ufffd!\n"  # one U+FFFD per byte, as Go sends them
    assert shown in first_text(reviewer[0])
    assert shown in first_text(judge[0]).split("DIFF:\n", 1)[1]


# --- 4. tarball members as Cassandra's extractTarGz names them ---------------------------------


@pytest.mark.parametrize(
    ("members", "tree"),
    [
        # filepath.Join cleans the name: written at math.go, no `sub` directory made
        ([regular("sub/../math.go")], ["math.go"]),
        ([directory("."), regular("./math.go")], ["math.go"]),
        ([regular("a//b/../../math.go")], ["math.go"]),
        # on Linux a colon and a leading `..` in a name are plain characters
        ([regular("math.go"), regular("a:b.txt", b"x")], ["a:b.txt", "math.go"]),
        ([regular("math.go"), regular("..hidden", b"x")], ["..hidden", "math.go"]),
    ],
)
def test_tarball_names_are_joined_as_go_joins_them(
    root: Path, tmp_path: Path, members: list[Any], tree: list[str]
) -> None:
    case = one_case(root, fixture(root, "t", members=members))
    sandbox = build(case, tmp_path)
    try:
        on_disk = sorted(p.name for p in sandbox.path.iterdir() if p.name != ".git")
        assert on_disk == tree
        assert (sandbox.path / "math.go").read_text() == BASE_GO.decode().replace("+", "/")
    finally:
        remove_sandbox(sandbox)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../math.go", "contains '..'"),
        ("sub/../../math.go", "contains '..'"),
        # ValidatePathInRoot keeps an absolute name as it is: outside the root
        ("/math.go", "is absolute"),
    ],
)
def test_tarball_names_that_leave_the_root_stay_refused(
    root: Path, name: str, problem: str
) -> None:
    path = fixture(root, "t", members=[regular("math.go"), regular(name)])
    with pytest.raises(ConfigErrors, match=problem):
        one_case(root, path)


@pytest.mark.parametrize("first", [regular("x", b"x"), directory("x"), symlink("x", "math.go")])
def test_a_symlink_over_a_name_taken_fails_the_case_as_os_symlink_does(
    root: Path, tmp_path: Path, first: Any
) -> None:
    members = [regular("math.go"), first, symlink("x", "math.go")]
    case = one_case(root, fixture(root, "t", members=members))  # loads: the tarball is safe
    with pytest.raises(SandboxError) as caught:
        build(case, tmp_path)
    message = str(caught.value)
    assert message.startswith(
        "failed to create sandbox: failed to extract base tarball: symlink math.go "
    )
    assert message.endswith("/x: file exists")


# --- 5. a base directory holding a symlink (Go 1.24's os.CopyFS) -------------------------------


def symlinked_base(root: Path) -> str:
    path = fixture(root, "links", files={"math.go": BASE_GO, "sub/keep.txt": b"k"})
    base = root / path / "base"
    (base / "up").symlink_to("math.go")
    (base / "sub/lnk").symlink_to("../math.go")
    return path


def test_a_base_directory_with_a_symlink_fails_its_case_with_cassandras_message(
    root: Path, tmp_path: Path
) -> None:
    case = one_case(root, symlinked_base(root))  # not refused: the case fails as it runs
    with pytest.raises(SandboxError) as caught:
        build(case, tmp_path)
    # fs.WalkDir's order: `sub` (and in it `keep.txt`, `lnk`) before `up`
    assert str(caught.value) == (
        "failed to create sandbox: failed to copy base directory: CopyFS sub/lnk: invalid argument"
    )


def answer_everyone(request: ModelRequest) -> ModelResponse:
    if request.purpose == "judge":
        return reply(tool_call("submit_review", VERDICT))
    return reply(tool_call("submit_findings", {"review": "Div by zero.", "findings": []}))


def test_only_that_case_errors_the_others_run(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "sk-fake")
    fine = fixture(root, "fine", files={"math.go": BASE_GO})
    path = manifest(
        root,
        {"id": "links", "rubric": "R", "fixture_path": symlinked_base(root)},
        {"id": "fine", "rubric": "R", "fixture_path": fine},
    )
    options = RunOptions(
        report_dir=tmp_path / "report",
        work_root=tmp_path / "work",
        models=("fake/subject",),
        judge_model="fake/judge",
        runtime="builtin",
        cassandra_report=True,
        max_errors=1,
    )
    with scripted_provider(answer_everyone):
        report = assay.run(options, cases=list(load_suites([path]).cases))
    by_id = {c.id: c for c in report.cases}
    assert (by_id["suite/fine"].status, by_id["suite/links"].status) == ("pass", "error")
    assert by_id["suite/links"].reason == (
        "failed to create sandbox: failed to copy base directory: CopyFS sub/lnk: invalid argument"
    )
    results = json.loads((tmp_path / "report/cassandra-results.json").read_text())
    assert [(e["case_id"], e.get("error", "")[:43]) for e in results] == [
        ("links", "failed to create sandbox: failed to copy ba"),
        ("fine", ""),
    ]


# --- 6. Cassandra's judge decodes whatever came back -------------------------------------------


def grade(case: Case, tmp_path: Path, response: ModelResponse, **options: Any) -> Any:
    sandbox = Sandbox(
        path=tmp_path,
        kind="rubric",
        base_commit="0" * 40,
        head_commit="1" * 40,
        diff="",
        changed_files=(),
        repository=None,
    )
    ctx = context(case, sandbox, tmp_path)
    output = AgentOutput(review_text="Div divides by zero.")
    return asyncio.run(RubricJudge(options=RunOptions(**options)).grade(ctx, output))


def stopped(reason: str, *blocks: dict[str, Any]) -> ModelResponse:
    return ModelResponse(content=list(blocks), stop_reason=reason, usage=Usage())


def test_a_verdict_is_decoded_whatever_the_stop_reason(root: Path, tmp_path: Path) -> None:
    case = one_case(root, fixture(root, "f"))
    cut = stopped("max_tokens", tool_call("submit_review", VERDICT))
    with scripted_provider(sequence(cut)) as judge:
        result = grade(case, tmp_path, cut)
    assert (result.judge["verdict"]["score"], len(judge.requests)) == (4, 1)
    refused = stopped("refusal")
    with scripted_provider(sequence(refused)):
        with pytest.raises(JudgeError, match="^failed to parse judge result: the answer is not"):
            grade(case, tmp_path, refused)


def test_a_string_tool_input_is_a_string_to_cassandras_judge(root: Path, tmp_path: Path) -> None:
    # Go marshals the input back to JSON (a JSON string) and cannot unmarshal it into
    # EvaluationResult: the text inside the string is never read as a verdict. (This is the
    # judge's reading of the input a provider hands it; the Anthropic adapter still decodes a
    # string input holding a JSON object before the judge sees it.)
    case = one_case(root, fixture(root, "f"))
    as_string = reply(tool_call("submit_review", json.dumps(VERDICT)))
    with scripted_provider(sequence(as_string)):
        with pytest.raises(JudgeError) as caught:
            grade(case, tmp_path, as_string)
    assert str(caught.value) == (
        "failed to parse judge result: cannot unmarshal string into the verdict: it must be "
        "a JSON object"
    )
    # a text answer is JSON text, as Cassandra reads resp.Text
    as_text = reply(text_block(json.dumps(VERDICT)))
    with scripted_provider(sequence(as_text)):
        assert grade(case, tmp_path, as_text).judge["verdict"]["score"] == 4


def test_assays_own_judge_keeps_its_rules(root: Path, tmp_path: Path) -> None:
    case = one_case(root, fixture(root, "f"))
    good = reply(tool_call("record_evaluation", VERDICT))
    cut = stopped("max_tokens", tool_call("record_evaluation", VERDICT))
    with scripted_provider(sequence(cut, good)) as judge:
        grade(case, tmp_path, cut, judge_prompt="assay")
    assert len(judge.requests) == 2  # a cut-off verdict goes back once
    as_string = reply(tool_call("record_evaluation", json.dumps(VERDICT)))
    with scripted_provider(sequence(as_string)) as judge:
        result = grade(case, tmp_path, as_string, judge_prompt="assay")
    assert result.judge["verdict"]["score"] == 4 and len(judge.requests) == 1


# --- 7. metrics.tokens as Cassandra counts them ------------------------------------------------


def rubric_result(usage: Usage, judge_usage: Usage, attempts: int = 1) -> CaseResult:
    return CaseResult(
        id="s/c",
        suite="s",
        kind="rubric",
        source=Source(path="s.json", line=1),
        status="pass",
        score=0.75,
        judge={"verdict": VERDICT, "usage": judge_usage.model_dump()},
        usage=usage,
        attempts=[Attempt(status="pass", score=0.75)] * attempts,
    )


def report_of(*cases: CaseResult) -> Report:
    return Report(
        run=RunInfo(id="r", started_at="t", assay_version="0", threshold=0.75),
        summary=Summary(total=1, passed=1, failed=0, errors=0, skipped=0, score=0.75, gate="pass"),
        cases=list(cases),
    )


def test_tokens_are_counted_as_cassandras_session_metrics(tmp_path: Path) -> None:
    # core/metrics_test.go: total_input = input + cached; its Anthropic provider counts
    # prompt tokens as input_tokens + cache_creation_input_tokens, cache reads as cached.
    # the subject's own: 40 in, 20 out, 1000 read from the cache, 300 written to it
    judge = Usage(input_tokens=7, output_tokens=3, cache_read_tokens=50, cache_write_tokens=60)
    total = Usage(input_tokens=47, output_tokens=23, cache_read_tokens=1050, cache_write_tokens=360)
    (entry,) = to_cassandra_results(report_of(rubric_result(total, judge)), {})
    assert entry["metrics"]["tokens"] == {
        "input": 340,
        "output": 20,
        "thinking": 0,
        "cached": 1000,
        "total_input": 1340,
        "total_output": 20,
    }
    # two attempts: the mean attempt, its judge left out
    doubled = Usage(
        input_tokens=94, output_tokens=46, cache_read_tokens=2100, cache_write_tokens=720
    )
    (entry,) = to_cassandra_results(report_of(rubric_result(doubled, judge, attempts=2)), {})
    assert (entry["metrics"]["tokens"]["input"], entry["metrics"]["tokens"]["cached"]) == (
        340,
        1000,
    )


# --- 8. the results file's bytes ---------------------------------------------------------------


def test_the_results_file_is_encoded_as_gos_encoder_writes_it(tmp_path: Path) -> None:
    entries = [
        {"case_id": "c", "rationale": "a < b & c > d \u2028 \u2029 é \ud800 \x01\n", "f": []}
    ]
    # json.MarshalIndent(results, "", "  ") in Go 1.24, written without a newline at the end
    assert cassandra_json(entries) == (
        "[\n"
        "  {\n"
        '    "case_id": "c",\n'
        '    "rationale": "a \\u003c b \\u0026 c \\u003e d \\u2028 \\u2029 é \ufffd \\u0001\\n",\n'
        '    "f": []\n'
        "  }\n"
        "]"
    )
    case = rubric_result(Usage(), Usage())
    case.judge["verdict"] = {**VERDICT, "rationale": "<é>"}
    renderer = RENDERERS.get("cassandra")
    assert renderer is not None
    ctx = RenderContext(report=report_of(case), cases=(), report_dir=tmp_path, cassandra=True)
    written = renderer.render(ctx)
    assert isinstance(written, str)
    assert '"rationale": "\\u003cé\\u003e"' in written and not written.endswith("\n")


# --- 9. metadata.json's fixture_path -----------------------------------------------------------


def test_fixture_path_in_metadata_json_is_a_known_field(root: Path) -> None:
    # EvalCase has the field: LoadCases decodes it without a word (and never uses it).
    case_dir = root / "cases/simple-bug"
    write(case_dir / "input.diff", DIFF)
    write(case_dir / "base/math.go", BASE_GO)
    metadata = {"rubric": "R", "fixture_path": "anything/at/all"}
    write(case_dir / "metadata.json", json.dumps(metadata))
    loaded = load_suites([case_dir / "metadata.json"])
    assert [c.id for c in loaded.cases] == ["cases/simple-bug"] and loaded.warnings == ()


# --- 10. input.diff in the work tree -----------------------------------------------------------


def test_a_bases_input_diff_is_gone_after_the_diff_is_applied(root: Path, tmp_path: Path) -> None:
    # NewSandbox writes the diff over it, applies it, removes it and `git add .`s the rest.
    files = {"math.go": BASE_GO, "input.diff": b"not the diff\n"}
    case = one_case(root, fixture(root, "own-diff", files=files))
    sandbox = build(case, tmp_path)
    try:
        assert git(sandbox.path, "ls-tree", "-r", "--name-only", "main").split() == [
            "input.diff",
            "math.go",
        ]
        assert git(sandbox.path, "ls-tree", "-r", "--name-only", "eval").split() == ["math.go"]
        assert not (sandbox.path / "input.diff").exists()
        assert set(sandbox.changed_files) == {"input.diff", "math.go"}
    finally:
        remove_sandbox(sandbox)


def test_a_diff_that_creates_input_diff_fails_as_in_cassandra(root: Path, tmp_path: Path) -> None:
    diff = b"diff --git a/input.diff b/input.diff\nnew file mode 100644\n--- /dev/null\n"
    diff += b"+++ b/input.diff\n@@ -0,0 +1 @@\n+x\n"
    case = one_case(root, fixture(root, "creates", diff=diff))
    with pytest.raises(SandboxError, match="^failed to create sandbox: failed to apply diff: "):
        build(case, tmp_path)
