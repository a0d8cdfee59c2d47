"""Which files the results depend on that trigger-paths leaves out."""

from __future__ import annotations

from pathlib import Path

from assay.action.coverage import uncovered_inputs, uncovered_warning
from assay.action.input_text import DEFAULT_TRIGGER_PATHS
from assay.suites import load_suites
from tests.action.test_ci import make_workspace


def test_skills_suites_and_the_agents_script_are_each_named_once(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, review=True)
    cases = load_suites([ws / "evals"]).cases
    agent = ("python3", "agent.py", "{workspace}", "--flag")
    found = uncovered_inputs(
        cases, trigger_paths=("evals/*.json",), workspace=ws, agent_command=agent
    )
    assert found == [
        ("agent.py", "the agent command"),
        ("evals/review.yaml", "suite review"),
        ("evals/skills/bugs.md", "the skill of review"),
    ]
    warning = uncovered_warning(found)
    assert warning is not None and warning.startswith("trigger-paths does not cover agent.py")


def test_the_default_trigger_paths_cover_a_conventional_layout(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, review=True)
    cases = load_suites([ws / "evals"]).cases
    found = uncovered_inputs(
        cases, trigger_paths=DEFAULT_TRIGGER_PATHS, workspace=ws, agent_command=None
    )
    assert found == [] and uncovered_warning(found) is None


def test_files_outside_the_workspace_are_not_the_prs_to_change(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "a", review=True)
    cases = load_suites([ws / "evals"]).cases
    other = tmp_path / "b"
    other.mkdir()
    assert uncovered_inputs(cases, trigger_paths=(), workspace=other, agent_command=None) == []
