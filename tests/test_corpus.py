"""Checks on assay's own eval corpus (evals/, fixtures/, examples/), independent of the loaders.

The corpus is data that other code trusts: every referenced path must exist, Warden
fixtures must stay small, every rubric diff must apply to its base with `git apply`,
every task workspace must fail its tests until the reference solution is applied, and
the example agent must solve each task while emitting the trace events the task needs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EVALS = ROOT / "evals"
EXAMPLES = ROOT / "examples"
TASK_SUITE = EVALS / "tasks" / "python-tasks.json"
AGENT = EXAMPLES / "reference_agent.py"

SEVERITIES = {"critical", "high", "medium", "low", "info"}
YAML_SUITES = sorted(EVALS.glob("eval-*.yaml"))
SCENARIO_CATEGORIES = ("code-review", "security-review")
SCENARIOS = sorted(path for c in SCENARIO_CATEGORIES for path in (EVALS / c).glob("*.json"))
VERIFICATIONS = sorted((EVALS / "verification").glob("*.json"))
GITHUB_FIXTURE = re.compile(r"^fixtures/(?P<case>[^/]+)/github/(?P<owner>[^/]+)/(?P<repo>[^/]+)/")
SCENARIO_KEYS = {"name", "given", "files", "supporting_files", "should_find", "should_not_find"}
SCENARIO_KEYS |= {"notes", "model", "runtime"}
EXPECTATION_KEYS = {"finding", "severity", "required"}
TASK_KEYS = {"id", "name", "description", "tags", "difficulty", "prompt", "workspaceFixture"}
TASK_KEYS |= {"verificationCommands", "expectedChangedFiles", "forbiddenChangedFiles"}
TASK_KEYS |= {"contextChecks", "requiredTraceEvents"}
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "corpus",
    "GIT_AUTHOR_EMAIL": "corpus@example.invalid",
    "GIT_COMMITTER_NAME": "corpus",
    "GIT_COMMITTER_EMAIL": "corpus@example.invalid",
}
# Entry-point plugins of the dev environment (hypothesis, timeout) only slow the fixtures' runs.
PYTEST_ENV = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def sandbox_dest(fixture: str) -> str:
    """Where Warden copies a fixture in its temp repo: `<case>/<path>`."""
    github = GITHUB_FIXTURE.match(fixture)
    if github:
        return f"{github['case']}/{fixture[github.end() :]}"
    return fixture.removeprefix("fixtures/")


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=False
    )


def commit_all(repo: Path) -> None:
    assert git(repo, "init", "-q", "-b", "main").returncode == 0
    git(repo, "add", "-A")
    done = git(repo, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "base")
    assert done.returncode == 0, done.stderr


def review_cases() -> list[tuple[str, dict[str, Any]]]:
    """(label, case) for every Warden YAML eval and standalone JSON scenario."""
    cases = []
    for suite in YAML_SUITES:
        for case in yaml.safe_load(suite.read_text(encoding="utf-8"))["evals"]:
            cases.append((f"{suite.stem}/{case['name']}", case))
    for path in SCENARIOS:
        cases.append((f"{path.parent.name}/{path.stem}", load_json(path)))
    return cases


REVIEW_CASES = review_cases()


# --- Warden review suites and scenarios -------------------------------------------------


@pytest.mark.parametrize("suite", YAML_SUITES, ids=lambda p: p.stem)
def test_yaml_suite_shape(suite: Path) -> None:
    data = yaml.safe_load(suite.read_text(encoding="utf-8"))
    assert set(data) == {"skill", "runtime", "model", "evals"}
    assert (data["runtime"], data["model"]) == ("pi", "anthropic/claude-sonnet-4-6")
    assert (ROOT / data["skill"]).is_file()
    names = [case["name"] for case in data["evals"]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("category", SCENARIO_CATEGORIES)
def test_scenario_category(category: str) -> None:
    defaults = yaml.safe_load((EVALS / category / "_suite.yaml").read_text(encoding="utf-8"))
    assert defaults == {
        "skill": f"evals/skills/{category}.md",
        "runtime": "pi",
        "model": "anthropic/claude-sonnet-4-6",
    }
    assert (ROOT / defaults["skill"]).is_file()
    scenarios = [load_json(p) for p in SCENARIOS if p.parent.name == category]
    assert len(scenarios) >= 6
    languages = {Path(f).suffix for s in scenarios for f in s["files"]}
    assert {".py", ".go"} <= languages and languages & {".ts", ".tsx"}


@pytest.mark.parametrize(("label", "case"), REVIEW_CASES, ids=[c[0] for c in REVIEW_CASES])
def test_review_case(label: str, case: dict[str, Any]) -> None:
    assert set(case) <= SCENARIO_KEYS and case["given"].strip()
    for fixture in case["files"]:
        assert fixture.startswith("fixtures/") and (ROOT / fixture).is_file(), fixture
        assert 20 <= line_count(ROOT / fixture) <= 80, f"{fixture}: keep fixtures to 20-80 lines"
    for support in case.get("supporting_files", []):
        assert (ROOT / support).is_file(), support
    assert case["should_find"] and len(case["should_not_find"]) >= 2
    for expectation in case["should_find"]:
        assert set(expectation) <= EXPECTATION_KEYS and expectation["finding"].strip()
        assert expectation.get("severity", "high") in SEVERITIES
    if not case["should_find"][0].get("required", True):
        assert len(case["should_find"]) == 1, "a negative case has one optional entry"
    dests = [sandbox_dest(f) for f in case["files"] + case.get("supporting_files", [])]
    assert len(dests) == len(set(dests)), "two fixtures land on the same sandbox path"


@pytest.mark.parametrize(("label", "case"), REVIEW_CASES, ids=[c[0] for c in REVIEW_CASES])
def test_github_captured_fixtures_carry_provenance(label: str, case: dict[str, Any]) -> None:
    captured = [GITHUB_FIXTURE.match(f) for f in case["files"]]
    if not any(captured):
        return
    repos = {f"{m['owner']}/{m['repo']}" for m in captured if m}
    assert len(repos) == 1 and all(captured)
    (repo,) = repos
    notes = case["notes"]
    assert notes["repository"] == repo
    prefix = case["files"][0][: captured[0].end()]  # type: ignore[union-attr]
    assert prefix + "LICENSE" in case["supporting_files"]
    mapped = {entry["fixturePath"]: entry["sourcePath"] for entry in notes["source_files"]}
    for fixture in case["files"]:
        assert mapped[fixture] == fixture.removeprefix(prefix)


def test_corpus_mix() -> None:
    cases = dict(REVIEW_CASES)
    negative = [c for c in cases.values() if not c["should_find"][0].get("required", True)]
    assert [c["files"] for c in negative] == [["fixtures/ignores-style-issues/utils.ts"]]
    captured = [c for c in cases.values() if GITHUB_FIXTURE.match(c["files"][0])]
    assert len(captured) >= 2
    supported = [c for c in cases.values() if len(c.get("supporting_files", [])) > 1]
    assert len(supported) >= 2, "cases with context files beyond a LICENSE"


def test_every_fixture_file_is_referenced() -> None:
    referenced = {
        f for _label, case in REVIEW_CASES for f in case["files"] + case.get("supporting_files", [])
    }
    referenced |= {f for p in VERIFICATIONS for f in load_json(p)["files"]}
    referenced |= {f for p in VERIFICATIONS for f in load_json(p).get("supporting_files", [])}
    on_disk = {
        p.relative_to(ROOT).as_posix() for p in (ROOT / "fixtures").rglob("*") if p.is_file()
    }
    assert on_disk == referenced


def test_skills_have_front_matter() -> None:
    skills = sorted((EVALS / "skills").glob("*.md"))
    assert {s.stem for s in skills} >= {
        "bug-detection",
        "security-scanning",
        "precision",
        "code-review",
        "security-review",
    }
    for skill in skills:
        _, front, body = skill.read_text(encoding="utf-8").split("---\n", 2)
        meta = yaml.safe_load(front)
        assert meta["name"] == skill.stem and meta["description"].strip()
        assert "## What to" in body or "## Do not report" in body or "## Not findings" in body


# --- verification scenarios -------------------------------------------------------------


@pytest.mark.parametrize("path", VERIFICATIONS, ids=lambda p: p.stem)
def test_verification_candidate_points_at_a_real_line(path: Path) -> None:
    scenario = load_json(path)
    assert set(scenario) <= {"given", "files", "supporting_files", "candidate", "expect", "notes"}
    candidate = scenario["candidate"]
    assert set(candidate) == {
        "id",
        "severity",
        "confidence",
        "title",
        "description",
        "verification",
        "location",
    }
    assert candidate["severity"] in SEVERITIES
    dests = {sandbox_dest(f): ROOT / f for f in scenario["files"]}
    location = candidate["location"]
    assert location["path"] in dests, f"{location['path']} is not a sandbox path of `files`"
    lines = dests[location["path"]].read_text(encoding="utf-8").splitlines()
    assert 1 <= location["startLine"] <= len(lines)
    assert lines[location["startLine"] - 1].strip(), "the candidate points at a blank line"


def test_verifications_cover_keep_and_reject() -> None:
    verdicts = [load_json(p)["expect"]["verdict"] for p in VERIFICATIONS]
    assert len(verdicts) >= 3 and {"keep", "reject"} == set(verdicts)


# --- Cassandra rubric cases -------------------------------------------------------------


def rubric_cases() -> list[tuple[str, Path, Path | None]]:
    """(id, input.diff, base directory / tarball / None) for manifest and legacy cases."""
    cases = []
    manifest_path = EVALS / "rubric" / "rubric.json"
    for case in load_json(manifest_path)["cases"]:
        fixture = manifest_path.parent / case["fixture_path"]
        base = next((b for b in (fixture / "base", fixture / "base.tar.gz") if b.exists()), None)
        cases.append((case["id"], fixture / "input.diff", base))
    for metadata in sorted((EVALS / "rubric-legacy").glob("*/metadata.json")):
        data = load_json(metadata)
        cases.append(
            (
                metadata.parent.name,
                metadata.parent / "input.diff",
                metadata.parent / data["base_source"],
            )
        )
    return cases


RUBRIC_CASES = rubric_cases()


def test_rubric_case_files() -> None:
    manifest = load_json(EVALS / "rubric" / "rubric.json")
    assert set(manifest) == {"name", "description", "cases"} and len(manifest["cases"]) >= 3
    for case in manifest["cases"]:
        assert set(case) == {"id", "name", "description", "rubric", "fixture_path"}
    legacy = sorted((EVALS / "rubric-legacy").glob("*/metadata.json"))
    assert legacy
    for metadata in legacy:
        assert set(load_json(metadata)) == {"name", "description", "rubric", "base_source"}
    for case_id, diff, base in RUBRIC_CASES:
        assert diff.is_file(), case_id
        assert base is None or base.exists(), case_id


def test_rubric_bases_cover_every_form() -> None:
    kinds = {
        "none" if b is None else "tar" if b.name.endswith(".tar.gz") else "dir"
        for _id, _diff, b in RUBRIC_CASES
    }
    assert kinds == {"none", "tar", "dir"}
    agents_md = EVALS / "rubric" / "cases" / "agents-md-http-client-convention"
    assert (agents_md / "base" / "AGENTS.md").is_file()
    assert "AGENTS.md" not in (agents_md / "input.diff").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("case_id", "diff", "base"), RUBRIC_CASES, ids=[c[0] for c in RUBRIC_CASES]
)
def test_rubric_diff_applies_to_its_base(
    case_id: str, diff: Path, base: Path | None, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    if base is None:
        repo.mkdir()
    elif base.is_dir():
        shutil.copytree(base, repo)
    else:
        with tarfile.open(base, "r:gz") as tar:
            tar.extractall(repo, filter="data")
    commit_all(repo)
    check = git(repo, "apply", "--check", str(diff))
    assert check.returncode == 0, f"{diff} does not apply: {check.stderr}"


def test_rubric_tarballs_are_deterministic() -> None:
    tarballs = [b for _id, _diff, b in RUBRIC_CASES if b is not None and b.suffix == ".gz"]
    assert tarballs
    for tarball in tarballs:
        header = tarball.read_bytes()[:10]
        assert header[:2] == b"\x1f\x8b" and header[4:8] == bytes(4), "gzip mtime must be 0"
        with tarfile.open(tarball, "r:gz") as tar:
            members = tar.getmembers()
        names = [m.name for m in members]
        assert names == sorted(names)
        for member in members:
            assert member.isfile() or member.isdir(), member.name
            assert not member.name.startswith(("/", "./")) and ".." not in member.name.split("/")
            assert (member.mtime, member.uid, member.gid) == (0, 0, 0), member.name
            assert (member.uname, member.gname) == ("", ""), member.name


# --- PVYai tasks and the reference agent ------------------------------------------------

SUITE = load_json(TASK_SUITE)
TASKS = SUITE["tasks"]


def prepare_workspace(task: dict[str, Any], tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    shutil.copytree(TASK_SUITE.parent / task["workspaceFixture"], workspace)
    commit_all(workspace)
    return workspace


def run_verification(task: dict[str, Any], workspace: Path) -> list[int]:
    codes = []
    for command in task["verificationCommands"]:
        argv = [sys.executable if command["command"][0] == "python" else command["command"][0]]
        completed = subprocess.run(
            argv + command["command"][1:],
            cwd=workspace,
            env=PYTEST_ENV,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        codes.append(completed.returncode)
    return codes


def test_task_suite_shape() -> None:
    assert set(SUITE) == {"id", "name", "description", "tasks"}
    ids = [task["id"] for task in TASKS]
    assert len(ids) >= 4 and len(ids) == len(set(ids))
    assert sorted(ids) == sorted(p.name for p in (EXAMPLES / "solutions").iterdir())
    for task in TASKS:
        assert set(task) <= TASK_KEYS and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", task["id"])
        fixture = TASK_SUITE.parent / task["workspaceFixture"]
        assert (fixture / "pytest.ini").is_file() and (fixture / "tests").is_dir()
        assert "__pycache__/" in (fixture / ".gitignore").read_text(encoding="utf-8")
        for path in task.get("forbiddenChangedFiles", []):
            assert (fixture / path).is_file(), f"{task['id']}: forbids a file that does not exist"
    assert any(task.get("contextChecks") for task in TASKS)


@pytest.mark.parametrize("task", TASKS, ids=[t["id"] for t in TASKS])
@pytest.mark.slow
def test_task_fails_before_it_is_solved(task: dict[str, Any], tmp_path: Path) -> None:
    workspace = prepare_workspace(task, tmp_path)
    assert any(code != 0 for code in run_verification(task, workspace))


@pytest.mark.parametrize("task", TASKS, ids=[t["id"] for t in TASKS])
@pytest.mark.slow
def test_reference_agent_solves_task(task: dict[str, Any], tmp_path: Path) -> None:
    workspace = prepare_workspace(task, tmp_path)
    agent = subprocess.run(
        [str(AGENT), task["id"], str(workspace)],
        cwd=workspace,
        env=PYTEST_ENV,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert agent.returncode == 0, agent.stderr
    events = [json.loads(line) for line in agent.stdout.splitlines()]
    keys = {f"{e['type']}:{e['name']}" for e in events}
    assert set(task.get("requiredTraceEvents", [])) <= keys
    # The agent ran the suite's own verification command; its exit code is the proof that
    # the solution passes (running the tests a second time here would only add seconds).
    (command,) = task["verificationCommands"]
    ran = [e["command"] for e in events if e["name"] == "exec_command"]
    assert ran == [command["command"]]
    assert {"type": "verify", "name": command["id"], "exitCode": 0} in events

    status = git(workspace, "status", "--porcelain", "--untracked-files=all").stdout
    changed = {line[3:] for line in status.splitlines()}
    assert set(task.get("expectedChangedFiles", [])) <= changed
    assert not changed & set(task.get("forbiddenChangedFiles", []))
    context = task.get("contextChecks", {})
    assert all((workspace / p).exists() for p in context.get("requiredFiles", []))
    assert not any((workspace / p).exists() for p in context.get("forbiddenFiles", []))


def test_reference_agent_rejects_unknown_task(tmp_path: Path) -> None:
    assert AGENT.read_text(encoding="utf-8").startswith("#!/usr/bin/env python3\n")
    assert AGENT.stat().st_mode & stat.S_IXUSR
    agent = subprocess.run(
        [str(AGENT), "no-such-task", str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert agent.returncode == 2 and agent.stdout == ""
    assert "unknown task id 'no-such-task'" in agent.stderr


def test_pattern_reviewer_answers_in_the_findings_file(tmp_path: Path) -> None:
    diff = EVALS / "rubric-legacy" / "hardcoded-partner-webhook-secret" / "input.diff"
    findings_file = tmp_path / "findings.json"
    env = {**os.environ, "ASSAY_CASE_KIND": "review", "ASSAY_FINDINGS_FILE": str(findings_file)}
    reviewer = subprocess.run(
        [str(EXAMPLES / "pattern_reviewer.py"), str(diff)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert reviewer.returncode == 0, reviewer.stderr
    assert json.loads(reviewer.stdout.splitlines()[0])["type"] == "tool"
    (finding,) = load_json(findings_file)["findings"]
    assert finding["title"] == "Hard-coded credential"
    assert finding["location"] == {"path": "src/config.ts", "startLine": 16}
