"""Names, portable paths, PR URLs and the all-or-nothing writer of `assay scaffold`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.scaffold.layout import (
    PathAllocator,
    check_name,
    fixture_repo_dir,
    sanitise_path,
    slugify,
    without_controls,
)
from assay.scaffold.url import parse_pull_request_url
from assay.scaffold.writer import WritePlan, write_plan
from assay.suites.warden import fixture_destination
from tests.scaffold.test_helpers import snapshot


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Fix: DELETE needs project:write", "fix-delete-needs-project-write"),
        ("  [security] Überprüfung der Rechte!  ", "security-uberprufung-der-rechte"),
        ("ref(replays): drop `read` scope -- again", "ref-replays-drop-read-scope-again"),
        ("!!!", "pr-12"),
        ("安全修复", "pr-12"),
        ("word " * 40, ("word-" * 16).rstrip("-")),
    ],
)
def test_slugify(title: str, slug: str) -> None:
    result = slugify(title, fallback="pr-12")
    assert result == slug
    assert len(result) <= 80 and check_name(result, option="--name") == result


@pytest.mark.parametrize("good", ["a", "A.b_c-9", "x..y", "fixtures-2", "my.base"])
def test_names_that_are_allowed(good: str) -> None:
    assert check_name(good, option="--name") == good


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "a b", "a\\b", "é", "a\n"])
def test_names_that_are_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="is not allowed: use letters, digits"):
        check_name(bad, option="--category")


@pytest.mark.parametrize("bad", ["fixtures", "base", "skills", "node_modules", ".hidden", "..."])
def test_names_discovery_never_walks_are_refused(bad: str) -> None:
    """`assay run -t` would find nothing: discovery skips these directories and hidden names."""
    with pytest.raises(ConfigError, match="is not allowed: `assay run` never looks at a name"):
        check_name(bad, option="--category")


@pytest.mark.parametrize("bad", ["-h", "-x", "--help", "-"])
def test_names_that_would_read_as_options_are_refused(bad: str) -> None:
    """`assay validate <root>/-h.json` would print help: the next steps would not work."""
    with pytest.raises(ConfigError, match="is not allowed: it may not start with '-'"):
        check_name(bad, option="--name")


def test_printable_names_keep_everything_but_control_characters() -> None:
    name = "bin\n::error file=x::injected\x1b]0;title\x07\x1b[2J\x9b31m\x7f é.py"
    assert without_controls(name) == "bin_::error file=x::injected_]0;title__[2J_31m_ é.py"
    assert sanitise_path(name) == "bin___error file=x__injected_]0;title__[2J_31m_ é.py"


@pytest.mark.parametrize(
    ("path", "portable"),
    [
        ("src/app.py", "src/app.py"),
        ("a:b/c*d?.txt", "a_b/c_d_.txt"),
        ("dir/with\ttab|pipe<>", "dir/with_tab_pipe__"),
        ("notes.", "notes_"),
        ("trailing /x", "trailing_/x"),
        ("CON", "_CON"),
        ("lib/com1.h", "lib/_com1.h"),
        ("console.log", "console.log"),
        (".git/config", "_.git/config"),
        ("sub/.GIT", "sub/_.GIT"),
        (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
    ],
)
def test_paths_are_made_portable(path: str, portable: str) -> None:
    assert sanitise_path(path) == portable


def test_collisions_are_numbered_and_answers_are_stable() -> None:
    places = PathAllocator()
    assert places.place("README.md") == "README.md"
    assert places.place("readme.md") == "readme-2.md"
    assert places.place("ReadMe.md") == "ReadMe-3.md"
    assert places.place("a:b") == "a_b"
    assert places.place("a_b") == "a_b-2"
    assert places.place(".env") == ".env"
    assert places.place(".ENV") == ".ENV-2"
    assert places.place("lib.tar.gz") == "lib.tar.gz"
    assert places.place("LIB.tar.gz") == "LIB-2.tar.gz"
    # A file where another path needs a directory, and the other way round.
    assert places.place("src") == "src"
    assert places.place("SRC/main.py") == "SRC-2/main.py"
    assert places.place("pkg/mod.py") == "pkg/mod.py"
    assert places.place("PKG") == "PKG-2"
    assert places.place("readme.md") == "readme-2.md"


def test_paths_only_collide_with_paths_on_the_same_side() -> None:
    sides = {"conf": {"base"}, "conf/main.py": {"head"}, "README": {"base"}, "readme": {"head"}}
    places = PathAllocator(trees=sides)
    # A file the change deletes and what it adds in its place never exist together.
    assert [places.place(p) for p in sides] == ["conf", "conf/main.py", "README", "readme"]
    # A path the sides do not name (the license) is on both, so it collides with either.
    assert places.place("Conf") == "Conf-2"
    assert PathAllocator().place("conf") == "conf"


@pytest.mark.parametrize(
    ("repository", "path", "placed"),
    [
        ("acme/widgets", "evals/fixtures/case1/handler.py", "evals/_fixtures/case1/handler.py"),
        (
            "acme/widgets",
            "a/evals/fixtures/evals/fixtures/b",
            "a/evals/_fixtures/evals/_fixtures/b",
        ),
        ("acme/evals", "fixtures/x.py", "_fixtures/x.py"),
        ("acme/widgets", "tests/fixtures/conf.py", "tests/fixtures/conf.py"),
        ("acme/widgets", "fixtures/evals/x.py", "fixtures/evals/x.py"),
        ("acme/widgets", "Evals/fixtures/x.py", "Evals/fixtures/x.py"),
    ],
)
def test_a_review_fixture_lands_where_the_scaffold_placed_it(
    repository: str, path: str, placed: str
) -> None:
    """Warden's own rule (`fixture_destination`) reads each placed fixture back to
    `<case>/<placed path>` and its repository."""
    fixture_dir = fixture_repo_dir("case", repository)
    assert PathAllocator(warden_fixture_dir=fixture_dir).place(path) == placed
    assert fixture_destination(fixture_dir / placed, parent="x") == (f"case/{placed}", repository)
    assert PathAllocator().place(path) == path  # a rubric case has no such rule


@pytest.mark.parametrize(
    ("url", "host", "number"),
    [
        ("https://github.com/getsentry/sentry/pull/12345", "github.com", 12345),
        ("https://github.com/getsentry/sentry/pull/12345/files", "github.com", 12345),
        ("https://github.com/getsentry/sentry/pull/1/commits/abc123", "github.com", 1),
        ("https://github.com/getsentry/sentry/pull/1/changes", "github.com", 1),
        ("https://www.github.com/getsentry/sentry/pull/1?x=1#y", "github.com", 1),
        ("github.com/getsentry/sentry/pull/2", "github.com", 2),
        ("  https://GitHub.com/getsentry/sentry/pull/3/  ", "github.com", 3),
        ("https://ghe.corp.example:8443/getsentry/sentry/pull/4", "ghe.corp.example:8443", 4),
        # A fully qualified name's trailing dot names the same host.
        ("https://github.com./getsentry/sentry/pull/5", "github.com", 5),
        ("https://GHE.corp.example.:8443/getsentry/sentry/pull/6", "ghe.corp.example:8443", 6),
    ],
)
def test_pull_request_urls(url: str, host: str, number: int) -> None:
    parsed = parse_pull_request_url(url)
    assert (parsed.host, parsed.full_name, parsed.number) == (host, "getsentry/sentry", number)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/getsentry/sentry",
        "https://github.com/getsentry/sentry/pull/",
        "https://github.com/getsentry/sentry/pull/0",
        "https://github.com/getsentry/sentry/pull/12x",
        "https://github.com/getsentry/sentry/pulls/12",
        "https://github.com/getsentry/sentry/issues/12",
        "https://github.com/getsentry/sentry/pull/12/blame",
        "https://github.com/../sentry/pull/12",
        "ftp://github.com/getsentry/sentry/pull/12",
        "https://user@github.com/getsentry/sentry/pull/12",
        "https://user@github.com./getsentry/sentry/pull/12",
        "https://github.com:badport/o/r/pull/1",
        "",
    ],
)
def test_malformed_pull_request_urls(url: str) -> None:
    with pytest.raises(ConfigError, match="expected https://github.com/OWNER/REPO/pull/NUMBER"):
        parse_pull_request_url(url)


def _plan(root: Path, files: dict[str, bytes], **kwargs: object) -> WritePlan:
    return WritePlan(root=root, files=files, **kwargs)  # type: ignore[arg-type]


def test_the_writer_creates_the_root_and_leaves_no_staging_behind(tmp_path: Path) -> None:
    root = tmp_path / "new" / "root"
    written = write_plan(_plan(root, {"a/b.txt": b"1", "c.json": b"{}"}), force=False)
    assert written == [root / "a/b.txt", root / "c.json"]
    assert snapshot(root) == {"a/b.txt": b"1", "c.json": b"{}"}
    assert sorted(os.listdir(root)) == ["a", "c.json"]


def test_a_failed_write_is_undone_completely(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "owned").mkdir(parents=True)
    (root / "owned" / "old.txt").write_text("old\n")
    (root / "keep.txt").write_text("keep\n")
    (root / "blocker").write_text("a file where a directory is needed\n")
    before = snapshot(root)
    plan = _plan(
        root,
        {"owned/new.txt": b"new", "keep.txt": b"replaced", "fresh/dir/x": b"x", "blocker/y": b"y"},
        owned_dirs=("owned",),
    )
    with pytest.raises(ConfigError, match="cannot write the scaffold under .*nothing was written"):
        write_plan(plan, force=True)
    assert snapshot(root) == before
    assert sorted(os.listdir(root)) == ["blocker", "keep.txt", "owned"]


def test_a_failed_write_into_a_new_root_removes_the_root(tmp_path: Path) -> None:
    root = tmp_path / "made" / "here"
    # `a` is written as a file, so `a/b` cannot be: the move fails half way.
    with pytest.raises(ConfigError, match=r"Not a directory \(a/b\); nothing was written"):
        write_plan(_plan(root, {"a": b"1", "a/b": b"2"}), force=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("force", [False, True])
def test_a_symlink_at_a_path_to_write_is_refused_by_name(tmp_path: Path, force: bool) -> None:
    """--force must not overwrite the file a suite file links to, nor empty a linked fixture
    directory of another case."""
    root = tmp_path / "root"
    (root / "shared").mkdir(parents=True)
    (root / "shared" / "important.json").write_text("keep\n")
    (root / "other").mkdir()
    (root / "other" / "precious.txt").write_text("other case\n")
    (root / "cat").mkdir()
    (root / "cat" / "n.json").symlink_to("../shared/important.json")
    (root / "owned").mkdir()
    (root / "owned" / "repo").symlink_to("../other")
    before = snapshot(root)
    plan = _plan(root, {"cat/n.json": b"{}", "owned/repo/a.py": b"a"}, owned_dirs=("owned",))
    with pytest.raises(ConfigError) as caught:
        write_plan(plan, force=force)
    assert str(caught.value) == (
        f"refusing to write through symlinks under {root}: cat/n.json, owned/repo (replace "
        "each with a real file or directory, or remove it); nothing was written"
    )
    assert snapshot(root) == before


def test_paths_escaping_the_root_through_a_symlink_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "fixtures").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="outside"):
        write_plan(_plan(root, {"fixtures/x.py": b"x"}), force=True)
    assert list((tmp_path / "elsewhere").iterdir()) == []


@pytest.mark.parametrize("below", ["x", "x/y"])
def test_a_root_below_a_regular_file_is_a_clear_error(tmp_path: Path, below: str) -> None:
    (tmp_path / "afile").write_text("not a directory\n")
    root = tmp_path / "afile" / below
    with pytest.raises(ConfigError) as caught:
        write_plan(_plan(root, {"c.json": b"{}"}), force=False)
    assert str(caught.value) == f"cannot write under {root}: Not a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
