"""The one home of a Warden case's skill: the run-time override and the conventional default."""

from __future__ import annotations

from pathlib import Path

from assay.suites.warden_skill import conventional_skill, skill_at_run


def test_the_run_time_skill_replaces_the_case_s_and_only_when_given(tmp_path: Path) -> None:
    case_skill, override = tmp_path / "case.md", tmp_path / "override.md"
    assert skill_at_run(case_skill, override) == override
    assert skill_at_run(case_skill, None) == case_skill
    assert skill_at_run(None, override) == override  # a rubric case has none of its own
    assert skill_at_run(None, None) is None


def test_the_conventional_skill_is_a_flat_file_first_then_a_skill_directory(
    tmp_path: Path,
) -> None:
    assert conventional_skill(tmp_path, "auth") is None
    directory = tmp_path / "skills" / "auth"
    directory.mkdir(parents=True)
    assert conventional_skill(tmp_path, "auth") is None  # a directory without SKILL.md
    (directory / "SKILL.md").write_text("# auth\n", encoding="utf-8")
    assert conventional_skill(tmp_path, "auth") == (directory / "SKILL.md").resolve()
    (tmp_path / "skills" / "auth.md").write_text("# flat\n", encoding="utf-8")
    assert conventional_skill(tmp_path, "auth") == (tmp_path / "skills" / "auth.md").resolve()
