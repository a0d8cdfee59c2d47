"""Discovery: what is scanned, what is skipped, what is recognised; and `-t` selection."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from assay.errors import ConfigErrors
from assay.suites import Case, load_suites, select_cases

DATA = Path(__file__).parents[1] / "data" / "suites"
BROKEN = "{ this is not json"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def warden(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    shutil.copytree(DATA / "warden", root)
    return root.resolve()


@pytest.mark.parametrize(
    "skipped", [".git", ".hidden", "node_modules", "__pycache__", "fixtures", "skills", "x/base"]
)
def test_fixture_and_hidden_trees_are_never_scanned(warden: Path, skipped: str) -> None:
    write(warden / skipped / "cat/broken.json", BROKEN)
    write(warden / skipped / "bad.yaml", "skill: [")
    assert len(load_suites([warden]).cases) == 3


def test_non_suite_files_are_ignored(warden: Path) -> None:
    write(warden / "config/settings.yaml", "name: x\nitems: [1, 2]\n")
    write(warden / "config/list.json", "[1, 2, 3]")
    write(warden / "config/package.json", '{"name": "x", "version": "1.0.0"}')
    write(warden / "config/empty.yaml", "")
    write(warden / "config/metadata.json", '{"name": "not a rubric case"}')
    loaded = load_suites([warden])
    assert len(loaded.cases) == 3 and loaded.warnings == ()


@pytest.mark.parametrize(
    ("relative", "content", "message"),
    [
        ("c/partial.json", '{"should_find": [{"finding": "x"}]}', "missing required field 'given'"),
        ("c/v.json", '{"expect": {"verdict": "keep"}}', "missing required field 'candidate'"),
        ("half.yaml", "evals: []\n", "missing required field 'skill'"),
        ("tasks.json", '{"tasks": []}', "missing required field 'id'"),
        ("m.json", '{"name": "x", "cases": [{"rubric": "r"}]}', "missing required field"),
    ],
)
def test_files_that_look_like_suites_but_fail_are_errors(
    warden: Path, relative: str, content: str, message: str
) -> None:
    write(warden / relative, content)
    with pytest.raises(ConfigErrors) as info:
        load_suites([warden])
    assert message in str(info.value)


@pytest.mark.parametrize("metadata", ['{"name": "x"}', '{"name": "x", "rubric": ""}'])
def test_metadata_beside_a_diff_without_rubric_is_a_case_with_a_warning(
    warden: Path, metadata: str
) -> None:
    """Cassandra reads a missing or empty rubric as empty and judges against it."""
    write(warden / "r/c/metadata.json", metadata)
    write(warden / "r/c/input.diff", "diff --git a/x b/x\nnew file mode 100644\n")
    loaded = load_suites([warden])
    assert len(loaded.cases) == 4
    assert [w.message for w in loaded.warnings] == [
        "the rubric is empty or missing: the judge scores the review against an empty rubric "
        "(Cassandra accepts this too)"
    ]


def test_symlinked_directories_are_not_followed(warden: Path, tmp_path: Path) -> None:
    os.symlink(warden / "security-review", warden / "alias")
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "cat/broken.json", BROKEN)
    os.symlink(elsewhere, warden / "outside")
    assert len(load_suites([warden]).cases) == 3  # no duplicate ids from the alias


def test_a_symlinked_file_leading_outside_is_skipped_with_a_warning(
    warden: Path, tmp_path: Path
) -> None:
    target = write(tmp_path / "elsewhere.yaml", "skill: x\nevals: []\n")
    os.symlink(target, warden / "linked.yaml")
    loaded = load_suites([warden])
    assert len(loaded.cases) == 3
    assert [w.message for w in loaded.warnings] == [f"not followed: a symlink to outside {warden}"]


def test_a_suite_name_on_a_fifo_or_a_device_is_skipped_with_a_warning(warden: Path) -> None:
    os.mkfifo(warden / "pipe.yaml")
    os.symlink("/dev/zero", warden / "zero.json")
    loaded = load_suites([warden])
    assert len(loaded.cases) == 3
    assert sorted((Path(w.location.path).name, w.message) for w in loaded.warnings) == [
        ("pipe.yaml", "skipped: not a regular file"),
        ("zero.json", "skipped: not a regular file"),
    ]


def test_discovery_order_is_sorted_and_stable(warden: Path) -> None:
    for name in ("zeta", "alpha", "mid"):
        source = warden / "security-review/sentry-replay-delete-read-scope.json"
        shutil.copy(source, warden / f"security-review/{name}.json")
    ids = [c.id for c in load_suites([warden]).cases]
    assert ids == [
        "bug-detection/null-property-access",
        "security-review/alpha",
        "security-review/mid",
        "security-review/sentry-replay-delete-read-scope",
        "security-review/zeta",
        "security-review/workflow-open-periods-project-access-keep",
    ]
    assert [c.id for c in load_suites([warden]).cases] == ids


def test_overlapping_paths_load_each_file_once(warden: Path) -> None:
    loaded = load_suites([warden, warden / "eval-bug-detection.yaml", warden / "security-review"])
    assert len(loaded.cases) == 3
    assert len(loaded.files) == 3


def test_yml_suffix_and_suite_yml(warden: Path) -> None:
    shutil.move(warden / "eval-bug-detection.yaml", warden / "bugs.yml")
    write(warden / "security-review/_suite.yml", "model: anthropic/claude-z\n")
    cases = load_suites([warden]).cases
    assert cases[0].id == "bug-detection/null-property-access"  # the skill's name
    # The file stem still selects it, and so does Warden's full id (its newest test name).
    assert cases[0].aliases == (
        "bugs/null-property-access",
        "bug-detection/pi/anthropic/claude-sonnet-4-6/null-property-access",
    )
    assert cases[1].model == "anthropic/claude-z"


def test_a_broken_suite_yaml_is_reported_once(warden: Path) -> None:
    write(warden / "security-review/_suite.yaml", "skill: [\n")
    with pytest.raises(ConfigErrors) as info:
        load_suites([warden])
    assert len(info.value.errors) == 1
    assert "_suite.yaml:2:1: malformed YAML" in str(info.value)


def test_suite_yaml_unknown_key_and_bad_skill(warden: Path) -> None:
    write(warden / "security-review/_suite.yaml", "skill: skills/none.md\nflavour: x\n")
    with pytest.raises(ConfigErrors) as info:
        load_suites([warden])
    assert [str(e) for e in info.value.errors] == [
        f"{warden.relative_to(Path.cwd()) if warden.is_relative_to(Path.cwd()) else warden}"
        "/security-review/_suite.yaml:1:1: skill 'skills/none.md' not found "
        f"(looked for {warden / 'skills/none.md'})"
    ]
    assert "unknown key 'flavour'" in str(info.value.warnings[0])  # type: ignore[attr-defined]


def _case(case_id: str) -> Case:
    from assay.suites.case import TaskSpec

    spec = TaskSpec(prompt="p", workspace=Path("/w"), commands=())
    return Case(case_id, "s", "n", "task", "task-suite", Path("/s.json"), 1, spec)


def test_files_inside_a_task_workspace_are_fixture_data(tmp_path: Path) -> None:
    # A todo app's own data file looks like a task suite; it is part of the workspace.
    write(tmp_path / "ws/todo/data/tasks.json", '{"tasks": [{"title": "milk"}]}')
    write(tmp_path / "ws/todo/data/cases.json", '{"cases": [{"rubric": 1}]}')
    write(tmp_path / "ws/todo/data/dup.json", '{"given": 1, "given": 2}')  # no warning either
    write(tmp_path / "ws/todo/app.py", "x = 1\n")
    write(
        tmp_path / "suite.json",
        '{"id": "todo", "name": "Todo", "tasks": [{"id": "t", "name": "t", "prompt": "p", '
        '"workspaceFixture": "ws/todo", "expectedChangedFiles": ["app.py"], '
        '"verificationCommands": [{"id": "v", "name": "v", "command": ["true"]}]}]}',
    )
    loaded = load_suites([tmp_path], strict=True)
    assert [case.id for case in loaded.cases] == ["todo/t"]
    assert [f.path.name for f in loaded.files] == ["suite.json"]
    assert loaded.warnings == ()
    # Named on the command line, the same file is loaded (and its errors reported).
    with pytest.raises(ConfigErrors, match="tasks.json"):
        load_suites([tmp_path / "ws/todo/data/tasks.json"])


@pytest.mark.parametrize("hazard", ["escaping symlink", "fifo"])
def test_validate_refuses_a_workspace_the_sandbox_could_not_copy(
    tmp_path: Path, hazard: str
) -> None:
    write(tmp_path / "ws/a.py", "x = 1\n")
    if hazard == "fifo":
        os.mkfifo(tmp_path / "ws/pipe")
    else:
        os.symlink("../../secret", tmp_path / "ws/link")
    write(
        tmp_path / "suite.json",
        '{"id": "s", "name": "S", "tasks": [{"id": "t", "name": "t", "prompt": "p", '
        '"workspaceFixture": "ws", "expectedChangedFiles": ["a.py"], '
        '"verificationCommands": [{"id": "v", "name": "v", "command": ["true"]}]}]}',
    )
    expected = "points outside the fixture" if hazard != "fifo" else "not a regular file"
    with pytest.raises(ConfigErrors, match=f"workspaceFixture 'ws': .*{expected}"):
        load_suites([tmp_path])


def test_symlink_loops_and_fifos_are_reported_not_followed(warden: Path) -> None:
    os.symlink("loop.yaml", warden / "loop.yaml")
    os.mkfifo(warden / "pipe.yaml")
    loaded = load_suites([warden])
    assert len(loaded.cases) == 3
    assert any("loop.yaml" in str(w) and "skipped" in str(w) for w in loaded.warnings)
    with pytest.raises(ConfigErrors, match="a symbolic link that leads nowhere"):
        load_suites([warden / "loop.yaml"])
    # Reading a FIFO would block for ever; named explicitly it is refused at once.
    with pytest.raises(ConfigErrors, match="is not a regular file"):
        load_suites([warden / "pipe.yaml"])


def test_a_key_written_twice(warden: Path) -> None:
    # YAML: an error, as in Warden's own parser (PyYAML would keep the last block only).
    suite = next(warden.glob("*.yaml"))
    text = suite.read_text()
    write(suite, text + "\nevals:\n  - name: late\n")
    with pytest.raises(ConfigErrors) as info:
        load_suites([warden])
    line = len(text.splitlines()) + 2
    assert f"{suite.name}:{line}:1: malformed YAML: duplicate key 'evals'" in str(info.value)
    # `<<` is a plain key in YAML 1.2 (Warden's), no merge: it duplicates no `given`.
    write(
        suite, "x: &d {given: g}\n" + text.replace("evals:", "y:\n  <<: *d\n  given: h\nevals:", 1)
    )
    assert load_suites([warden]).cases

    # JSON: parsers keep the last value, as the formats' own tools do: a warning, an
    # error under --strict.
    scenario = next((warden / "security-review").glob("*.json"))
    write(scenario, '{"given": "an older text",\n' + scenario.read_text().lstrip()[1:])
    warnings = [str(w) for w in load_suites([warden]).warnings]
    assert any(f"{scenario.name}:3:3: duplicate key 'given'" in w for w in warnings)
    with pytest.raises(ConfigErrors, match="duplicate key 'given'"):
        load_suites([warden], strict=True)


@pytest.mark.parametrize("name", ["bad\nname", "\x1b[31mred"])
def test_ids_from_directory_names_are_printable(tmp_path: Path, name: str) -> None:
    # A rubric case directory's name becomes its id, unchecked by any suite model.
    case = tmp_path / name
    write(case / "metadata.json", '{"rubric": "r"}')
    write(
        case / "input.diff",
        "diff --git a/a b/a\nnew file mode 100644\n--- /dev/null\n+++ b/a\n@@ -0,0 +1 @@\n+x\n",
    )
    with pytest.raises(ConfigErrors, match="case id .* has control characters"):
        load_suites([tmp_path])


def test_an_id_cannot_start_a_workflow_command(tmp_path: Path) -> None:
    write(tmp_path / "ws/a.py", "x = 1\n")
    write(
        tmp_path / "suite.json",
        '{"id": "::error title=x::y", "name": "n", '
        '"tasks": [{"id": "t", "name": "t", "prompt": "p", '
        '"workspaceFixture": "ws", "expectedChangedFiles": ["a.py"], '
        '"verificationCommands": [{"id": "v", "name": "v", "command": ["true"]}]}]}',
    )
    with pytest.raises(ConfigErrors, match="would start a GitHub workflow command"):
        load_suites([tmp_path])


def test_the_outermost_path_decides_the_root_in_any_order(warden: Path) -> None:
    category = warden / "security-review"
    forward = load_suites([warden, category])
    backward = load_suites([category, warden])
    assert sorted(c.id for c in backward.cases) == sorted(c.id for c in forward.cases)
    assert {c.root for c in backward.cases} == {warden}


def test_select_cases() -> None:
    cases = [_case(i) for i in ("code-review/a", "security-review/b", "verification/a-keep")]
    assert select_cases(cases, []) == cases
    assert [c.id for c in select_cases(cases, ["review"])] == ["code-review/a", "security-review/b"]
    assert [c.id for c in select_cases(cases, ["*/a*"])] == ["code-review/a", "verification/a-keep"]
    assert [c.id for c in select_cases(cases, ["security-review/?", "keep"])] == [
        "security-review/b",
        "verification/a-keep",
    ]
    assert select_cases(cases, ["nothing"]) == []
