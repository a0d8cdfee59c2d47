"""`--affected-by REF`: the cases whose suite file, fixtures, skill or base changed since REF."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from assay.cli import main
from assay.errors import ConfigError
from assay.runner.affected import select_affected
from assay.suites.case import Case, FixtureFile, ReviewSpec, RubricSpec, TaskSpec, VerifySpec
from tests.test_cli_run import load_report, project, run_args


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1"},
    )


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _write(root / "evals" / "review.yaml", "suite\n")
    _write(root / "evals" / "rubric.json", "suite\n")
    _write(root / "fixtures" / "a.py", "a\n")
    _write(root / "fixtures" / "b.py", "b\n")
    _write(root / "skills" / "review.md", "skill\n")
    _write(root / "bases" / "one" / "x.py", "x\n")
    _write(root / "diffs" / "one.diff", "diff\n")
    _write(root / "agent" / "prompt.txt", "prompt\n")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "base")
    return root


def cases(root: Path) -> list[Case]:
    def review(name: str, fixture: str, skill: Path | None) -> Case:
        spec = ReviewSpec(
            given="g", files=(FixtureFile(root / "fixtures" / fixture, fixture),), skill=skill
        )
        return Case(
            id=f"review/{name}",
            suite="review",
            name=name,
            kind="review",
            format="warden-yaml",  # type: ignore[arg-type]
            source_path=root / "evals" / "review.yaml",
            source_line=1,
            spec=spec,
        )

    rubric = Case(
        id="rubric/one",
        suite="rubric",
        name="one",
        kind="rubric",
        format="cassandra",  # type: ignore[arg-type]
        source_path=root / "evals" / "rubric.json",
        source_line=1,
        spec=RubricSpec(rubric="r", diff=root / "diffs" / "one.diff", base=root / "bases" / "one"),
    )
    return [
        review("a", "a.py", root / "skills" / "review.md"),
        review("b", "b.py", None),
        rubric,
    ]


def _selected(root: Path, *affects_all: str) -> tuple[list[str], str]:
    selection = select_affected(cases(root), root=root, ref="HEAD~1", affects_all=affects_all)
    return [c.id for c in selection.cases], selection.reason


def test_a_changed_fixture_selects_its_cases(repo: Path) -> None:
    _write(repo / "fixtures" / "b.py", "changed\n")
    commit_all(repo, "fixture")
    ids, reason = _selected(repo)
    assert ids == ["review/b"]
    assert reason == "affected by HEAD~1: 1 of 3 case(s) (fixture changed: 1)"


def test_a_changed_suite_file_selects_every_case_in_it(repo: Path) -> None:
    _write(repo / "evals" / "review.yaml", "changed\n")
    commit_all(repo, "suite")
    assert _selected(repo)[0] == ["review/a", "review/b"]


def test_a_changed_skill_selects_the_cases_using_it(repo: Path) -> None:
    _write(repo / "skills" / "review.md", "changed\n")
    commit_all(repo, "skill")
    ids, reason = _selected(repo)
    assert ids == ["review/a"] and "skill changed: 1" in reason


def test_a_changed_base_selects_the_rubric_case(repo: Path) -> None:
    _write(repo / "bases" / "one" / "x.py", "changed\n")
    commit_all(repo, "base")
    ids, reason = _selected(repo)
    assert ids == ["rubric/one"] and "base changed: 1" in reason


def test_a_verify_supporting_file_and_a_task_workspace_are_fixtures(repo: Path) -> None:
    _write(repo / "fixtures" / "support.py", "s\n")
    _write(repo / "workspaces" / "t" / "src" / "app.py", "app\n")
    commit_all(repo, "more fixtures")
    verify = Case(
        id="verify/v",
        suite="verify",
        name="v",
        kind="verify",
        format="warden-yaml",  # type: ignore[arg-type]
        source_path=repo / "evals" / "verify.yaml",
        source_line=1,
        spec=VerifySpec(
            given="g",
            files=(FixtureFile(repo / "fixtures" / "a.py", "a.py"),),
            candidate={},
            expect_verdict="keep",
            supporting_files=(FixtureFile(repo / "fixtures" / "support.py", "support.py"),),
        ),
    )
    task = Case(
        id="tasks/t",
        suite="tasks",
        name="t",
        kind="task",
        format="pvyai",  # type: ignore[arg-type]
        source_path=repo / "evals" / "tasks.json",
        source_line=1,
        spec=TaskSpec(prompt="p", workspace=repo / "workspaces" / "t", commands=()),
    )
    everything = [*cases(repo), verify, task]

    def chosen() -> list[str]:
        selection = select_affected(everything, root=repo, ref="HEAD~1", affects_all=())
        return [c.id for c in selection.cases]

    _write(repo / "fixtures" / "support.py", "changed\n")
    commit_all(repo, "support")
    assert chosen() == ["verify/v"]
    _write(repo / "workspaces" / "t" / "src" / "app.py", "changed\n")  # deep inside it
    commit_all(repo, "workspace")
    assert chosen() == ["tasks/t"]


def test_an_affects_all_path_selects_everything(repo: Path) -> None:
    _write(repo / "agent" / "prompt.txt", "changed\n")
    commit_all(repo, "agent")
    assert _selected(repo)[0] == []
    ids, reason = _selected(repo, "agent/*")
    assert len(ids) == 3
    assert (
        reason
        == "all 3 case(s): agent/prompt.txt changed since HEAD~1 (matches affects_all agent/*)"
    )


def test_a_bad_ref_is_a_config_error(repo: Path) -> None:
    with pytest.raises(ConfigError, match="--affected-by no-such-ref"):
        select_affected(cases(repo), root=repo, ref="no-such-ref", affects_all=())
    with pytest.raises(ConfigError, match="cannot start with '-'"):
        select_affected(cases(repo), root=repo, ref="--output=x", affects_all=())


@pytest.mark.slow
def test_affected_by_end_to_end_records_the_selection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"a": {}, "b": {}})
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "base")
    _write(root / "fixtures" / "calc" / "README.md", "# calc, changed\n")
    commit_all(root, "fixture")
    assert main(run_args(root, "--affected-by", "HEAD~1", "--root", str(root))) == 0
    report = load_report(root / "report" / "report.json")
    assert report.run.selection == "affected by HEAD~1: 2 of 2 case(s) (fixture changed: 2)"
    capsys.readouterr()


def test_nothing_affected_is_a_pass_with_nothing_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"a": {}, "b": {}})
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "base")
    _write(root / "other.txt", "unrelated\n")
    commit_all(root, "unrelated")
    assert main(run_args(root, "--affected-by", "HEAD~1", "--root", str(root))) == 0
    capsys.readouterr()
    report = load_report(root / "report" / "report.json")
    assert report.run.selection == "no cases affected by changes since HEAD~1"
    summary = report.summary
    assert (summary.total, summary.gate, summary.verdict, summary.score) == (
        0,
        "pass",
        "pass",
        None,
    )
    assert summary.gate_reason == (
        "no cases affected by changes since HEAD~1: nothing to run, nothing to gate"
    )
    markdown = (root / "report" / "summary.md").read_text()
    assert "selected: no cases affected by changes since HEAD" in markdown
    # Shards of such a run merge into the same pass.
    merged = tmp_path / "merged.json"
    assert main(["merge", str(root / "report"), "-o", str(merged)]) == 0
    capsys.readouterr()
    again = load_report(merged).summary
    assert (again.gate, again.total) == ("pass", 0)
