"""Each suite format loads unmodified, with its own path semantics."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from assay.errors import ConfigErrors
from assay.suites import (
    ContextChecks,
    Expectation,
    FixtureFile,
    ReviewSpec,
    RubricSpec,
    TaskSpec,
    VerifySpec,
    load_suites,
)
from assay.suites.warden import fixture_destination

DATA = Path(__file__).parent / "data" / "suites"


def copy_seed(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(DATA / name, target)
    return target.resolve()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- Warden -------------------------------------------------------------------------------


def test_warden_seed_tree_loads_all_three_formats(tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    loaded = load_suites([root])
    assert loaded.root == root
    assert loaded.warnings == ()
    assert [(c.id, c.kind, c.format) for c in loaded.cases] == [
        ("bug-detection/null-property-access", "review", "review-yaml"),
        ("security-review/sentry-replay-delete-read-scope", "review", "review-json"),
        ("security-review/workflow-open-periods-project-access-keep", "verify", "verification"),
    ]
    assert [(f.path.name, f.format, f.case_count) for f in loaded.files] == [
        ("eval-bug-detection.yaml", "review-yaml", 1),
        ("sentry-replay-delete-read-scope.json", "review-json", 1),
        ("workflow-open-periods-project-access-keep.json", "verification", 1),
    ]


def test_yaml_suite_fields(tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    case = load_suites([root / "eval-bug-detection.yaml"]).cases[0]
    assert case.suite == "eval-bug-detection"
    assert case.name == "null-property-access"
    assert (case.model, case.runtime, case.root) == ("anthropic/claude-sonnet-4-6", "pi", root)
    assert case.source_path == root / "eval-bug-detection.yaml"
    assert case.source_line == 5  # the `- name:` line of the eval
    assert case.spec == ReviewSpec(
        given="code that accesses properties on an array .find() result without null checking",
        files=(
            FixtureFile(
                root / "fixtures/null-property-access/handler.ts", "null-property-access/handler.ts"
            ),
        ),
        skill=root / "skills/bug-detection.md",
        should_find=(
            Expectation(
                "accessing .name on a potentially undefined user object from Array.find()", "high"
            ),
        ),
        should_not_find=(
            "style, formatting, or naming issues",
            "the lack of try/catch around the fetch call",
        ),
    )


def test_yaml_suites_are_read_as_yaml_1_2_like_wardens_parser(tmp_path: Path) -> None:
    # Warden parses with the npm `yaml` package (YAML 1.2 core schema): `yes`, `on` and
    # dates are strings, `010` is ten, `<<` merges nothing; PyYAML's 1.1 would differ.
    root = tmp_path / "w"
    write(root / "fixtures/c/a.ts", "x\n")
    write(root / "skills/s.md", "---\nname: yes\n---\nFind bugs.\n")
    write(
        root / "s.yaml",
        "skill: skills/s.md\nevals:\n"
        "  - name: on\n    given: no\n    files: [fixtures/c/a.ts]\n"
        "    should_find: [{finding: 2024-01-01}]\n",
    )
    (case,) = load_suites([root]).cases
    assert (case.id, case.spec.given) == ("yes/on", "no")  # the skill's name: `yes`
    assert case.spec.should_find == (Expectation("2024-01-01"),)  # type: ignore[union-attr]
    # YAML 1.2 booleans are true/false only: Warden's schema refuses `required: no`.
    write(
        root / "s.yaml",
        "skill: skills/s.md\nx: &common {files: [fixtures/c/a.ts]}\nevals:\n"
        "  - {name: a, given: g, files: [fixtures/c/a.ts],"
        " should_find: [{finding: x, required: no}]}\n"
        "  - {<<: *common, name: b, given: g, should_find: [{finding: x}]}\n",
    )
    with pytest.raises(ConfigErrors) as info:
        load_suites([root])
    errors = sorted(str(e) for e in info.value.errors)
    assert any(
        "s.yaml:4:" in e and "required: Input should be a valid boolean" in e for e in errors
    )
    assert any(
        "s.yaml:5:" in e and "missing required field 'files' in evals[1]" in e for e in errors
    )


def test_yaml_1_2_numbers_and_nulls() -> None:
    from assay.upstream.warden.yaml12 import load

    data = load("a: 010\nb: 0o17\nc: 0x1F\nd: 1_000\ne: 1:30\nf: 1e3\ng: Null\nh: y\ni: TRUE")
    assert data == {
        "a": 10,
        "b": 15,
        "c": 31,
        "d": "1_000",
        "e": "1:30",
        "f": 1000.0,
        "g": None,
        "h": "y",
        "i": True,
    }


def test_json_scenario_takes_the_category_and_its_conventional_skill(tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    case = load_suites([root / "security-review/sentry-replay-delete-read-scope.json"]).cases[0]
    assert case.root == root  # the parent of the category directory
    assert case.suite == "security-review"
    assert case.name == "sentry-replay-delete-read-scope"
    assert isinstance(case.spec, ReviewSpec)
    assert case.spec.skill == root / "skills/security-review/SKILL.md"
    assert case.spec.should_find == (
        Expectation(
            "DELETE accepts project:read scope, so read-only project users can permanently "
            "delete replay data"
        ),
    )
    assert case.spec.files[0].dest == "sentry-replay-delete-read-scope/project_replay_details.py"


def test_verification_scenario(tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    case = load_suites([root]).cases[2]
    assert isinstance(case.spec, VerifySpec)
    assert case.spec.expect_verdict == "keep"
    assert case.spec.candidate["location"] == {"path": "example/handler.py", "startLine": 10}
    assert case.spec.candidate["verification"].startswith("Source, boundary")
    assert case.spec.files == (
        FixtureFile(root / "fixtures/example/handler.py", "example/handler.py"),
    )
    # No _suite.yaml: the skill is the one src/verify.eval.ts declares.
    assert case.spec.skill == root / "skills/security-review/SKILL.md"
    assert case.id == "security-review/workflow-open-periods-project-access-keep"
    assert case.aliases == (
        "verification/workflow-open-periods-project-access-keep",
        "security-review/pi/anthropic/claude-sonnet-4-6/workflow-open-periods-project-access-keep",
    )
    assert (case.runtime, case.model) == ("pi", "anthropic/claude-sonnet-4-6")


def test_suite_yaml_gives_json_scenarios_their_defaults(tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    write(root / "skills/custom.md", "Look for authorization bugs.\n")
    write(
        root / "security-review/_suite.yaml",
        "skill: skills/custom.md\nruntime: command\nmodel: openai/gpt-4o\n"
        "agent_command: ./agent.sh --cwd {workspace}\n",
    )
    case = load_suites([root]).cases[1]
    assert isinstance(case.spec, ReviewSpec)
    assert case.spec.skill == root / "skills/custom.md"
    assert (case.runtime, case.model) == ("command", "openai/gpt-4o")
    assert case.agent_command == (str(root / "security-review/agent.sh"), "--cwd", "{workspace}")


def test_a_mistyped_placeholder_in_a_category_agent_command_warns_as_everywhere(
    tmp_path: Path,
) -> None:
    # The one reading of an agent command (suites/command.py) warns in `_suite.yaml` too,
    # as it does in a suite, `[tool.assay]` and `--agent-command`.
    root = copy_seed("warden", tmp_path)
    write(root / "security-review/_suite.yaml", "agent_command: ./agent.sh --cwd {workspce}\n")
    loaded = load_suites([root])
    warned = [str(w) for w in loaded.warnings if "{workspce}" in str(w)]
    assert len(warned) == 1
    assert "did you mean {workspace}?" in warned[0]
    assert "_suite.yaml" in warned[0]
    assert loaded.cases[1].agent_command == (
        str(root / "security-review/agent.sh"),
        "--cwd",
        "{workspce}",
    )


def test_scenario_overrides_beat_category_defaults(tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    write(root / "security-review/_suite.yaml", "runtime: pi\nmodel: anthropic/claude-x\n")
    path = root / "security-review/sentry-replay-delete-read-scope.json"
    data = json.loads(path.read_text())
    data.update(name="renamed", model="anthropic/claude-y", agent_command=["agent", "{prompt}"])
    path.write_text(json.dumps(data))
    case = load_suites([root]).cases[1]
    assert case.id == "security-review/renamed"
    assert (case.runtime, case.model) == ("pi", "anthropic/claude-y")
    assert case.agent_command == ("agent", "{prompt}")


def test_suite_level_and_case_level_agent_command(tmp_path: Path) -> None:
    root = copy_seed("warden", tmp_path)
    suite = root / "eval-bug-detection.yaml"
    text = suite.read_text().replace("runtime: pi\n", "runtime: command\nagent_command: [a, b]\n")
    text += (
        "  - name: second\n    given: g\n    agent_command: 'x \"y z\"'\n"
        "    files: [fixtures/example/handler.py]\n"
        "    should_find:\n      - finding: f\n"
        "        severity: critical\n        required: false\n"
    )
    suite.write_text(text)
    first, second = load_suites([suite]).cases
    assert first.agent_command == ("a", "b")
    assert second.agent_command == ("x", "y z")
    assert isinstance(second.spec, ReviewSpec)
    # Warden's schema normalises the legacy `critical` to `high`.
    assert second.spec.should_find == (Expectation("f", "high", required=False),)


@pytest.mark.parametrize(
    ("relative", "dest", "repo"),
    [
        ("fixtures/c/github/getsentry/sentry/src/api.py", "c/src/api.py", "getsentry/sentry"),
        ("fixtures/c/handler.ts", "c/handler.ts", None),
        ("fixtures/c/deep/dir/x.py", "c/deep/dir/x.py", None),
        ("fixtures/c/github/too/short", "c/github/too/short", None),
        # Outside fixtures/: `<parent dir>/<file>`, as Warden's evalFixtureRepoPath.
        ("shared/deep/LICENSE", "deep/LICENSE", None),
        ("code-review/fixtures/c/x.ts", "c/x.ts", None),
        ("evals/fixtures/c/x.ts", "c/x.ts", None),
    ],
)
def test_fixture_destination(relative: str, dest: str, repo: str | None) -> None:
    from pathlib import PurePosixPath

    path = PurePosixPath(relative)
    assert fixture_destination(path, parent=path.parent.name) == (dest, repo)


def _captured_case(root: Path, supporting: list[str]) -> Path:
    base = "fixtures/authz/github/getsentry/sentry"
    write(root / base / "src/sentry/api/endpoint.py", "def delete(): pass\n")
    write(root / base / "LICENSE", "Apache-2.0\n")
    write(root / "fixtures/shared/context.md", "context\n")
    scenario = {
        "given": "captured from a PR",
        "files": [f"{base}/src/sentry/api/endpoint.py"],
        "supporting_files": supporting,
        "should_find": [{"finding": "missing scope check", "required": False}],
        "notes": {
            "repository": "getsentry/sentry",
            "source_ref": "0" * 40,
            "source": "https://github.com/getsentry/sentry/pull/1",
            "side": "base",
            "custom": {"kept": True},
        },
    }
    return write(root / "security-review/authz.json", json.dumps(scenario))


def test_captured_fixtures_land_under_the_case_and_name_the_origin(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    _captured_case(root, ["fixtures/authz/github/getsentry/sentry/LICENSE"])
    case = load_suites([root]).cases[0]
    assert isinstance(case.spec, ReviewSpec)
    assert case.spec.repository == "getsentry/sentry"
    assert [f.dest for f in case.spec.files] == ["authz/src/sentry/api/endpoint.py"]
    assert [f.dest for f in case.spec.supporting_files] == ["authz/LICENSE"]
    assert case.spec.notes["custom"] == {"kept": True}  # notes are kept verbatim
    assert case.spec.notes["side"] == "base"


def test_origin_comes_from_files_only(tmp_path: Path) -> None:
    # Warden's singleEvalFixtureSourceRepository reads `files`, never `supporting_files`.
    root = tmp_path.resolve()
    _captured_case(root, ["fixtures/shared/context.md"])
    case = load_suites([root]).cases[0]
    assert isinstance(case.spec, ReviewSpec)
    assert case.spec.repository == "getsentry/sentry"
    assert [f.dest for f in case.spec.supporting_files] == ["shared/context.md"]


def test_skill_outside_the_eval_root_but_inside_the_git_project(tmp_path: Path) -> None:
    project = tmp_path.resolve() / "repo"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    evals = project / "packages/evals"
    write(evals / "fixtures/x/a.py", "x = 1\n")
    write(
        evals / "builtin.yaml",
        "skill: ../warden/src/builtin-skills/security-review/SKILL.md\n"
        "evals:\n  - name: a\n    given: g\n    files: [fixtures/x/a.py]\n"
        "    should_find: [{finding: f}]\n",
    )
    # Warden's ../ is relative to packages/evals, so point at packages/warden.
    write(project / "packages/warden/src/builtin-skills/security-review/SKILL.md", "Find.\n")
    case = load_suites([evals]).cases[0]
    assert isinstance(case.spec, ReviewSpec)
    assert (
        case.spec.skill == project / "packages/warden/src/builtin-skills/security-review/SKILL.md"
    )

    write(
        evals / "dir-skill.yaml",
        (evals / "builtin.yaml")
        .read_text()
        .replace(
            "../warden/src/builtin-skills/security-review/SKILL.md",
            "../warden/src/builtin-skills/security-review",
        )
        .replace("name: a", "name: b"),
    )
    cases = load_suites([evals]).cases
    assert cases[1].spec.skill == cases[0].spec.skill  # type: ignore[union-attr]


def test_skill_may_not_leave_the_project(tmp_path: Path) -> None:
    project = tmp_path.resolve() / "repo"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(tmp_path / "outside.md", "secret\n")
    write(project / "evals/fixtures/x/a.py", "x = 1\n")
    write(
        project / "evals/s.yaml",
        "skill: ../../outside.md\nevals:\n  - name: a\n    given: g\n"
        "    files: [fixtures/x/a.py]\n    should_find: [{finding: f}]\n",
    )
    with pytest.raises(ConfigErrors) as info:
        load_suites([project / "evals"])
    assert "s.yaml:1:1: skill '../../outside.md' is outside the project" in str(info.value)


@pytest.mark.parametrize(
    ("skill", "message"),
    [
        ("../.git/config", "skill '../.git/config' is inside .git"),
        ("../.git/notes.md", "skill '../.git/notes.md' is inside .git"),
        ("../.env", "skill '../.env' is not markdown"),
    ],
)
def test_a_skill_is_markdown_outside_git(tmp_path: Path, skill: str, message: str) -> None:
    # The skill's text goes to the model: a suite must not make a credential file one.
    project = tmp_path.resolve() / "repo"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(project / ".git/notes.md", "not a skill\n")
    write(project / ".env", "TOKEN=ghp_secret\n")
    write(project / "evals/fixtures/x/a.py", "x = 1\n")
    write(
        project / "evals/s.yaml",
        f"skill: {skill}\nevals:\n  - name: a\n    given: g\n"
        "    files: [fixtures/x/a.py]\n    should_find: [{finding: f}]\n",
    )
    with pytest.raises(ConfigErrors) as info:
        load_suites([project / "evals"])
    assert f"s.yaml:1:1: {message}" in str(info.value)


# --- Cassandra ----------------------------------------------------------------------------


def test_cassandra_metadata_dir_and_manifest(tmp_path: Path) -> None:
    root = copy_seed("cassandra", tmp_path)
    loaded = load_suites([root])
    by_id = {c.id: c for c in loaded.cases}
    assert list(by_id) == [
        "cases/hardcoded-api-key",
        "suite/sql-injection",
        "suite/new-module",
    ]
    old = by_id["cases/hardcoded-api-key"]
    case_dir = root / "cases/hardcoded-api-key"
    assert (old.format, old.kind, old.root, old.name) == (
        "rubric-dir",
        "rubric",
        case_dir,
        "Security: Hardcoded API Key",
    )
    assert old.spec == RubricSpec(
        rubric="The agent MUST identify the hardcoded API key in config.go and recommend using "
        "environment variables.",
        diff=case_dir / "input.diff",
        base=case_dir / "base.tar.gz",
        description="Tests if the agent identifies a hardcoded secret in a config file.",
        cassandra_id="hardcoded-api-key",
        cassandra_name="Security: Hardcoded API Key",
    )
    sql = by_id["suite/sql-injection"]
    assert sql.format == "rubric-manifest" and sql.root == root
    assert isinstance(sql.spec, RubricSpec)
    assert sql.spec.base == root / "fixtures/sql-injection/base"
    assert sql.spec.diff == root / "fixtures/sql-injection/input.diff"
    assert sql.source_line == 5
    new = by_id["suite/new-module"]
    assert isinstance(new.spec, RubricSpec)
    assert new.spec.base is None  # no base at all: an empty base
    assert new.spec.diff == root / "fixtures/new-module/change.diff"


def test_cassandra_empty_strings_mean_the_defaults(tmp_path: Path) -> None:
    # Cassandra reads these fields into Go strings (`omitempty`): "" is "not set".
    root = copy_seed("cassandra", tmp_path)
    expected = {c.id: c.spec for c in load_suites([root]).cases}
    manifest = json.loads((root / "suite.json").read_text())
    manifest["cases"][0].update(base_source="", diff_path="")
    (root / "suite.json").write_text(json.dumps(manifest))
    metadata = root / "cases/hardcoded-api-key/metadata.json"
    metadata.write_text(json.dumps({**json.loads(metadata.read_text()), "base_source": ""}))
    assert {c.id: c.spec for c in load_suites([root]).cases} == expected


def test_a_manifest_may_make_its_own_directory_a_fixture(tmp_path: Path) -> None:
    # Cassandra joins `fixture_path` to the manifest's directory, `.` included. A fixture tree
    # is not scanned for suites, but one holding the manifest must not hide the manifest.
    (tmp_path / ".git").mkdir()
    (tmp_path / "self").symlink_to(".")
    write(tmp_path / "base/main.go", "package main\n")
    write(tmp_path / "input.diff", "")
    (tmp_path / "m.json").write_text(
        '{"cases": [{"id": "dot", "rubric": "r", "fixture_path": "."},'
        ' {"id": "self", "rubric": "r", "fixture_path": "self"}]}'
    )
    write(
        tmp_path / "other.json",
        json.dumps({"cases": [{"id": "o", "rubric": "r", "fixture_path": "."}]}),
    )
    loaded = load_suites([tmp_path])
    assert sorted(c.id for c in loaded.cases) == ["m/dot", "m/self", "other/o"]
    dot = next(c for c in loaded.cases if c.id == "m/dot")
    assert dot.spec.base == tmp_path / "base"  # type: ignore[union-attr]


def test_a_base_directory_cassandra_could_not_copy_fails_its_case_as_it_runs(
    tmp_path: Path,
) -> None:
    # Go 1.24's os.CopyFS copies files and directories only: Cassandra fails the case
    # (tests/test_cassandra_parity_round2.py runs it), the suite still loads.
    root = copy_seed("cassandra", tmp_path)
    os.mkfifo(root / "fixtures/sql-injection/base/pipe")
    loaded = load_suites([root / "suite.json"])
    assert "suite/sql-injection" in {c.id for c in loaded.cases}


def test_manifest_base_source_override_and_tarball_default(tmp_path: Path) -> None:
    root = copy_seed("cassandra", tmp_path)
    shutil.copy(root / "cases/hardcoded-api-key/base.tar.gz", root / "fixtures/new-module/b.tar.gz")
    shutil.copy(
        root / "cases/hardcoded-api-key/base.tar.gz", root / "fixtures/sql-injection/base.tar.gz"
    )
    manifest = json.loads((root / "suite.json").read_text())
    manifest["cases"][1]["base_source"] = "b.tar.gz"
    (root / "suite.json").write_text(json.dumps(manifest))
    cases = {c.id: c for c in load_suites([root / "suite.json"]).cases}
    assert cases["suite/new-module"].spec.base == root / "fixtures/new-module/b.tar.gz"  # type: ignore[union-attr]
    # base.tar.gz is the recommended form and wins over base/
    assert cases["suite/sql-injection"].spec.base == root / "fixtures/sql-injection/base.tar.gz"  # type: ignore[union-attr]


def test_manifest_fixture_dirs_are_not_scanned(tmp_path: Path) -> None:
    root = copy_seed("cassandra", tmp_path)
    # A broken JSON inside a fixture tree is fixture content, not a suite.
    write(root / "fixtures/new-module/metadata.json", "{ broken")
    write(root / "fixtures/new-module/src/tasks.json", '{"tasks": 3}')
    assert len(load_suites([root]).cases) == 3


# --- PVYai --------------------------------------------------------------------------------


def test_pvyai_seed_suites(tmp_path: Path) -> None:
    root = copy_seed("pvyai", tmp_path)
    loaded = load_suites([root])
    assert [c.id for c in loaded.cases] == [
        "api-suite/add-health-endpoint",
        "my-eval-suite/add-format-function",
        "my-eval-suite/fix-nil-pointer",
        "my-eval-suite/refactor-to-interfaces",
    ]
    assert {c.kind for c in loaded.cases} == {"task"}
    refactor = loaded.cases[3]
    assert refactor.name == "Refactor to Interfaces"
    assert refactor.root == root and refactor.source_path == root / "regression.json"
    assert isinstance(refactor.spec, TaskSpec)
    assert refactor.spec.workspace == root / "fixtures/db-project"
    assert [(c.id, c.argv, c.timeout_s) for c in refactor.spec.commands] == [
        ("build", ("go", "build", "./..."), 600.0),
        ("test", ("go", "test", "./..."), 600.0),
        ("lint", ("golangci-lint", "run", "./internal/db/..."), 600.0),
    ]
    assert refactor.spec.context == ContextChecks(
        required_files=("internal/db/interface.go",), forbidden_files=("internal/db/debug.go",)
    )
    assert refactor.spec.forbidden_changed_files == ("go.mod",)
    assert refactor.spec.difficulty == "hard"
    health = loaded.cases[0].spec
    assert isinstance(health, TaskSpec)
    assert health.tags == ("api", "backend")
    assert health.required_trace_events == (  # trimmed and sorted, as PVYai normalises them
        "tool:edit_file",
        "tool:read_file",
        "verify:build",
        "verify:test",
    )
    assert health.description == "Add a GET /health endpoint with DB and cache checks"


def test_workspace_fixtures_are_not_scanned(tmp_path: Path) -> None:
    root = copy_seed("pvyai", tmp_path)
    write(root / "fixtures/buggy-server/package.json", '{"name": "x", "tasks": {}}')
    write(root / "fixtures/buggy-server/bad.json", "{ not json")
    assert len(load_suites([root]).cases) == 4


def test_all_seeds_together_from_a_configured_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("warden", "cassandra", "pvyai"):
        copy_seed(name, tmp_path / "evals")
    write(
        tmp_path / "pyproject.toml",
        '[tool.assay]\nroot = "evals/warden"\npaths = ["evals"]\n',
    )
    monkeypatch.chdir(tmp_path)
    loaded = load_suites([])
    assert loaded.root == (tmp_path / "evals/warden").resolve()
    assert len(loaded.cases) == 10
    assert (
        loaded.config is not None and loaded.config.path == (tmp_path / "pyproject.toml").resolve()
    )
