"""The builtin agent's sandbox tools: confinement, caps and bounds, on a real git checkout."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import pytest

from assay.agents import _search
from assay.agents.tools import OUTSIDE, SandboxTools, ToolLimits, ToolResult


def call(tools: SandboxTools, name: str, **arguments: object) -> ToolResult:
    return asyncio.run(tools.call(name, arguments))


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        "import os\n\ndef handler(user):\n    return user.name\n", encoding="utf-8"
    )
    (root / "src" / "pkg" / "util.ts").write_text(
        "export const TOKEN_TTL = 30;\n", encoding="utf-8"
    )
    (root / "README.md").write_text("# demo\nhandler docs\n", encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00handler")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return root


@pytest.fixture()
def tools(repo: Path) -> SandboxTools:
    return SandboxTools(repo)


# -- confinement ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "src/../../outside.txt"])
@pytest.mark.parametrize("tool", ["read_file", "list_dir", "grep"])
def test_paths_leaving_the_sandbox_are_refused(tools: SandboxTools, tool: str, path: str) -> None:
    arguments: dict[str, object] = {"path": path}
    if tool == "grep":
        arguments["pattern"] = "root"
    result = call(tools, tool, **arguments)
    assert result.is_error
    assert OUTSIDE in result.content
    assert "root:x:0" not in result.content


def test_symlink_planted_inside_pointing_outside_is_refused(
    repo: Path, tools: SandboxTools, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("root: outside\n", encoding="utf-8")
    (repo / "passwd").symlink_to("/etc/passwd")
    (repo / "etc").symlink_to("/etc", target_is_directory=True)
    (repo / "src" / "up").symlink_to("../..", target_is_directory=True)
    for tool, path in [
        ("read_file", "passwd"),
        ("read_file", "etc/passwd"),
        ("list_dir", "etc"),
        ("read_file", "src/up/secret.txt"),
        ("list_dir", "src/up"),
    ]:
        result = call(tools, tool, path=path)
        assert result.is_error, (tool, path)
        assert OUTSIDE in result.content
        assert "root:" not in result.content
    # A link that leaves and comes back in resolves inside: that is allowed.
    assert not call(tools, "read_file", path="src/up/repo/README.md").is_error


def test_grep_and_glob_do_not_follow_links_out_of_the_sandbox(
    repo: Path, tools: SandboxTools, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("handler = 'outside secret'\n", encoding="utf-8")
    (repo / "linked").symlink_to(outside, target_is_directory=True)
    (repo / "leak.py").symlink_to(outside / "secret.py")
    grep = call(tools, "grep", pattern="outside secret")
    assert not grep.is_error
    assert grep.content == "no matches"
    listed = call(tools, "glob", pattern="**/*.py")
    assert "linked/secret.py" not in listed.content


def test_symlink_inside_the_sandbox_is_followed(repo: Path, tools: SandboxTools) -> None:
    (repo / "alias.py").symlink_to("src/app.py")
    result = call(tools, "read_file", path="alias.py")
    assert not result.is_error
    assert "def handler(user):" in result.content


def test_git_directory_is_hidden(repo: Path, tools: SandboxTools) -> None:
    assert (repo / ".git" / "HEAD").is_file()
    read = call(tools, "read_file", path=".git/HEAD")
    assert read.is_error and ".git" in read.content
    assert call(tools, "list_dir", path=".git").is_error
    assert ".git" not in call(tools, "list_dir").content.split("\n")
    assert ".git" not in call(tools, "glob", pattern="**").content
    assert call(tools, "grep", pattern="refs/heads").content == "no matches"
    (repo / "head").symlink_to(".git/HEAD")
    assert call(tools, "read_file", path="head").is_error


# -- read_file ------------------------------------------------------------------------------


def test_read_file_numbers_lines_and_reads_ranges(tools: SandboxTools) -> None:
    whole = call(tools, "read_file", path="src/app.py")
    assert whole.content.splitlines() == [
        "     1\timport os",
        "     2\t",
        "     3\tdef handler(user):",
        "     4\t    return user.name",
    ]
    part = call(tools, "read_file", path="./src/app.py", start_line=3, end_line=3)
    assert part.content == "     3\tdef handler(user):\n"
    assert call(tools, "read_file", path="src/app.py", start_line=9).is_error
    assert call(tools, "read_file", path="src/app.py", start_line=3, end_line=2).is_error


def test_read_file_caps_lines_with_a_continuation_note(repo: Path) -> None:
    (repo / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 51)), encoding="utf-8")
    tools = SandboxTools(repo, limits=ToolLimits(read_max_lines=20))
    first = call(tools, "read_file", path="big.txt")
    assert "line 20" in first.content and "line 21" not in first.content
    assert "start_line=21" in first.content
    rest = call(tools, "read_file", path="big.txt", start_line=41)
    assert rest.content.splitlines()[-1] == "    50\tline 50"


def test_read_file_caps_bytes(repo: Path) -> None:
    (repo / "wide.txt").write_text(("x" * 1000 + "\n") * 400, encoding="utf-8")
    result = call(SandboxTools(repo), "read_file", path="wide.txt")
    assert len(result.content) <= 256 * 1024 + 200
    assert "[truncated at line" in result.content


def test_read_file_cuts_over_long_lines(repo: Path) -> None:
    (repo / "bundle.min.js").write_text("var a=1;" * 100_000 + "\nsecond line\n", encoding="utf-8")
    result = call(SandboxTools(repo), "read_file", path="bundle.min.js")
    first, second = result.content.splitlines()
    assert first.endswith("[line cut at 2000 bytes]") and len(first) < 2100
    assert second == "     2\tsecond line"


def test_read_file_refuses_binary_directories_and_missing_files(tools: SandboxTools) -> None:
    assert "binary" in call(tools, "read_file", path="logo.png").content
    assert "directory" in call(tools, "read_file", path="src").content
    missing = call(tools, "read_file", path="nope.py")
    assert missing.is_error and "no such file" in missing.content


def test_invalid_input_is_an_error_result(tools: SandboxTools) -> None:
    assert "invalid input" in call(tools, "read_file").content
    assert "invalid input" in call(tools, "read_file", path="a", colour="red").content
    assert "unknown tool" in asyncio.run(tools.call("rm", {"path": "x"})).content


# -- grep -----------------------------------------------------------------------------------


def test_grep_finds_lines_with_path_and_number(tools: SandboxTools) -> None:
    result = call(tools, "grep", pattern=r"def \w+\(")
    assert result.content == "src/app.py:3: def handler(user):"
    everywhere = call(tools, "grep", pattern="handler", ignore_case=True)
    assert everywhere.content.splitlines() == [
        "README.md:2: handler docs",
        "src/app.py:3: def handler(user):",
    ]  # the binary logo.png also contains "handler" and is skipped


def test_grep_filters_by_glob_and_directory(tools: SandboxTools) -> None:
    assert call(tools, "grep", pattern="TOKEN", glob="*.ts").content.startswith("src/pkg/util.ts:1")
    assert call(tools, "grep", pattern="TOKEN", glob="*.py").content == "no matches"
    assert call(tools, "grep", pattern="handler", path="src").content.startswith("src/app.py:3")
    assert call(tools, "grep", pattern="handler", path="src/app.py").content.startswith("src/")


def test_grep_invalid_regex_is_an_error_result(tools: SandboxTools) -> None:
    result = call(tools, "grep", pattern="([unclosed")
    assert result.is_error
    assert "invalid regular expression" in result.content


def test_grep_stops_at_the_match_cap(repo: Path) -> None:
    (repo / "many.txt").write_text("hit\n" * 50, encoding="utf-8")
    result = call(SandboxTools(repo, limits=ToolLimits(grep_max_matches=10)), "grep", pattern="hit")
    assert len([line for line in result.content.splitlines() if line.startswith("many")]) == 10
    assert "stopped at 10 matches" in result.content


def test_grep_skips_files_over_the_size_cap(repo: Path) -> None:
    (repo / "huge.log").write_text("needle\n" + "x" * 5000, encoding="utf-8")
    result = call(
        SandboxTools(repo, limits=ToolLimits(grep_max_file_bytes=1000)), "grep", pattern="needle"
    )
    assert result.content.startswith("no matches")
    assert "not searched" in result.content


@pytest.mark.slow
def test_grep_with_catastrophic_backtracking_is_stopped_at_its_budget(repo: Path) -> None:
    (repo / "evil.txt").write_text("a" * 40 + "!\n", encoding="utf-8")
    tools = SandboxTools(repo, limits=ToolLimits(search_time_budget_s=0.5))
    started = time.monotonic()
    result = call(tools, "grep", pattern=r"^(a+)+$")
    assert time.monotonic() - started < 5
    assert not result.is_error
    assert "time budget" in result.content


# -- glob and list_dir ----------------------------------------------------------------------------


def test_glob_matches_across_directories(tools: SandboxTools) -> None:
    assert call(tools, "glob", pattern="**/*.py").content == "src/app.py"
    assert call(tools, "glob", pattern="*.ts").content == "src/pkg/util.ts"
    assert call(tools, "glob", pattern="src/*").content == "src/app.py"
    assert call(tools, "glob", pattern="src/**").content.splitlines() == [
        "src/app.py",
        "src/pkg/util.ts",
    ]
    assert call(tools, "glob", pattern="*.rs").content == "no files match"
    assert call(tools, "glob", pattern="../*").is_error


@pytest.mark.slow
def test_a_glob_that_backtracks_for_ever_is_stopped_at_its_budget(repo: Path) -> None:
    # The model writes the pattern; a glob is matched as a regex, which cannot be interrupted.
    deep = repo.joinpath(*["a"] * 30)
    deep.mkdir(parents=True)
    (deep / "b").write_text("x", encoding="utf-8")
    tools = SandboxTools(repo, limits=ToolLimits(search_time_budget_s=0.5))
    started = time.monotonic()
    result = call(tools, "glob", pattern="**/" * 16 + "z")
    assert time.monotonic() - started < 5
    assert not result.is_error
    assert "time budget" in result.content and "partial" in result.content


def test_glob_classes_mean_what_they_list_and_a_bad_one_is_an_error_result(repo: Path) -> None:
    for name in ("[x].txt", "]a.txt", "&.txt", "b.txt"):
        (repo / name).write_text("x", encoding="utf-8")
    tools = SandboxTools(repo)
    assert call(tools, "glob", pattern="[]]a.txt").content == "]a.txt"  # `]` first is a member
    assert call(tools, "glob", pattern="[[]x].txt").content == "[x].txt"
    assert call(tools, "glob", pattern="[&&].txt").content == "&.txt"
    assert call(tools, "glob", pattern="[!]&[]*.txt").content == "b.txt"
    assert call(tools, "glob", pattern="[]").content == "no files match"  # unclosed: literal
    for result in (
        call(tools, "glob", pattern="[z-a].txt"),
        call(tools, "grep", pattern="x", glob="[z-a]*"),
    ):
        assert result.is_error and "invalid glob pattern '[z-a]" in result.content, result


def test_a_search_worker_that_crashes_is_an_error_result_naming_its_last_line(
    tools: SandboxTools, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def crashed(request: object, budget_s: float) -> _search.SearchOutcome:
        return _search.SearchOutcome([], None, False, f"Traceback\nOSError: {repo}/src gone\n")

    monkeypatch.setattr(_search, "run_search_process", crashed)
    for name, arguments in (("grep", {"pattern": "x"}), ("glob", {"pattern": "*.py"})):
        result = call(tools, name, **arguments)
        assert result.is_error and result.content == f"{name} failed: OSError: src gone"


def test_glob_is_capped(repo: Path) -> None:
    for i in range(30):
        (repo / f"f{i:02}.txt").write_text("x", encoding="utf-8")
    result = call(
        SandboxTools(repo, limits=ToolLimits(glob_max_results=5)), "glob", pattern="*.txt"
    )
    assert result.content.splitlines()[:5] == [
        "f00.txt",
        "f01.txt",
        "f02.txt",
        "f03.txt",
        "f04.txt",
    ]
    assert "capped at 5" in result.content


def test_list_dir_marks_directories(tools: SandboxTools) -> None:
    assert call(tools, "list_dir").content.splitlines() == ["README.md", "logo.png", "src/"]
    assert call(tools, "list_dir", path="src").content.splitlines() == ["app.py", "pkg/"]
    assert call(tools, "list_dir", path="src/app.py").is_error


def test_a_symlink_loop_does_not_break_the_listing(tools: SandboxTools, repo: Path) -> None:
    (repo / "src" / "loop").symlink_to("loop")
    assert call(tools, "list_dir", path="src").content.splitlines() == ["app.py", "loop", "pkg/"]


def test_tool_specs_have_plain_schemas() -> None:
    specs = {spec.name: spec for spec in SandboxTools.specs()}
    assert set(specs) == {"read_file", "grep", "glob", "list_dir"}
    schema = specs["read_file"].input_schema
    assert schema["required"] == ["path"]
    assert schema["additionalProperties"] is False
    assert "$defs" not in str(specs) and "title" not in schema
    assert schema["properties"]["path"]["description"]


def test_sandbox_root_given_through_a_symlink(repo: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(repo, alias)
    assert "def handler" in call(SandboxTools(alias), "read_file", path="src/app.py").content


def test_grep_over_a_symlink_into_git_is_refused_like_read_file(
    repo: Path, tools: SandboxTools
) -> None:
    (repo / "leak").symlink_to(".git/HEAD")
    (repo / "cfg").symlink_to(".git", target_is_directory=True)
    assert call(tools, "read_file", path="leak").is_error
    assert call(tools, "grep", pattern="refs/heads").content == "no matches"
    named = call(tools, "grep", pattern="refs/heads", path="leak")
    assert named.is_error and ".git" in named.content


def test_tool_errors_name_repository_paths_never_host_paths(
    repo: Path, tools: SandboxTools, tmp_path: Path
) -> None:
    (repo / "out").symlink_to(tmp_path)
    host = str(tmp_path)
    for tool, arguments in [
        ("read_file", {"path": "out/x.txt"}),
        ("list_dir", {"path": "out"}),
        ("grep", {"pattern": "x", "path": "out"}),
        ("read_file", {"path": "../x"}),
    ]:
        result = call(tools, tool, **arguments)
        assert result.is_error, (tool, arguments)
        assert host not in result.content and str(repo) not in result.content, result.content
