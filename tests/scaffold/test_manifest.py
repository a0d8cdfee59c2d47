"""`assay scaffold --format rubric` into an existing suite manifest, which it reads as
`assay run` reads it (Go's decoding, as Cassandra's loader decodes a manifest): the
loader then sees the manifest's cases as before, plus the new one; a manifest it cannot
read is refused at its line and left untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.suites import load_suites
from tests.scaffold.test_helpers import TITLE, make_repo, run_cli, snapshot

NAME = "new-case"
DIFF = "diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-x\n+y\n"


def _suite(root: Path, manifest: str) -> Path:
    """`root/rubric/rubric.json` holding `manifest`, beside two loadable fixtures."""
    for fixture in ("first", "other"):
        case_dir = root / "rubric" / "cases" / fixture
        (case_dir / "base").mkdir(parents=True)
        (case_dir / "base" / "x.txt").write_text("x\n")
        (case_dir / "input.diff").write_text(DIFF)
    path = root / "rubric" / "rubric.json"
    path.write_text(manifest)
    return path


def _scaffold(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, root: Path, *extra: str
) -> tuple[int, str, str]:
    repo = tmp_path / "clone"
    if not repo.exists():
        make_repo(repo, {"LICENSE": "MIT\n", "a.py": "a\n"}, {"a.py": "b\n"})
    refs = ("--repo", str(repo), "--base", "HEAD~1", "--head", "HEAD")
    return run_cli(capsys, "scaffold", *refs, "--root", str(root), "--format", "rubric", *extra)


def _loaded(root: Path) -> dict[str, tuple[str, str, str]]:
    """What the loader reads: each case's id, rubric, fixture directory and name."""
    return {
        case.id: (case.spec.rubric, case.spec.diff.parent.name, case.name)  # type: ignore[union-attr]
        for case in load_suites([root]).cases
    }


def _fill_in(manifest: Path) -> None:
    document = json.loads(manifest.read_text())
    for case in document["cases"]:
        if case.get("rubric", "").startswith("TODO"):
            case["rubric"] = "the new rubric"
    manifest.write_text(json.dumps(document))


_FIRST = '"rubric": "r1", "fixture_path": "cases/first"'


@pytest.mark.parametrize(
    "manifest",
    [
        # Go matches keys in any case, and reads null as the zero value.
        '{"Name": "mine", "Description": null, "Cases": [{"ID": "first", "Rubric": "r1",'
        ' "Fixture_Path": "cases/first", "Base_Source": null}]}',
        '{"name": "mine", "cases": null}',
        # A later spelling of `cases` decodes into the first one's elements, and cuts it.
        '{"cases": [{"id": "first", ' + _FIRST + '}, {"id": "other", "rubric": "r2", '
        '"fixture_path": "cases/other"}], "Cases": [{"rubric": "r1, as Go merges it"}]}',
        # A case without id is named after its fixture directory.
        '{"cases": [{' + _FIRST + "}]}",
        # A key written twice: the loader reads the last one.
        '{"cases": [{"id": "first", "id": "second", ' + _FIRST + "}]}",
        # A byte order mark, and a null after the id, which leaves the case without one.
        '\ufeff{"cases": [{"id": "first", ' + _FIRST + ', "id": null}]}',
        # Keys assay does not know are kept.
        '{"$schema": "./schema.json", "cases": [{"id": "first", ' + _FIRST + ', "weight": 2}]}',
    ],
)
def test_the_loader_reads_the_merged_manifest_as_before_plus_the_new_case(
    manifest: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evals"
    path = _suite(root, manifest)
    before = _loaded(root)
    code, _, err = _scaffold(capsys, tmp_path, root, "--name", NAME)
    assert (code, err) == (0, "")
    _fill_in(path)
    after = _loaded(root)
    assert after == {
        **before,
        f"rubric/{NAME}": ("the new rubric", NAME, TITLE),
    }
    unknown = json.loads(manifest.lstrip("\ufeff")).get("$schema")
    assert json.loads(path.read_text()).get("$schema") == unknown


@pytest.mark.parametrize(
    "existing",
    [
        '{"ID": "new-case", "rubric": "r", "fixture_path": "cases/first"}',
        '{"rubric": "r", "fixture_path": "cases/../cases/new-case"}',
    ],
)
def test_a_case_the_loader_names_like_the_new_one_is_a_conflict(
    existing: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evals"
    path = _suite(
        root,
        '{\n  "cases": [\n    {"id": "first", ' + _FIRST + "},\n    " + existing + "\n  ]\n}\n",
    )
    before = snapshot(root)
    code, _, err = _scaffold(capsys, tmp_path, root, "--name", NAME)
    assert code == 2
    assert f"rubric.json:4: case id '{NAME}' already exists" in err
    assert snapshot(root) == before

    # --force replaces that case: the loader reads the new one once.
    code, _, err = _scaffold(capsys, tmp_path, root, "--name", NAME, "--force")
    assert (code, err) == (0, "")
    _fill_in(path)
    loaded = _loaded(root)
    assert list(loaded) == ["rubric/first", f"rubric/{NAME}"]
    assert loaded[f"rubric/{NAME}"][:2] == ("the new rubric", NAME)


def test_a_case_an_earlier_scaffold_left_to_fill_in_does_not_stop_the_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evals"
    assert _scaffold(capsys, tmp_path, root, "--name", "one")[0] == 0
    code, _, err = _scaffold(capsys, tmp_path, root, "--name", "two")
    assert (code, err) == (0, "")
    path = root / "rubric" / "rubric.json"
    assert [c["id"] for c in json.loads(path.read_text())["cases"]] == ["one", "two"]
    _fill_in(path)
    assert list(_loaded(root)) == ["rubric/one", "rubric/two"]


@pytest.mark.parametrize(
    ("manifest", "where", "says"),
    [
        ('{\n  "cases": [\n', "3:1", "malformed JSON: Expecting value"),
        (
            '{\n  "cases": [\n    {"id": 5, "fixture_path": "cases/first"}\n  ]\n}\n',
            "3:6",
            "cases[0].id: Input should be a valid string, got a number",
        ),
        (
            '{\n  "cases": [\n    {"id": "first", "rubric": "r"}\n  ]\n}\n',
            "3:5",
            "missing required field 'fixture_path' in cases[0]",
        ),
        (
            '{\n  "name": "x",\n  "cases": "all of them"\n}\n',
            "3:3",
            "cases: Input should be a valid list, got a string",
        ),
    ],
)
def test_a_manifest_the_loader_cannot_read_is_refused_at_its_line_and_left_as_it_is(
    manifest: str,
    where: str,
    says: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "evals"
    path = _suite(root, manifest)
    before = snapshot(root)
    code, _, err = _scaffold(capsys, tmp_path, root, "--name", NAME)
    assert code == 2
    assert f"{path}:{where}: cannot add a case to this suite manifest: {says}" in err
    assert snapshot(root) == before
    # The place and the words are the loader's own.
    code, _, err = run_cli(capsys, "validate", str(path))
    assert code == 2 and f"{path}:{where}: {says}" in err


def test_a_number_that_would_be_written_back_as_infinity_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "evals"
    path = _suite(root, '{"cases": [{"id": "first", ' + _FIRST + ', "weight": 1e400}]}')
    before = snapshot(root)
    code, _, err = _scaffold(capsys, tmp_path, root, "--name", NAME)
    assert code == 2
    assert f"{path}: cannot add a case to this suite manifest: it holds NaN or a number" in err
    assert snapshot(root) == before
