"""Scaffold -> fill in the TODO -> `assay validate` -> `assay run --dry-run`: the sandbox
holds exactly the captured files, as they were at the captured ref."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.suites import load_suites
from tests.test_scaffold_helpers import (
    PR_URL,
    REPOSITORY,
    SIZE_CAP,
    git,
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

    # The untouched stub is rejected, saying what to fill in.
    code, _, err = run_cli(capsys, "validate", str(scenario_path))
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
