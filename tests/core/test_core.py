"""assay.core: the shared facts, each in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.core.checks import Check, check_summary
from assay.core.files import artifacts_dir
from assay.core.kinds import CASE_KINDS
from assay.core.paths import PathEscape, is_inside, relative_inside, safe_relative
from assay.core.severities import SEVERITIES, normalise_severity, warden_severity
from assay.core.shards import ShardSyntaxError, format_shard, parse_shard
from assay.core.text import has_control, one_line, strip_control


def test_inside_is_by_path_parts_not_by_string_prefix(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "bc").mkdir()
    assert is_inside(tmp_path / "a" / "b", tmp_path / "a" / "b")
    assert is_inside(tmp_path / "a" / "b" / "new.txt", tmp_path / "a")
    assert not is_inside(tmp_path / "a" / "bc", tmp_path / "a" / "b")
    assert not is_inside(tmp_path / "a", tmp_path / "a" / "b")


def test_inside_follows_symlinks(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "root" / "escape").symlink_to(tmp_path / "outside")
    (tmp_path / "elsewhere").symlink_to(tmp_path / "root")
    assert not is_inside(tmp_path / "root" / "escape" / "secret", tmp_path / "root")
    assert is_inside(tmp_path / "elsewhere" / "file", tmp_path / "root")
    assert relative_inside(tmp_path / "elsewhere" / "x" / "y", tmp_path / "root") == "x/y"
    assert relative_inside(tmp_path / "root" / "escape", tmp_path / "root") is None


def test_resolved_paths_are_compared_as_given() -> None:
    assert is_inside("/srv/repo/src", "/srv/repo", resolved=True)
    assert not is_inside("/srv/repository", "/srv/repo", resolved=True)
    assert is_inside("/srv/repo", "/srv/repo/", resolved=True)
    assert is_inside("/srv/repo//src/", "/srv/repo", resolved=True)
    assert is_inside("/srv", "/", resolved=True)
    assert is_inside("/", "/", resolved=True)
    assert not is_inside("/", "/srv", resolved=True)


@pytest.mark.parametrize("raw", ["", "/etc/passwd", "C:/x", "a/../../b", "..", "./", "a\x00b"])
def test_safe_relative_refuses_what_leaves_its_root(raw: str) -> None:
    with pytest.raises(PathEscape):
        safe_relative(raw)


def test_safe_relative_normalises() -> None:
    assert safe_relative("./a\\b//c").as_posix() == "a/b/c"


def test_one_set_of_control_characters() -> None:
    dirty = "a\x1b[31mb\x9bc\u2028d\te\nf\rg\x7fh"
    assert one_line(dirty) == "a [31mb c d e f g h"
    assert one_line("a\x00\x01b", "_") == "a__b"
    assert one_line("a\x00\x01b", collapse=True) == "a b"
    assert strip_control(dirty) == "a[31mbcd\te\nfgh"
    assert has_control("x\x85") and not has_control("plain, with ünïcode")


@pytest.mark.parametrize("bidi", ["\u202e", "\u202a", "\u2066", "\u2069", "\u200f", "\u061c"])
def test_bidirectional_formatting_counts_as_control(bidi: str) -> None:
    """A title that reads `fix, then run(x)` but shows reordered ("Trojan Source")."""
    assert has_control(f"case{bidi}id")
    assert one_line(f"fix{bidi} run") == "fix  run"
    assert strip_control(f"line{bidi} one\n\tתיקון باگ") == "line one\n\tתיקון باگ"


def test_severity_words_and_warden_scale() -> None:
    assert SEVERITIES == ("critical", "high", "medium", "low", "info")
    assert normalise_severity(" Major ") == "high"
    assert normalise_severity("nit") == "info"
    assert normalise_severity("urgent") is None
    # A Warden suite's declared severity follows Warden's schema, not the agents' words.
    assert warden_severity("critical") == "high"
    assert warden_severity("info") == "low"
    assert warden_severity("major") is None
    assert warden_severity(normalise_severity("blocker")) == "high"


def test_shards() -> None:
    assert parse_shard(" 2/4 ") == (2, 4)
    assert format_shard((2, 4)) == "2/4" and format_shard(None) is None
    for text in ("2", "0/4", "5/4", "a/b", "1/0", "1_0/20", "1/2_0"):  # `1_0` is 10 to int()
        with pytest.raises(ShardSyntaxError, match="--shard"):
            parse_shard(text)


def test_artifacts_dir_names_are_safe() -> None:
    path = artifacts_dir(Path("/r"), "suite/case one", "anthropic/claude", 0)
    assert path.parts[:3] == ("/", "r", "cases")
    assert path.parts[3] == "suite" and path.parts[4].startswith("case_one-")
    assert path.name == "attempt-1"


def test_case_kinds() -> None:
    assert CASE_KINDS == ("review", "verify", "rubric", "task")


def test_a_check_summary_names_ten_files_and_counts_the_rest() -> None:
    # An agent that writes 100,000 files made each report's reason line 1.3 MB.
    many = [f"junk/f{n}" for n in range(100_000)]
    check = Check.model_validate(
        {"id": "changed_files", "kind": "changed_files", "status": "fail", "unexpectedFiles": many}
    )
    summary = check_summary(check)
    assert summary.startswith("unexpected: junk/f0, junk/f1,") and len(summary) < 200
    assert summary.endswith("junk/f9 and 99,990 more")
    assert check.model_extra is not None and len(check.model_extra["unexpectedFiles"]) == 100_000
    few = check.model_copy(update={"unexpectedFiles": ["a.py", "b.py"]})
    assert check_summary(few) == "unexpected: a.py, b.py"


def test_names_under_a_directory_of_a_sorted_listing() -> None:
    from assay.core.paths import names_under

    names = sorted(["conf", "conf-x/a", "conf/a.py", "conf/sub/b.py", "confx", "z"])
    assert list(names_under(names, "conf")) == ["conf/a.py", "conf/sub/b.py"]
    assert list(names_under(names, "conf/")) == ["conf/a.py", "conf/sub/b.py"]
    assert list(names_under(names, "nothing")) == []
