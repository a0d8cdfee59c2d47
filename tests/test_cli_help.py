"""Help that can be read (issue 35): `assay run --help` in argument groups with examples,
and `assay list` taking `run`'s selection options from the one definition they share."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from assay._cli.parser import commands
from assay.cli import build_parser, main

RUN_GROUPS = (
    "selection",
    "agent and models",
    "repeats and gate",
    "isolation and workspaces",
    "output",
    "Action / CI",
)


def groups(parser: argparse.ArgumentParser) -> dict[str, list[argparse.Action]]:
    return {g.title or "": list(g._group_actions) for g in parser._action_groups}


def test_run_help_is_grouped_with_examples() -> None:
    run = commands(build_parser())["run"]
    found = groups(run)
    for title in RUN_GROUPS:
        assert found[title], title
    # Nothing but --help and --root is left outside a group.
    loose = [a.option_strings[0] for a in found["options"]]
    assert loose == ["-h", "--root"]
    text = run.format_help()
    for title in RUN_GROUPS:
        assert f"\n{title}:\n" in text
    assert "\nexamples:\n  assay run evals " in text
    assert "--keep-workspaces" in found_options(found["isolation and workspaces"])


def found_options(actions: list[argparse.Action]) -> list[str]:
    return [o for a in actions for o in a.option_strings]


def test_list_takes_the_selection_options_of_run_from_one_definition() -> None:
    parsers = commands(build_parser())
    run_selection = groups(parsers["run"])["selection"]
    list_selection = groups(parsers["list"])["selection"]
    shared = ["-t", "--test", "--affected-by", "--affects-all", "--shard"]
    assert found_options(run_selection) == shared
    assert found_options(list_selection) == [*shared, "--model"]
    for mine, theirs in zip(run_selection, list_selection, strict=False):
        assert (mine.dest, mine.help, mine.metavar) == (theirs.dest, theirs.help, theirs.metavar)
    (run_model,) = [a for a in parsers["run"]._actions if "--model" in a.option_strings]
    (list_model,) = [a for a in parsers["list"]._actions if "--model" in a.option_strings]
    assert (run_model.dest, run_model.help) == (list_model.dest, list_model.help)


def test_every_subcommand_help_renders() -> None:
    for name, parser in commands(build_parser()).items():
        text = parser.format_help()
        assert text.startswith(f"usage: assay {name}"), name


def git(cwd: Path, *argv: str) -> None:
    subprocess.run(["git", *argv], cwd=cwd, check=True, capture_output=True)


def suite(path: Path, *names: str) -> None:
    path.write_text(
        "skill: skill.md\nevals:\n"
        + "".join(
            f"  - name: {n}\n    given: g\n    files: [h.ts]\n    should_find:\n"
            "      - finding: f\n"
            for n in names
        )
    )


def test_list_selects_as_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.ts").write_text("x\n")
    (tmp_path / "skill.md").write_text("---\nname: s\ndescription: d\n---\nS.\n")
    suite(tmp_path / "a.yaml", "one", "two")
    suite(tmp_path / "b.yaml", "three")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    git(tmp_path, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one")
    suite(tmp_path / "b.yaml", "three", "four")
    git(tmp_path, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qam", "two")

    assert main(["list", "a.yaml", "b.yaml", "--affected-by", "HEAD~1"]) == 0
    assert capsys.readouterr().out.split() == ["s/three", "s/four"]
    assert main(["list", "a.yaml", "b.yaml", "--shard", "1/2"]) == 0
    first = capsys.readouterr().out.split()
    assert main(["list", "a.yaml", "b.yaml", "--shard", "2/2"]) == 0
    second = capsys.readouterr().out.split()
    assert sorted(first + second) == ["s/four", "s/one", "s/three", "s/two"]
    assert first and second and not set(first) & set(second)
    assert main(["list", "a.yaml", "-t", "one", "--model", "m/a,m/b"]) == 0
    assert capsys.readouterr().out.splitlines() == ["s/one  m/a", "s/one  m/b"]
    assert main(["list", "a.yaml", "--shard", "3/2"]) == 2


def test_subcommands_with_many_options_are_grouped_and_show_examples() -> None:
    for name, parser in commands(build_parser()).items():
        found = groups(parser)
        options = [a for a in parser._actions if a.option_strings and a.dest != "help"]
        if len(options) > 8:
            loose = [a for a in found["options"] if a.dest != "help"]
            assert len(loose) <= 2, (name, [a.option_strings for a in loose])
        if name not in ("ci", "view", "schema"):  # no options worth an example
            assert "\nexamples:\n  assay " in parser.format_help(), name
