"""`assay check`: every case proves it can pass and can fail, with the run's own grading.

The judge is `tests/fakes/wording_judge.py` behind the loopback Messages API, reached
through the real `anthropic` SDK: it decides by the answers' wording, never by case ids,
so a made-up answer that says the right thing passes and one that says nothing fails.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay.cli import main
from assay.runner.check_report import CheckReport
from assay.suites import load_suites
from assay.suites.case import ReviewSpec
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.wording_judge import wording_judge

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk-ant-test-CHECK-1234567890"
MODEL = "anthropic/claude-sonnet-4-6"


@dataclass(frozen=True)
class Checked:
    exit_code: int
    out: str
    err: str
    calls: int

    def statuses(self) -> dict[str, str]:
        """Each case's status, read from the printed lines (`<status>  <id>  (<reason>)`)."""
        found = {}
        for line in self.out.splitlines()[:-1]:
            status, rest = line.split("  ", 1)
            found[rest.split("  (", 1)[0].strip()] = status.strip()
        return found

    def report(self) -> CheckReport:
        return CheckReport.model_validate_json(self.out)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    server = FakeAnthropic(api_key=API_KEY, responder=wording_judge)
    with server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def check(fake: FakeAnthropic | None, capsys: pytest.CaptureFixture[str], *args: str) -> Checked:
    capsys.readouterr()
    before = fake.calls if fake is not None else 0
    code = main(["check", *args])
    captured = capsys.readouterr()
    calls = (fake.calls if fake is not None else 0) - before
    return Checked(code, captured.out, captured.err, calls)


# -- the project's own corpus -------------------------------------------------------------------


@pytest.mark.slow
def test_every_case_of_the_corpus_is_ok(
    fake: FakeAnthropic, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the tasks' own pytest runs
    cases = load_suites([ROOT / "evals"]).cases
    done = check(fake, capsys, "evals")
    assert done.exit_code == 0, done.out + done.err
    assert done.statuses() == {case.id: "ok" for case in cases}
    assert {case.kind for case in cases} == {"review", "verify", "rubric", "task"}
    # One judge call per graded answer: a review's golden answer, its empty one when a
    # should_find is required, its should_not_find one when it has any; a rubric's two.
    expected_calls = 0
    for case in cases:
        if isinstance(case.spec, ReviewSpec):
            spec = case.spec
            required = any(e.required for e in spec.should_find)
            expected_calls += 1 + required + bool(spec.should_not_find)
        elif case.kind == "rubric":
            expected_calls += 2
    assert done.calls == expected_calls
    last = done.out.splitlines()[-1]
    assert last.startswith(f"{len(cases)} case(s): {len(cases)} ok; judge tokens ")
    assert "$0.0000" not in last and "cost unknown" not in last


# -- a suite with one broken case of each kind that can break ------------------------------------

REVIEWS = f"""\
skill: skills/review.md
model: {MODEL}
evals:
  - name: finds-the-missing-sleep
    given: a retry loop that never waits
    files:
      - fixtures/retry/client.py
    should_find:
      - finding: >-
          fetch retries in a tight loop without sleeping between attempts, hammering the server
        severity: high
    should_not_find:
      - style, formatting or naming issues
  - name: contradicts-itself
    given: the same retry loop
    files:
      - fixtures/retry/client.py
    should_find:
      - finding: fetch retries in a tight loop without sleeping between attempts
        severity: medium
    should_not_find:
      - fetch retrying in a tight loop without sleeping between attempts (the server allows it)
"""

CLIENT = """\
def fetch(get, url, attempts=5):
    for _ in range(attempts):
        response = get(url)
        if response.ok:
            return response
    raise RuntimeError(url)
"""

LOG_DIFF = """\
diff --git a/prune.py b/prune.py
new file mode 100644
--- /dev/null
+++ b/prune.py
@@ -0,0 +1,3 @@
+import os, time
+def stale(path, keep_days):
+    return time.time() - os.stat(path).st_mtime > keep_days
"""

RUBRIC = {
    "name": "rubrics",
    "cases": [
        {
            "id": "age-units",
            "rubric": "The review must identify that stale() compares an age in seconds "
            "with keep_days, a number of days, so rotated logs are pruned after seconds.",
            "fixture_path": "cases/age-units",
        },
        {"id": "anything-goes", "rubric": "n/a", "fixture_path": "cases/age-units"},
    ],
}

CALC_TEST = "from calc import add\nassert add(2, 3) == 5, add(2, 3)\n"


def _task(task_id: str) -> dict[str, object]:
    return {
        "id": task_id,
        "name": task_id,
        "prompt": "Make add() add.",
        "workspaceFixture": "fixtures/calc",
        "verificationCommands": [
            {"id": "test", "name": "test", "command": ["python", "check_add.py"]}
        ],
        "expectedChangedFiles": ["calc/__init__.py"],
        "requiredTraceEvents": ["tool:edit_file"],
    }


def _patch(body: str) -> str:
    return (
        "diff --git a/calc/__init__.py b/calc/__init__.py\n"
        "--- a/calc/__init__.py\n"
        "+++ b/calc/__init__.py\n"
        "@@ -1,2 +1,2 @@\n"
        " def add(a, b):\n"
        "-    return a - b\n"
        f"+    return {body}\n"
    )


EXECUTABLE_REFERENCE = """\
#!/usr/bin/env python3
import json
from pathlib import Path

print(json.dumps({"type": "tool", "name": "edit_file", "path": "calc/__init__.py"}))
Path("calc/__init__.py").write_text("def add(a, b):\\n    return b + a\\n")
"""


def broken_project(root: Path) -> Path:
    """Two review cases, two rubric cases, three tasks: one of each kind is broken."""
    (root / "skills").mkdir(parents=True)
    (root / "skills" / "review.md").write_text("# Review\nFind bugs.\n")
    (root / "fixtures" / "retry").mkdir(parents=True)
    (root / "fixtures" / "retry" / "client.py").write_text(CLIENT)
    (root / "reviews.yaml").write_text(REVIEWS)

    (root / "rubric" / "cases" / "age-units").mkdir(parents=True)
    (root / "rubric" / "cases" / "age-units" / "input.diff").write_text(LOG_DIFF)
    (root / "rubric" / "rubric.json").write_text(json.dumps(RUBRIC))

    tasks = root / "tasks"
    (tasks / "fixtures" / "calc" / "calc").mkdir(parents=True)
    (tasks / "fixtures" / "calc" / "calc" / "__init__.py").write_text(
        "def add(a, b):\n    return a - b\n"
    )
    (tasks / "fixtures" / "calc" / "check_add.py").write_text(CALC_TEST)
    suite = {
        "id": "calc",
        "name": "calc",
        "tasks": [_task("fix-add"), _task("wrong-fix"), _task("by-program")],
    }
    (tasks / "suite.json").write_text(json.dumps(suite))
    (tasks / "reference").mkdir()
    (tasks / "reference" / "fix-add.patch").write_text(_patch("a + b"))
    (tasks / "reference" / "wrong-fix.patch").write_text(_patch("a * b"))
    program = tasks / "reference" / "by-program"
    program.write_text(EXECUTABLE_REFERENCE)
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return root


def test_a_broken_case_of_each_kind_is_named_and_fails_the_check(
    tmp_path: Path, fake: FakeAnthropic, capsys: pytest.CaptureFixture[str]
) -> None:
    root = broken_project(tmp_path / "project")
    done = check(fake, capsys, str(root))
    assert done.exit_code == 1, done.out + done.err
    assert done.statuses() == {
        "review/finds-the-missing-sleep": "ok",
        "review/contradicts-itself": "cannot pass",
        "rubric/age-units": "ok",
        "rubric/anything-goes": "cannot fail",
        "calc/fix-add": "ok",
        "calc/wrong-fix": "cannot pass",
        "calc/by-program": "ok",
    }, done.out
    # Reviews: golden, empty and should_not_find answers each; rubrics: two answers each.
    assert done.calls == 3 + 3 + 2 + 2
    lines = {line.split("  ", 1)[1].split("  (")[0]: line for line in done.out.splitlines()[:-1]}
    assert "the golden answer fails: should_not_find[0]" in lines["review/contradicts-itself"]
    assert "the empty review answer scores 5/5 (pass)" in lines["rubric/anything-goes"]
    assert "the reference answer fails: test:" in lines["calc/wrong-fix"]
    assert done.out.splitlines()[-1].startswith(
        "7 case(s): 4 ok, 2 cannot pass, 1 cannot fail; judge tokens 1320 in / 560 out, $"
    )


def test_json_output_carries_every_answer_and_its_grade(
    tmp_path: Path, fake: FakeAnthropic, capsys: pytest.CaptureFixture[str]
) -> None:
    root = broken_project(tmp_path / "project")
    done = check(
        fake,
        capsys,
        str(root),
        "-t",
        "contradicts-itself",
        "-t",
        "wrong-fix",
        "-t",
        "anything-goes",
        "--json",
    )
    assert done.exit_code == 1
    report = done.report()
    assert report.contract == "assay.check.v1"
    by_id = {case.id: case for case in report.cases}
    review = by_id["review/contradicts-itself"]
    assert [(p.answer, p.must, p.status, p.held) for p in review.probes] == [
        ("golden", "pass", "fail", False),
        ("empty", "fail", "fail", True),
        ("should_not_find", "fail", "fail", True),
    ]
    assert review.judge_model == MODEL
    assert review.usage.input_tokens == 3 * 120
    task = by_id["calc/wrong-fix"]
    assert [(p.answer, p.status, p.held) for p in task.probes] == [
        ("reference", "fail", False),
        ("no-op", "fail", True),
    ]
    assert {c.id: c.status for c in task.probes[0].checks}["test"] == "fail"
    rubric = by_id["rubric/anything-goes"]
    assert [(p.answer, p.must, p.judge_score, p.score, p.held) for p in rubric.probes] == [
        ("rubric's words", "pass", 5, 1.0, True),
        ("empty review", "fail", 5, 1.0, False),
    ]
    summary = report.summary
    assert (summary.total, summary.cannot_pass, summary.cannot_fail, summary.broken) == (3, 2, 1, 3)
    assert summary.tokens.input == 3 * 120 + 2 * 150 and summary.cost_usd is not None
    # The lines go to stderr with --json, stdout is the JSON alone.
    assert "cannot pass  review/contradicts-itself" in done.err


def test_a_task_without_reference_is_reported_and_one_no_agent_can_fail_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = broken_project(tmp_path / "project")
    suite = json.loads((root / "tasks" / "suite.json").read_text())
    # Changes are collected after the verification commands (PVYai), so a command that
    # writes the expected file passes every check for an agent that did nothing.
    always = _task("always-passes")
    touch = "open('calc/__init__.py', 'a').write('# checked')"
    always["verificationCommands"] = [
        {"id": "touch", "name": "touch", "command": ["python", "-c", touch]}
    ]
    suite["tasks"] = [_task("no-reference"), always]
    (root / "tasks" / "suite.json").write_text(json.dumps(suite))
    (root / "tasks" / "reference" / "always-passes.patch").write_text(_patch("a + b"))
    # No model is called: task cases need no key.
    done = check(None, capsys, str(root / "tasks"))
    assert done.statuses() == {
        "calc/no-reference": "no reference",
        "calc/always-passes": "cannot fail",
    }, done.out + done.err
    assert done.exit_code == 1
    assert "(the no-op answer passes)" in done.out.splitlines()[1]
    assert done.out.splitlines()[-1].startswith(
        "2 case(s): 0 ok, 1 cannot fail, 1 no reference; judge tokens 0 in / 0 out, $0.0000"
    )

    # Without its reference it is still broken: what can be proven is said first.
    (root / "tasks" / "reference" / "always-passes.patch").unlink()
    done = check(None, capsys, str(root / "tasks"), "-t", "always-passes")
    assert done.statuses() == {"calc/always-passes": "cannot fail"}
    assert done.exit_code == 1

    # A task without reference whose no-op fails is no more than reported: exit 0.
    done = check(None, capsys, str(root / "tasks"), "-t", "no-reference")
    assert done.statuses() == {"calc/no-reference": "no reference"}
    assert done.exit_code == 0
    assert "reference/<task id>.patch" in done.out


def test_verify_cases_pass_with_the_expected_verdict_and_fail_with_the_other(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    done = check(None, capsys, "evals", "-t", "security-review/*-keep", "-t", "*-reject", "--json")
    assert done.exit_code == 0, done.err
    report = done.report()
    assert len(report.cases) == 4
    for case in report.cases:
        assert case.status == "ok"
        assert [(p.must, p.status) for p in case.probes] == [("pass", "pass"), ("fail", "fail")]
        expected = "keep" if case.id.endswith("-keep") else "reject"
        assert case.probes[0].answer == f"verdict {expected}"


def test_without_a_key_judged_cases_are_skipped_and_nothing_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = broken_project(tmp_path / "project")
    done = check(None, capsys, str(root), "-t", "review/*")
    assert done.exit_code == 0
    assert done.statuses() == {
        "review/finds-the-missing-sleep": "skipped",
        "review/contradicts-itself": "skipped",
    }
    assert "ANTHROPIC_API_KEY" in done.out


def test_the_cache_replays_every_judge_call_offline(
    tmp_path: Path,
    fake: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = broken_project(tmp_path / "project")
    cache = tmp_path / "cache"
    first = check(
        fake, capsys, str(root), "-t", "review/*", "-t", "rubric/*", "--cache", str(cache)
    )
    assert first.calls == 10 and first.exit_code == 1
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    again = check(
        fake,
        capsys,
        str(root),
        "-t",
        "review/*",
        "-t",
        "rubric/*",
        "--cache",
        str(cache),
        "--offline",
    )
    assert again.calls == 0
    assert again.statuses() == first.statuses()
    assert again.exit_code == 1


def test_a_judge_that_fails_makes_the_case_an_error_not_a_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fakes.anthropic_api import text_reply

    root = broken_project(tmp_path / "project")
    server = FakeAnthropic(api_key=API_KEY, responder=lambda body: text_reply("no tool call"))
    with server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        done = check(server, capsys, str(root), "-t", "finds-the-missing-sleep")
    assert done.statuses() == {"review/finds-the-missing-sleep": "error"}
    assert done.exit_code == 1


@pytest.mark.parametrize(
    "args",
    [
        ["does-not-exist"],
        ["--concurrency", "x"],
        ["--offline"],
        ["--cache", ""],
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    root = broken_project(tmp_path / "project")
    os.chdir(root)
    try:
        with pytest.raises(SystemExit) as parsed:
            code = main(["check", *args])
            raise SystemExit(code)
    finally:
        os.chdir(ROOT)
    assert parsed.value.code == 2


def test_task_references_run_in_the_os_sandbox_like_agents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.isolation.bwrap import probe_bwrap

    bwrap, why_not = probe_bwrap()
    if bwrap is None:
        pytest.skip(f"no working bwrap: {why_not}")
    monkeypatch.setenv("ASSAY_ISOLATION", "bwrap")
    root = broken_project(tmp_path / "project")
    done = check(None, capsys, str(root / "tasks"))
    assert done.statuses() == {
        "calc/fix-add": "ok",
        "calc/wrong-fix": "cannot pass",
        "calc/by-program": "ok",
    }, done.out + done.err
    assert "WITHOUT an OS sandbox" not in done.err


def test_a_reference_leading_out_of_its_directory_is_an_error_not_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = broken_project(tmp_path / "project")
    outside = tmp_path / "elsewhere" / "fix-add.patch"
    outside.parent.mkdir()
    (root / "tasks" / "reference" / "fix-add.patch").rename(outside)
    (root / "tasks" / "reference" / "fix-add.patch").symlink_to(outside)
    done = check(None, capsys, str(root / "tasks"), "-t", "fix-add")
    assert done.statuses() == {"calc/fix-add": "error"}, done.out
    assert "leads out of" in done.out
    assert done.exit_code == 1


def test_a_reference_patch_that_does_not_apply_cannot_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = broken_project(tmp_path / "project")
    stale = _patch("a + b").replace("-    return a - b", "-    return a + 0")
    (root / "tasks" / "reference" / "fix-add.patch").write_text(stale)
    done = check(None, capsys, str(root / "tasks"), "-t", "fix-add")
    assert done.statuses() == {"calc/fix-add": "cannot pass"}, done.out
    assert "the reference answer could not run: reference fix-add.patch does not apply" in done.out
    assert done.exit_code == 1


@pytest.mark.parametrize(
    "task_id",
    ["slugify-unicode", "meeting-free-slots", "retry-decorator", "settings-env-overrides"],
)
def test_the_corpus_reference_patches_are_the_example_agents_solutions(
    tmp_path: Path, task_id: str
) -> None:
    """One solution in two forms: the patch `assay check` applies writes exactly the files
    `examples/reference_agent.py` copies from examples/solutions."""
    import shutil
    import subprocess

    workspace = tmp_path / task_id
    shutil.copytree(ROOT / "evals" / "tasks" / "fixtures" / task_id, workspace)
    patch = ROOT / "evals" / "tasks" / "reference" / f"{task_id}.patch"
    subprocess.run(["git", "apply", str(patch)], cwd=workspace, check=True)
    solutions = ROOT / "examples" / "solutions" / task_id
    for solution in (path for path in solutions.rglob("*") if path.is_file()):
        if "__pycache__" in solution.parts:
            continue
        written = workspace / solution.relative_to(solutions)
        assert written.read_text() == solution.read_text(), written


def test_affected_by_checks_only_the_cases_a_change_touched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Action's `check: true` with `select: affected` passes --affected-by: the check
    # covers the cases the pull request touched, as the run does, and none when it
    # touched none.
    import shutil
    import subprocess

    project = tmp_path / "project"
    for tree in ("evals", "fixtures"):
        shutil.copytree(ROOT / tree, project / tree)
    (project / "pyproject.toml").write_text('[tool.assay]\nroot = "."\n', encoding="utf-8")
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    base = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    monkeypatch.chdir(project)
    verify = ("-t", "security-review/*-keep", "-t", "*-reject", "--json")
    nothing = check(None, capsys, "evals", *verify, "--affected-by", base)
    assert nothing.exit_code == 0, nothing.err
    assert nothing.report().cases == []
    suites = load_suites([project / "evals"]).cases
    keep = next(case for case in suites if case.id.endswith("attachment-path-traversal-keep"))
    touched = keep.source_path
    touched.write_text(touched.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    subprocess.run([*git, "commit", "-qam", "touch one suite file"], check=True)
    some = check(None, capsys, "evals", *verify, "--affected-by", base)
    assert some.exit_code == 0, some.err
    checked = {case.id for case in some.report().cases}
    everything = check(None, capsys, "evals", *verify)
    assert keep.id in checked
    assert checked < {case.id for case in everything.report().cases}


def test_shards_split_the_check_as_they_split_the_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    verify = ("evals", "-t", "security-review/*-keep", "-t", "*-reject", "--json")
    parts = [check(None, capsys, *verify, "--shard", f"{n}/2").report().cases for n in (1, 2)]
    whole = check(None, capsys, *verify).report().cases
    assert all(parts)
    assert sorted(case.id for part in parts for case in part) == sorted(c.id for c in whole)
