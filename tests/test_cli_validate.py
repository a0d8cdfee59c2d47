"""`assay validate`, `assay list`, `assay schema`: output, exit codes, and every bad input."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from assay._util.textout import DefusedStream
from assay.cli import main

DATA = Path(__file__).parent / "data" / "suites"
SRC = Path(__file__).resolve().parents[1] / "src"


def copy_seed(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(DATA / name, target)
    return target


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Run the CLI in-process from tmp_path; returns (exit code, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        return code, out, err

    return run


def run_subprocess(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-m", "assay.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


# --- success ------------------------------------------------------------------------------


def test_validate_prints_counts_per_format_and_kind(cli, tmp_path: Path) -> None:
    for name in ("warden", "cassandra", "pvyai"):
        copy_seed(name, tmp_path)
    code, out, err = cli("validate", "warden", "cassandra", "pvyai")
    assert code == 0, err
    # No suite problem; what `assay run` would refuse or skip on this machine (issue 35).
    fix = (
        "pass --agent-command, set agent_command in [tool.assay] (pyproject.toml or "
        "assay.toml), or run an agent CLI with --runtime <preset> (aider, claude-code, codex, "
        "gemini-cli, opencode)"
    )
    assert err.replace(f"{tmp_path}/", "").splitlines() == [
        "pvyai/my-suite.json: warning: no agent command for 1 case of this suite "
        f"(api-suite/add-health-endpoint): {fix}",
        "pvyai/regression.json: warning: no agent command for 3 cases of this suite "
        "(my-eval-suite/add-format-function, my-eval-suite/fix-nil-pointer, "
        f"my-eval-suite/refactor-to-interfaces): {fix}",
        "warning: 1 case needs ANTHROPIC_API_KEY (for anthropic/claude-sonnet-4-6)",
        "warning: 5 cases need ANTHROPIC_API_KEY (or OPENROUTER_API_KEY for the same model)",
    ]
    assert out.splitlines() == [
        "format           files  cases",
        "review-json          1      1",
        "review-yaml          1      1",
        "rubric-dir           1      1",
        "rubric-manifest      1      2",
        "task-suite           2      4",
        "verification         1      1",
        "",
        "kind             cases",
        "review               2",
        "rubric               3",
        "task                 4",
        "verify               1",
        "",
        "category settings (the command line overrides them at run time):",
        "  warden/security-review",
        "    skill      warden/skills/security-review/SKILL.md  [default]",
        "    runtime    builtin  [default]",
        "    model      anthropic/claude-sonnet-4-6  [default]",
        "  warden/verification",
        "    skill      warden/skills/security-review/SKILL.md  [verify.eval.ts:13]",
        "    runtime    pi  [verify.eval.ts:14 (DEFAULT_EVAL_RUNTIME)]",
        "    model      anthropic/claude-sonnet-4-6  [Warden default]",
        "ok: 10 cases in 7 files",
    ]


def test_validate_json(cli, tmp_path: Path) -> None:
    copy_seed("warden", tmp_path)
    code, out, _ = cli("validate", "--json", "warden")
    assert code == 0
    result = json.loads(out)
    assert result["ok"] is True
    assert result["errors"] == [] and result["warnings"] == []
    assert result["files"][0] == {
        "path": "warden/eval-bug-detection.yaml",
        "format": "review-yaml",
        "cases": 1,
    }
    assert result["counts"]["kind"] == {"review": 2, "verify": 1}
    assert result["counts"]["format"]["review-json"] == {"files": 1, "cases": 1}


def test_validate_json_with_errors(cli, tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    write(root / "broken.yaml", "skill: [\n")
    code, out, _ = cli("validate", "--json", "warden")
    assert code == 2
    result = json.loads(out)
    assert result["ok"] is False and result["files"] == []
    assert result["errors"][0]["path"] == "warden/broken.yaml"
    assert result["errors"][0]["line"] == 2
    assert result["errors"][0]["message"].startswith("malformed YAML")


def test_list_prints_no_workflow_command_from_a_case_id(cli, tmp_path: Path) -> None:
    # A case id cannot hold a control character nor start with `::`; `##[` it may.
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("a\n")
    task = {
        "id": "t ##[error]forged",
        "name": "n",
        "prompt": "p",
        "workspaceFixture": "ws",
        "verificationCommands": [{"id": "c", "name": "c", "command": ["true"]}],
        "expectedChangedFiles": ["a.txt"],
    }
    (tmp_path / "suite.json").write_text(json.dumps({"id": "s", "name": "s", "tasks": [task]}))
    code, out, _ = cli("list", "suite.json")
    assert (code, out) == (0, "s/t ##\\[error]forged\n")
    _, out, _ = cli("list", "suite.json", "--json")
    assert json.loads(out)[0]["id"] == "s/t ##[error]forged"  # JSON stays faithful


def test_list_ids_and_selection(cli, tmp_path: Path) -> None:
    copy_seed("warden", tmp_path)
    copy_seed("pvyai", tmp_path)
    code, out, _ = cli("list", "warden", "pvyai")
    assert code == 0
    # Warden's names: `<skill name>/<case>` (the verification category's skill is
    # security-review, from src/verify.eval.ts).
    assert out.splitlines() == [
        "bug-detection/null-property-access",
        "security-review/sentry-replay-delete-read-scope",
        "security-review/workflow-open-periods-project-access-keep",
        "api-suite/add-health-endpoint",
        "my-eval-suite/add-format-function",
        "my-eval-suite/fix-nil-pointer",
        "my-eval-suite/refactor-to-interfaces",
    ]
    # Today's ids (`<category>/<case>`) still select.
    _, out, _ = cli("list", "warden", "pvyai", "-t", "verification", "-t", "my-eval-suite/fix-*")
    assert out.splitlines() == [
        "security-review/workflow-open-periods-project-access-keep",
        "my-eval-suite/fix-nil-pointer",
    ]
    # A pattern that matches nothing is a usage error, as for `run`: not an empty list.
    code, out, err = cli("list", "warden", "-t", "no-such-case")
    assert (code, out) == (2, "")
    assert "no cases match -t 'no-such-case'" in err
    _, out, _ = cli("list", "pvyai", "-t", "*/add-*", "--json")
    assert json.loads(out) == [
        {
            "id": "api-suite/add-health-endpoint",
            "kind": "task",
            "format": "task-suite",
            "source": {"path": "pvyai/my-suite.json", "line": 6},
        },
        {
            "id": "my-eval-suite/add-format-function",
            "kind": "task",
            "format": "task-suite",
            "source": {"path": "pvyai/regression.json", "line": 6},
        },
    ]


def test_schema_command(cli) -> None:
    code, out, _ = cli("schema")
    assert code == 0
    assert out.split() == [
        "review-yaml",
        "review-json",
        "verification",
        "rubric-manifest",
        "rubric-dir",
        "task-suite",
        "report",
    ]
    code, out, _ = cli("schema", "task-suite")
    schema = json.loads(out)
    assert schema["title"] == "TaskSuite"
    assert schema["additionalProperties"] is False
    code, out, err = cli("schema", "nope")
    assert code == 2 and "unknown format 'nope'" in err


# --- bad input: one clear error with file:line:col each -----------------------------------

SUITE = """\
skill: skills/bug-detection.md
evals:
  - name: a
    given: g
    files: [fixtures/example/handler.py]
    should_find:
      - finding: f
"""


@pytest.mark.parametrize(
    ("relative", "content", "expected"),
    [
        ("x.yaml", "skill: s\nevals: [\n  - name\n", "x.yaml:3:3: malformed YAML"),
        ("x.yaml", "skill: a\n\tevals: []\n", "x.yaml:2:1: malformed YAML"),
        ("x.yaml", "skill: a\nevals: []\n---\nskill: b\n", "x.yaml:3:1: malformed YAML"),
        ("c/x.json", '{\n  "given": "g",\n  "files": [}\n', "c/x.json:3:13: malformed JSON"),
        ("c/x.json", '{"given": "g",}', "c/x.json:1:15: malformed JSON"),
        (
            "x.yaml",
            SUITE.replace("files: [fixtures/example/handler.py]", "files: fixtures/a.py"),
            "x.yaml:5:5: evals[0].files: Input should be a valid list, got a string",
        ),
        (
            "x.yaml",
            SUITE.replace("    given: g\n", ""),
            "x.yaml:3:5: missing required field 'given' in evals[0]",
        ),
        (
            "x.yaml",
            SUITE.replace("      - finding: f\n", "").replace("should_find:", "should_find: []"),
            "x.yaml:6:5: evals[0].should_find: must list at least one finding",
        ),
        (
            "x.yaml",
            SUITE + "        severity: urgent\n",
            "x.yaml:8:9: evals[0].should_find[0].severity: must be high, medium or low, "
            "lowercase (Warden reads critical as high and info as low, and refuses anything "
            "else), got 'urgent'",
        ),
        (
            "x.yaml",
            SUITE.replace("- name: a", '- name: "a\\x01"'),
            "x.yaml:3:5: evals[0].name: must not contain control characters",
        ),
        (
            "x.yaml",
            SUITE.replace("skill: skills/bug-detection.md", "skill: skills/missing.md"),
            "x.yaml:1:1: skill 'skills/missing.md' not found",
        ),
        (
            "x.yaml",
            SUITE.replace("fixtures/example/handler.py", "fixtures/example/gone.py"),
            "x.yaml:5:13: files[0]: 'fixtures/example/gone.py' not found under the eval root",
        ),
        (  # Node's join: `..` is normalised, and must stay inside the project
            "x.yaml",
            SUITE.replace("fixtures/example/handler.py", "../outside.py"),
            "x.yaml:5:13: files[0]: '../outside.py' is ",
        ),
        (  # Node's join: a leading `/` is relative to the eval root
            "x.yaml",
            SUITE.replace("fixtures/example/handler.py", "/etc/passwd"),
            "x.yaml:5:13: files[0]: '/etc/passwd' not found under the eval root",
        ),
        (
            "x.yaml",
            SUITE.replace("skill: skills/bug-detection.md", "skill: /etc/passwd"),
            "x.yaml:1:1: skill '/etc/passwd' is absolute",
        ),
        (
            "x.yaml",
            SUITE + "    runtime: gpt\n",
            "x.yaml:8:5: evals[0].runtime: unknown runtime 'gpt'; known runtimes: aider, builtin,",
        ),
        (
            "x.yaml",
            SUITE + "    agent_command: 'unbalanced \"quote'\n",
            "x.yaml:8:5: agent_command: No closing quotation",
        ),
        (
            "x.yaml",
            SUITE + "    agent_command: []\n",
            "x.yaml:8:5: evals[0].agent_command: must be a command line string or a non-empty list",
        ),
        ("x.yaml", "skill: s\n", "x.yaml:1:1: missing required field 'evals'"),
        ("x.yaml", "evals: []\n", "x.yaml:1:1: missing required field 'skill'"),
        ("x.yaml", "skill: s\nevals: {}\n", "x.yaml:2:1: evals: Input should be a valid list"),
    ],
)
def test_bad_review_yaml(cli, tmp_path: Path, relative: str, content: str, expected: str) -> None:
    root = copy_seed("warden", tmp_path)
    write(root / relative, content)
    code, out, err = cli("validate", "warden")
    assert code == 2
    assert f"warden/{expected}" in err, err
    assert err.rstrip().splitlines()[-1].startswith("assay: ")
    assert out == ""


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["expect"].update(verdict="maybe"),
            "verification/v.json:19:5: expect.verdict: Input should be 'keep' or 'reject', "
            "got 'maybe'",
        ),
        (
            lambda d: d["candidate"].update(severity="severe"),
            "verification/v.json:8:5: candidate.severity: must be high, medium or low",
        ),
        (lambda d: d.pop("expect"), "verification/v.json:1:1: missing required field 'expect'"),
        (
            lambda d: d["candidate"].pop("title"),
            "verification/v.json:6:3: missing required field 'title' in candidate",
        ),
        (
            lambda d: d["candidate"].update(confidence=7),
            "verification/v.json:9:5: candidate.confidence: must be high, medium, low or a "
            "number from 0 to 1",
        ),
        (
            lambda d: d["candidate"].update(location={"path": "a.py", "startLine": 0}),
            "verification/v.json:15:7: candidate.location.startLine: Input should be greater "
            "than or equal to 1",
        ),
    ],
)
def test_bad_verification(cli, tmp_path: Path, mutate, expected: str) -> None:
    root = copy_seed("warden", tmp_path)
    source = root / "verification/workflow-open-periods-project-access-keep.json"
    data = json.loads(source.read_text())
    source.unlink()
    mutate(data)
    write(root / "verification/v.json", json.dumps(data, indent=2))
    code, _, err = cli("validate", "warden")
    assert code == 2
    assert f"warden/{expected}" in err, err


def test_severities_as_wardens_schema_reads_them(cli, tmp_path: Path) -> None:
    # Warden's SeveritySchema: `critical` -> high, `info` -> low; anything else is refused,
    # upper case included. Verdicts are still read in any case.
    root = copy_seed("warden", tmp_path)
    source = root / "verification/workflow-open-periods-project-access-keep.json"
    data = json.loads(source.read_text())
    data["candidate"]["severity"] = "critical"
    data["expect"]["verdict"] = "Reject"
    source.write_text(json.dumps(data))
    code, _, err = cli("validate", "warden")
    assert code == 0, err
    from assay.suites.load import load_suites

    case = next(c for c in load_suites([root]).cases if c.kind == "verify")
    assert case.spec.candidate["severity"] == "high"  # type: ignore[union-attr]
    for refused in ("HIGH", "warning", "urgent"):
        data["candidate"]["severity"] = refused
        source.write_text(json.dumps(data))
        code, _, err = cli("validate", "warden")
        assert code == 2 and f"got {refused!r}" in err


def test_non_utf8_suite(cli, tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    write(root / "c/latin.json", b'{\n  "given": "caf\xe9",\n  "should_find": []\n}\n')
    code, _, err = cli("validate", "warden")
    assert code == 2
    assert "warden/c/latin.json:2:16: file is not UTF-8 text (byte 0xe9" in err


def test_control_characters_in_yaml(cli, tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    write(root / "x.yaml", "skill: a\x00\n")
    code, _, err = cli("validate", "warden")
    assert code == 2
    assert "warden/x.yaml:1:9: malformed YAML: character '\\x00' is not allowed" in err


def test_every_problem_in_every_file_is_reported(cli, tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    second = SUITE.split("evals:\n")[1].replace("name: a", "name: b").replace("handler", "no")
    write(root / "a.yaml", SUITE.replace("given: g", "given: ''") + second)
    write(root / "b.yaml", "skill: [\n")
    write(root / "c/d.json", '{"given": "x", "files": [], "should_find": [{"finding": "f"}]}')
    code, _, err = cli("validate", "warden")
    assert code == 2
    lines = err.strip().splitlines()
    assert lines[-1] == "assay: 3 errors"
    # An empty `given` is Warden's (zod takes it): a warning, said with the errors.
    assert lines[0].startswith("warden/a.yaml:4:5: warning: evals[0].given: empty")
    assert lines[1].startswith("warden/a.yaml:10:13: files[0]: 'fixtures/example/no.py' not found")
    assert lines[2].startswith("warden/b.yaml:2:1: malformed YAML")
    assert lines[3].startswith("warden/c/d.json:1:16: files: List should have at least 1 item")


def test_duplicate_case_ids_across_files(cli, tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    shutil.copy(
        root / "security-review/sentry-replay-delete-read-scope.json",
        root / "security-review/b.json",
    )
    data = json.loads((root / "security-review/b.json").read_text())
    data["name"] = "sentry-replay-delete-read-scope"
    (root / "security-review/b.json").write_text(json.dumps(data))
    code, _, err = cli("validate", "warden")
    # Warden runs both (vitest allows a test name twice): the later one is renamed.
    assert code == 0
    # A JSON scenario's case starts at its first key (line 2), not at the `{` above it.
    assert (
        "warden/security-review/sentry-replay-delete-read-scope.json:2:3: warning: duplicate "
        "case id 'security-review/sentry-replay-delete-read-scope' (also defined at "
        "warden/security-review/b.json:1:1): both run, this one as "
        "'security-review/sentry-replay-delete-read-scope#2'"
    ) in err
    code, _, err = cli("validate", "warden", "--strict")
    assert code == 2 and "duplicate case id" in err


def test_symlink_escaping_the_root(cli, tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    write(tmp_path / "secret.py", "token = 1\n")
    os.symlink(tmp_path / "secret.py", root / "fixtures/example/link.py")
    write(root / "x.yaml", SUITE.replace("handler.py", "link.py"))
    code, _, err = cli("validate", "warden")
    assert code == 2
    assert "warden/x.yaml:5:13: files[0]: 'fixtures/example/link.py' resolves to" in err
    assert "a symlink escapes the root" in err


def test_json_scenario_directly_in_the_root(cli, tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    code, _, err = cli("validate", "warden/security-review")
    assert code == 2
    assert "a JSON scenario must live in a category directory" in err
    code, _, err = cli(
        "validate", str(root / "security-review/sentry-replay-delete-read-scope.json")
    )
    assert code == 0, err


def test_empty_directory_and_missing_path(cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    write(tmp_path / "other/package.json", '{"name": "x"}')
    code, _, err = cli("validate", "empty", "other", "missing")
    assert code == 2
    assert "empty: no suites found under" in err
    assert "other: no suites found under" in err
    # the file read there is named, so a mistyped suite does not vanish silently
    assert "package.json is not a suite file (none of the keys of any suite format" in err
    assert "empty: no suites found under " + str(tmp_path / "empty") + "\n" in err
    assert "missing: no such file or directory" in err


def test_a_directory_of_no_suites_names_three_of_its_files(cli, tmp_path: Path) -> None:
    for name in ("a.yaml", "b.yml", "c.json", "d.yaml", "sub/e.yaml"):
        write(tmp_path / "evals" / name, '{"title": "not a suite"}\n')
    code, _, err = cli("validate", "evals")
    assert code == 2
    assert "a.yaml, b.yml, c.json and 2 more are not suite files" in err


def test_an_explicit_file_that_is_no_suite(cli, tmp_path: Path) -> None:
    write(tmp_path / "package.json", '{"name": "x"}')
    code, _, err = cli("validate", "package.json")
    assert code == 2
    assert "package.json: not a suite file" in err


# --- Cassandra bad inputs -----------------------------------------------------------------


def _manifest(root: Path, **changes: object) -> None:
    data = json.loads((root / "suite.json").read_text())
    data["cases"][0].update(changes)
    (root / "suite.json").write_text(json.dumps(data, indent=2))


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"fixture_path": "fixtures/nope"},
            "suite.json:10:7: fixture_path 'fixtures/nope' is not a directory",
        ),
        (
            {"fixture_path": "../x"},
            "suite.json:10:7: fixture_path '../x' leads outside the repository",
        ),
        (
            {"base_source": "missing.tar.gz"},
            "suite.json:11:7: base_source 'missing.tar.gz' not found",
        ),
        (
            {"base_source": "input.diff"},
            "suite.json:11:7: base 'input.diff' must be a directory or",
        ),
        ({"diff_path": "none.diff"}, "suite.json:11:7: diff 'none.diff' not found"),
        ({"id": 7}, "suite.json:6:7: cases[0].id: Input should be a valid string, got a number"),
    ],
)
def test_bad_rubric_manifest(cli, tmp_path: Path, changes: dict, expected: str) -> None:
    root = copy_seed("cassandra", tmp_path)
    _manifest(root, **changes)
    code, _, err = cli("validate", "cassandra")
    assert code == 2
    assert f"cassandra/{expected}" in err, err


def test_rubric_dir_without_diff_and_with_an_empty_diff(cli, tmp_path: Path) -> None:
    root = copy_seed("cassandra", tmp_path)
    case = root / "cases/hardcoded-api-key"
    (case / "input.diff").unlink()
    code, _, err = cli("validate", "cassandra")
    assert code == 2
    assert "metadata.json:1:1: diff 'input.diff' not found in" in err
    write(case / "input.diff", "")
    code, _, err = cli("validate", "cassandra")
    assert code == 0, err  # Cassandra applies nothing: the case reviews the base alone
    write(case / "input.diff", "\n\n")
    code, _, err = cli("validate", "cassandra")
    assert code == 2 and "holds only whitespace" in err  # git apply finds no patch
    write(case / "input.diff", "just words\n")
    code, _, err = cli("validate", "cassandra")
    assert "is not a unified diff" in err


def _tarball(path: Path, members: list[tarfile.TarInfo]) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(b"x" * member.size) if member.isreg() else None)


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = 1 if kind == tarfile.REGTYPE else 0
    return info


@pytest.mark.parametrize(
    ("member", "problem"),
    [
        (_member("../evil.txt"), "contains '..'"),
        (_member("/etc/evil"), "is absolute"),
        (_member("up", tarfile.SYMTYPE, "../../etc"), "leads outside the extraction directory"),
        (_member("hard", tarfile.LNKTYPE, "../x"), "leads outside the extraction directory"),
        (_member("dev", tarfile.CHRTYPE), "is a device"),
    ],
)
def test_unsafe_base_tarball(cli, tmp_path: Path, member: tarfile.TarInfo, problem: str) -> None:
    root = copy_seed("cassandra", tmp_path)
    _tarball(root / "cases/hardcoded-api-key/base.tar.gz", [_member("ok.txt"), member])
    code, _, err = cli("validate", "cassandra")
    assert code == 2
    assert "cases/hardcoded-api-key/metadata.json:5:1: unsafe or unreadable base tarball" in err
    assert problem in err


def test_corrupt_base_tarball(cli, tmp_path: Path) -> None:
    root = copy_seed("cassandra", tmp_path)
    write(root / "cases/hardcoded-api-key/base.tar.gz", b"\x1f\x8b\x08garbage")
    code, _, err = cli("validate", "cassandra")
    assert code == 2
    assert "base.tar.gz is not a readable tarball" in err


# --- PVYai bad inputs ---------------------------------------------------------------------


def _task(root: Path, mutate) -> None:
    data = json.loads((root / "regression.json").read_text())
    mutate(data)
    (root / "regression.json").write_text(json.dumps(data, indent=2))


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["tasks"][0].update(workspaceFixture="fixtures/missing"),
            "regression.json:11:7: workspaceFixture 'fixtures/missing' is not a directory",
        ),
        (
            lambda d: d["tasks"][0].update(workspaceFixture="../outside"),
            "regression.json:11:7: workspace fixture must stay within suite directory",
        ),
        (
            lambda d: d["tasks"][0].update(prompt=" "),
            "regression.json:10:7: tasks[0].prompt: must not be empty",
        ),
        (
            lambda d: d["tasks"][0].update(difficulty=3),
            "regression.json:9:7: tasks[0].difficulty: Input should be a valid string",
        ),
        (
            lambda d: d["tasks"][0].update(timeout=5),
            "regression.json:31:7: unknown key 'timeout' in tasks[0] (PVYai task suites reject",
        ),
        (
            lambda d: d.update(owner="me"),
            "regression.json:123:3: unknown key 'owner' (PVYai task suites reject",
        ),
        (
            lambda d: d["tasks"][0]["verificationCommands"][0].update(command="go test"),
            "regression.json:16:11: tasks[0].verificationCommands[0].command: "
            "Input should be a valid list",
        ),
        (
            lambda d: d["tasks"][0].update(expectedChangedFiles=["/abs/file.go"]),
            "regression.json:24:9: expectedChangedFiles[0] '/abs/file.go' must be a relative "
            "workspace path",
        ),
        (
            lambda d: d["tasks"][1]["verificationCommands"][1].update(id="build"),
            "regression.json:49:11: verificationCommands[1] id duplicates verificationCommands[0]",
        ),
        (
            lambda d: d["tasks"][1].update(id="add-format-function"),
            "duplicate case id 'my-eval-suite/add-format-function'",
        ),
    ],
)
def test_bad_task_suite(cli, tmp_path: Path, mutate, expected: str) -> None:
    root = copy_seed("pvyai", tmp_path)
    _task(root, mutate)
    code, _, err = cli("validate", "pvyai")
    assert code == 2
    assert expected in err, err


# --- unknown keys -------------------------------------------------------------------------


def test_unknown_keys_warn_and_strict_makes_them_errors(cli, tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    write(root / "x.yaml", SUITE + "    owner: me\n")
    code, out, err = cli("validate", "warden")
    assert code == 0
    assert "warden/x.yaml:8:5: warning: unknown key 'owner' in evals[0] (ignored" in err
    assert out.strip().endswith("ok: 4 cases in 4 files")
    code, _, err = cli("validate", "--strict", "warden")
    assert code == 2
    assert "warden/x.yaml:8:5: unknown key 'owner' in evals[0]" in err
    code, out, _ = cli("validate", "--json", "warden")
    assert json.loads(out)["warnings"][0]["line"] == 8


def test_warnings_and_errors_on_stderr_start_no_workflow_command(cli, tmp_path: Path) -> None:
    """A CI log reads workflow commands on stderr too, and these lines quote suite files."""
    root = copy_seed("warden", tmp_path)
    write(root / "x.yaml", SUITE + '    "##[error]forged": me\n')
    code, _, err = cli("validate", "warden")
    assert code == 0 and "unknown key '##\\[error]forged'" in err and "##[" not in err
    code, _, err = cli("validate", "--strict", "warden")
    assert code == 2 and "##[" not in err
    assert not isinstance(sys.stderr, DefusedStream)  # put back once the command ends


# --- in a real process --------------------------------------------------------------------


@pytest.mark.slow
def test_subprocess_bad_yaml_exits_2_without_traceback(tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    write(root / "x.yaml", "skill: s\nevals:\n  - name: [\n")
    result = run_subprocess("validate", "warden", cwd=tmp_path)
    assert result.returncode == 2
    assert "warden/x.yaml:4:1: malformed YAML" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_subprocess_no_suites_and_success(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = run_subprocess("validate", "empty", cwd=tmp_path)
    assert result.returncode == 2
    assert "no suites found under" in result.stderr and "Traceback" not in result.stderr
    copy_seed("pvyai", tmp_path)
    result = run_subprocess("validate", "pvyai", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("ok: 4 cases in 2 files")


@pytest.mark.slow
def test_subprocess_list_json(tmp_path: Path) -> None:
    copy_seed("cassandra", tmp_path)
    result = run_subprocess("list", "--json", "cassandra", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [c["id"] for c in json.loads(result.stdout)] == [
        "cases/hardcoded-api-key",
        "suite/sql-injection",
        "suite/new-module",
    ]


@pytest.mark.slow
def test_validate_imports_no_sdk_or_rich(tmp_path: Path) -> None:
    copy_seed("warden", tmp_path)
    probe = (
        "import sys\n"
        "from assay.cli import main\n"
        "code = main(['validate', 'warden'])\n"
        "heavy = ['anthropic', 'openai', 'github', 'rich', 'jsonschema', 'aiohttp', 'httpx2']\n"
        "print(code, [m for m in heavy if m in sys.modules])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip().splitlines()[-1] == "0 []", result.stderr


def test_an_oversized_suite_file_is_refused_without_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.suites import document

    monkeypatch.setattr(document, "MAX_TEXT_BYTES", 1024)
    suite = tmp_path / "big.yaml"
    suite.write_text("skill: s.md\nevals: []\n# " + "x" * 4096 + "\n")
    assert main(["validate", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "big.yaml: file is 4.0 KiB, over the 1.0 KiB limit" in err
    assert "Traceback" not in err


def test_a_reader_that_leaves_early_gets_no_traceback() -> None:
    # `assay schema report | head -1`: the pipe closes before assay writes.
    child = subprocess.Popen(
        [sys.executable, "-m", "assay.cli", "schema", "report"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    with child.stderr:
        stderr = child.stderr.read().decode()
    assert child.wait(timeout=60) == 1
    assert stderr == ""
