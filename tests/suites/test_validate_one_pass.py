"""`assay validate` reports every problem in one pass: a scenario that fails its schema
still has its fixture paths checked, so a missing fixture shows beside the schema error."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.cli import main


def test_a_schema_error_does_not_hide_a_missing_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "a.json").write_text(
        '{"given": 5, "files": ["fixtures/missing.py"], "should_find": [{"finding": "x"}]}\n'
    )
    (tmp_path / "s.yaml").write_text(
        "skill: skill.md\n"
        "evals:\n"
        "  - name: broken\n"
        "    given: 3\n"
        "    files: [fixtures/gone.py]\n"
        "    should_find: [{finding: y}]\n"
        "  - name: fine\n"
        "    given: ok\n"
        "    files: [fixtures/gone-too.py]\n"
        "    should_find: [{finding: y}]\n"
    )
    (tmp_path / "skill.md").write_text("# Review\n")
    assert main(["validate", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "cat/a.json:1:2: given: Input should be a valid string" in err
    assert "cat/a.json:1:24: files[0]: 'fixtures/missing.py' not found" in err
    assert "s.yaml:4:5: evals[0].given: Input should be a valid string" in err
    assert "s.yaml:5:13: files[0]: 'fixtures/gone.py' not found" in err
    assert "s.yaml:9:13: files[0]: 'fixtures/gone-too.py' not found" in err
    assert "assay: 5 errors" in err


def test_a_files_value_of_the_wrong_shape_is_only_the_schema_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "a.json").write_text(
        '{"given": "g", "files": [3], "should_find": [{"finding": "x"}]}\n'
    )
    assert main(["validate", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "cat/a.json:1:26: files[0]: Input should be a valid string, got a number" in err
    assert "not found" not in err and "assay: 1 error" in err


def test_display_path_follows_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay._util.display import display_path

    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "a" / "b" / "x.yaml") == "a/b/x.yaml"
    assert display_path("a//b/../b/x.yaml") == "a/b/x.yaml"
    assert display_path(tmp_path) == "."
    assert display_path(tmp_path.parent / "elsewhere") == str(tmp_path.parent / "elsewhere")
    assert display_path(str(tmp_path) + "-sibling/x") == str(tmp_path) + "-sibling/x"
    monkeypatch.chdir(tmp_path / "a")  # the same path asked again from elsewhere
    assert display_path(tmp_path / "a" / "b" / "x.yaml") == "b/x.yaml"
    assert display_path("b/x.yaml") == "b/x.yaml"
    monkeypatch.chdir("/")
    assert display_path("/etc/hosts") == "etc/hosts"
