"""docs/architecture.md is a map: every file it names exists, every test it names exists,
it has a row for each of the things people look for, and no line is over 200 characters."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "docs" / "architecture.md"
SRC = ROOT / "src" / "assay"


def _section(title: str) -> list[str]:
    text = MAP.read_text(encoding="utf-8")
    body = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.startswith("| ") and "---" not in line]


def test_no_line_is_over_200_characters() -> None:
    long = [
        f"docs/architecture.md:{number}: {len(line)} characters"
        for number, line in enumerate(MAP.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > 200
    ]
    assert not long, "\n".join(long)


def test_the_map_has_a_row_for_each_thing_people_look_for() -> None:
    rows = _section("Where is ...")[1:]  # the header row aside
    assert len(rows) >= 30
    behaviours = " ".join(row.split(" | ")[0] for row in rows)
    for wanted in (
        "gate is decided",
        "skill",
        "bwrap",
        "processes start",
        "git runs",
        "redacted",
        "agent command is parsed",
        "changed files",
        "judge prompts",
        "report.json",
        "Action decides",
        "PR comment",
        "record/replay cache",
        "provider is registered",
        "suites are discovered",
        "tarballs",
        "exit codes",
    ):
        assert wanted in behaviours, wanted


def test_every_file_the_map_names_exists() -> None:
    missing = []
    for row in _section("Where is ...")[1:] + _section("Packages")[1:]:
        where = row.split(" | ", 1)[1]
        for named in re.findall(r"`([\w./*]+)`", where):
            if "/" not in named and not named.endswith(".py"):
                continue  # a function or class name
            matches = list(SRC.glob(named.rstrip("/")))
            if not matches:
                missing.append(named)
    assert not missing, f"docs/architecture.md names what is not there: {missing}"


def test_every_rule_names_a_test_that_exists() -> None:
    missing = []
    for row in _section("Rules, each enforced by a test")[1:]:
        test = row.rsplit(" | ", 1)[1].strip(" |`")
        path, _, name = test.partition("::")
        source = (ROOT / path).read_text(encoding="utf-8")
        if name and f"def {name}(" not in source:
            missing.append(test)
    assert not missing, missing
