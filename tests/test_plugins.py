"""A plugin found through its entry points extends assay with no change to assay's source.

`tests/plugins/` holds `assay_testplugin` and its `*.dist-info` (entry points in every
group); with that directory on PYTHONPATH, importlib.metadata finds it as if installed.
One `assay run` then uses its provider (credentials and pricing included), its runtime,
its graders (by entry point name from `[tool.assay]`, by `module:Class` from a
`_suite.yaml`) and its renderer, and `assay merge` writes that renderer's file too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGINS = Path(__file__).parent / "plugins"
SRC = Path(__file__).parents[1] / "src"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    evals = project / "evals"
    (evals / "fixtures").mkdir(parents=True)
    (evals / "fixtures" / "clean.py").write_text("def handle(body):\n    return body\n")
    (evals / "fixtures" / "todo.py").write_text("def handle(body):\n    return body  # TODO\n")
    (evals / "skills").mkdir()
    (evals / "skills" / "security-review.md").write_text("Find security bugs.\n")
    category = evals / "security-review"
    category.mkdir()
    (category / "_suite.yaml").write_text("graders:\n  - assay_testplugin.graders:VerdictGiven\n")
    for name, fixture, title, verdict in [
        ("clean", "clean.py", "unvalidated body", "keep"),
        ("todo", "todo.py", "unvalidated body", "keep"),
        ("bogus", "clean.py", "bogus finding", "reject"),
    ]:
        scenario = {
            "given": f"{name} handler",
            "files": [f"fixtures/{fixture}"],
            "candidate": {"id": name, "title": title, "description": "d", "severity": "high"},
            "expect": {"verdict": verdict},
        }
        (category / f"{name}.json").write_text(json.dumps(scenario, indent=2))
    (project / "pyproject.toml").write_text(
        "[tool.assay]\n"
        'paths = ["evals"]\n'
        'runtime = "oracle"\n'
        'model = "testplugin/oracle-1"\n'
        'graders = ["no_todo_comments"]\n'
    )
    return project


def _assay(project: Path, *args: str, key: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TESTPLUGIN_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join([str(PLUGINS), str(SRC)])
    if key:
        env["TESTPLUGIN_API_KEY"] = "tp-0123456789"
    return subprocess.run(
        [sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_one_run_uses_a_plugins_provider_runtime_graders_and_renderer(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = _assay(project, "run", "--report-dir", "out")
    assert result.returncode == 1, result.stderr  # the TODO case fails the gate
    assert "warning" not in result.stderr
    report = json.loads((project / "out/report.json").read_text())
    cases = {case["id"].split("/")[-1]: case for case in report["cases"]}
    assert {name: case["status"] for name, case in cases.items()} == {
        "bogus": "pass",
        "clean": "pass",
        "todo": "fail",
    }
    assert {case["runtime"] for case in cases.values()} == {"oracle"}
    assert {case["model"] for case in cases.values()} == {"testplugin/oracle-1"}
    # The configured grader first, then the category's; both join the kind's own check.
    checks = {check["id"]: check for check in cases["todo"]["checks"]}
    assert checks["no_todo_comments"]["status"] == "fail"
    assert checks["no_todo_comments"]["message"] == "TODO in todo.py"
    assert checks["assay_testplugin.graders:VerdictGiven"]["status"] == "pass"
    assert cases["todo"]["reason"] == "check no_todo_comments failed: TODO in todo.py"
    assert [c["id"] for c in cases["clean"]["checks"]][-2:] == [
        "no_todo_comments",
        "assay_testplugin.graders:VerdictGiven",
    ]
    # The provider's own price list, not assay's.
    assert cases["clean"]["usage"]["cost_usd"] == pytest.approx(
        cases["clean"]["usage"]["input_tokens"] / 100_000
    )
    digest = (project / "out/plugin-digest.txt").read_text().splitlines()
    assert sorted(digest[1:]) == sorted(f"{c['status']} {c['id']}" for c in cases.values())

    merged = _assay(project, "merge", "out/report.json", "-o", "merged/report.json")
    assert merged.returncode == 1, merged.stderr
    assert (project / "merged/plugin-digest.txt").read_text().splitlines()[1:] == digest[1:]
    assert (project / "merged/summary.md").is_file()


@pytest.mark.slow
def test_without_the_plugin_providers_key_its_cases_are_skipped_naming_the_variable(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    result = _assay(project, "run", "--report-dir", "out", key=False)
    report = json.loads((project / "out/report.json").read_text())
    assert {case["status"] for case in report["cases"]} == {"skipped"}, result.stderr
    assert {case["reason"] for case in report["cases"]} == {
        "no credentials for testplugin/oracle-1: set TESTPLUGIN_API_KEY"
    }


@pytest.mark.slow
def test_the_plugins_names_are_checked_like_assays_own(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert _assay(project, "validate").returncode == 0
    typo = _assay(project, "run", "--runtime", "orcale")
    assert typo.returncode == 2
    assert "unknown runtime 'orcale' (did you mean oracle?)" in typo.stderr
    (project / "evals/security-review/_suite.yaml").write_text(
        "graders:\n  - no_todo_coments\n  - assay_testplugin.graders:Missing\n"
    )
    bad = _assay(project, "validate")
    assert bad.returncode == 2
    assert "_suite.yaml:2:5: unknown grader 'no_todo_coments' (did you mean no_todo_comments?)" in (
        bad.stdout + bad.stderr
    )
    assert "_suite.yaml:3:5: grader 'assay_testplugin.graders:Missing': " in bad.stdout + bad.stderr
    assert "Traceback" not in bad.stderr
