"""Scaffold -> fill in the TODO -> `assay validate` -> `assay run --dry-run`: the sandbox
holds exactly the captured files, as they were at the captured ref."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.suites import load_suites
from tests.scaffold.test_helpers import (
    PR_URL,
    REPOSITORY,
    SIZE_CAP,
    git,
    make_repo,
    mixed_change,
    pull_from_repo,
    run_cli,
    serving,
    tree_at,
)

NAME = "replay-scope"
CASE_ID = f"security-review/{NAME}"


def test_a_scaffolded_case_validates_once_filled_in_and_builds_its_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    base, head = mixed_change(tmp_path / "clone")
    root = tmp_path / "evals"
    with serving(monkeypatch) as fake:
        pull_from_repo(fake, tmp_path / "clone", base, head)
        argv = ("--root", str(root), "--name", NAME, "--max-file-size", str(SIZE_CAP))
        code, out, _ = run_cli(capsys, "scaffold", PR_URL, *argv)
    assert code == 0
    scenario_path = root / "security-review" / f"{NAME}.json"
    assert f"next: edit should_find in evals/security-review/{NAME}.json" in out
    assert f"  assay validate evals/security-review/{NAME}.json\n" in out

    # The untouched stub is a warning saying what to fill in; `--strict` rejects it.
    code, _, err = run_cli(capsys, "validate", str(scenario_path))
    assert code == 0
    assert "warning: should_find[0].finding: still the scaffold's TODO placeholder" in err
    code, _, err = run_cli(capsys, "validate", "--strict", str(scenario_path))
    assert code == 2
    assert "should_find[0].finding: still the scaffold's TODO placeholder" in err

    scenario = json.loads(scenario_path.read_text())
    scenario["should_find"] = [{"finding": "DELETE accepts the project:read scope"}]
    scenario_path.write_text(json.dumps(scenario, indent=2))
    code, out, _ = run_cli(capsys, "validate", str(root))
    assert code == 0 and "ok: 1 case in 1 file" in out
    (case,) = load_suites([root]).cases
    assert (case.id, case.spec.repository) == (CASE_ID, REPOSITORY)  # type: ignore[union-attr]

    code, out, _ = run_cli(
        capsys, "run", str(root), "--dry-run", "-t", CASE_ID, "--work-root", str(tmp_path / "w")
    )
    assert code == 0
    sandbox = Path(out.splitlines()[1].strip())
    captured = {"src/app.py", "src/gone.py", "src/old_name.py"}
    in_repo = set(git(sandbox, "ls-tree", "-r", "--name-only", "HEAD").split())
    assert in_repo == {f"{NAME}/{p}" for p in captured | {"LICENSE"}}
    assert set(git(sandbox, "diff", "--name-only", "main...eval").split()) == {
        f"{NAME}/{p}" for p in captured
    }
    source = tree_at(tmp_path / "clone", base)
    for path in captured | {"LICENSE"}:
        assert (sandbox / NAME / path).read_bytes() == source[path]
    assert git(sandbox, "remote", "get-url", "origin").strip().endswith(f"{REPOSITORY}.git")


def test_a_captured_path_holding_evals_fixtures_lands_where_the_scaffold_wrote_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pull request to a repository that has Warden evals of its own (Warden itself):
    Warden reads where a fixture lands after the first `evals/fixtures` in its path, so
    the captured `evals/fixtures/...` is stored as `evals/_fixtures/...`."""
    paths = ("src/app.py", "evals/fixtures/case1/handler.py", "tests/fixtures/conf.py")
    base_files = {"LICENSE": "MIT\n", **{p: f"{p} before\n" for p in paths}}
    base, head = make_repo(tmp_path / "clone", base_files, {p: f"{p} after\n" for p in paths})
    root = tmp_path / "evals"
    with serving(monkeypatch) as fake:
        pull_from_repo(fake, tmp_path / "clone", base, head)
        code, _, err = run_cli(capsys, "scaffold", PR_URL, "--root", str(root), "--name", NAME)
    assert (code, err) == (0, "")
    scenario_path = root / "security-review" / f"{NAME}.json"
    scenario = json.loads(scenario_path.read_text())
    fixture_dir = f"fixtures/{NAME}/github/{REPOSITORY}"
    stored = {f["sourcePath"]: f["path"] for f in scenario["notes"]["source_files"]}
    assert (
        stored["evals/fixtures/case1/handler.py"]
        == f"{fixture_dir}/evals/_fixtures/case1/handler.py"
    )
    assert stored["tests/fixtures/conf.py"] == f"{fixture_dir}/tests/fixtures/conf.py"

    scenario["should_find"] = [{"finding": "the handler trusts its input"}]
    scenario_path.write_text(json.dumps(scenario, indent=2))
    code, _, _ = run_cli(capsys, "validate", str(scenario_path))
    assert code == 0
    code, out, _ = run_cli(
        capsys, "run", str(root), "--dry-run", "-t", CASE_ID, "--work-root", str(tmp_path / "w")
    )
    assert code == 0
    # Every file the scaffold wrote lands at `<name>/<its path in the fixture directory>`.
    written = {
        p.relative_to(root / fixture_dir).as_posix(): p.read_bytes()
        for p in (root / fixture_dir).rglob("*")
        if p.is_file()
    }
    assert len(written) == 4
    landed = tree_at(Path(out.splitlines()[1].strip()), "HEAD")
    assert landed == {f"{NAME}/{rel}": content for rel, content in written.items()}
    source = tree_at(tmp_path / "clone", base)
    for source_path, path in stored.items():
        assert landed[f"{NAME}/{path.removeprefix(fixture_dir + '/')}"] == source[source_path]
