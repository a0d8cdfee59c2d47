"""Helpers shared by the scaffold tests (no tests here): real git repos, a fake PR made
from one, the CLI, and directory snapshots."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.isolation.git import git_environment
from tests.fakes.github import FakeGitHub
from tests.fakes.github_contents import Symlink, add_contents_routes, add_tree, pr_file

REPOSITORY = "acme/widgets"
PR_URL = f"https://github.com/{REPOSITORY}/pull/7"
TITLE = "Fix: replay DELETE accepts project:read scope"
LICENSE_TEXT = "MIT License\n\nCopyright (c) acme\n"
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
SIZE_CAP = 1000
BINARY_HEAD_REASON = (
    "not in input.diff: binary content (a NUL byte, or not valid UTF-8) on the head side: "
    "input.diff is text, and `git apply` (which Cassandra's sandbox runs on it) refuses a "
    "`Binary files ... differ` line"
)
BASE_SHA, HEAD_SHA = "b" * 40, "e" * 40

Files = Mapping[str, bytes | str | None]
ServedFiles = Mapping[str, bytes | str | Symlink]


def git(repo: Path, *args: str) -> str:
    """Real git in `repo`, without the developer's config; stdout."""
    result = subprocess.run(
        ["git", *args],
        cwd=repo,
        env=git_environment(ceiling=repo.parent),
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr.decode()}")
    return result.stdout.decode("utf-8", "replace")


def commit(repo: Path, files: Files, message: str) -> str:
    """Apply `files` (None deletes) on top of the work tree and commit; return the SHA."""
    for path, content in files.items():
        target = repo / path
        if content is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def make_repo(path: Path, base: Files, head: Files, *, title: str = TITLE) -> tuple[str, str]:
    """A clone at `path` with two commits: `base`, then `head` on top; their SHAs."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "remote", "add", "origin", f"https://github.com/{REPOSITORY}.git")
    base_sha = commit(path, base, "base state")
    head_sha = commit(path, head, f"{title}\n\nThe body of the change.")
    return base_sha, head_sha


def app_source(tag: str) -> str:
    lines = [f"# {tag}", "def delete_replay(request, replay):"]
    lines += [f"    step_{i} = request.args.get('k{i}')" for i in range(12)]
    lines += ["    return replay.delete()", ""]
    return "\n".join(lines)


def mixed_change(path: Path) -> tuple[str, str]:
    """A change with every kind of file: modified, renamed, removed, added, binary, big."""
    renamed = app_source("helpers")
    base: Files = {
        "LICENSE": LICENSE_TEXT,
        "README.md": "# widgets\n",
        "src/app.py": app_source("app"),
        "src/old_name.py": renamed,
        "src/gone.py": "GONE = True\n",
        "assets/logo.png": BINARY,
        "data/big.txt": "x" * 60 + "\n" + "line\n" * 400,
    }
    head: Files = {
        "src/app.py": app_source("app").replace("return replay.delete()", "check(request)\n"),
        "src/old_name.py": None,
        "src/new_name.py": renamed.replace("# helpers", "# helpers, renamed"),
        "src/gone.py": None,
        "src/added.py": "ADDED = 1\n",
        "assets/logo.png": BINARY + b"\x00more",
        "data/big.txt": "y" * 60 + "\n" + "line\n" * 400,
    }
    return make_repo(path, base, head)


def tree_at(repo: Path, ref: str) -> dict[str, bytes]:
    listing = git(repo, "ls-tree", "-r", "-z", "--name-only", ref).split("\0")
    return {
        name: subprocess.run(
            ["git", "cat-file", "blob", f"{ref}:{name}"],
            cwd=repo,
            env=git_environment(ceiling=repo.parent),
            capture_output=True,
            check=True,
        ).stdout
        for name in listing
        if name
    }


def pull_from_repo(
    fake: FakeGitHub,
    repo: Path,
    base: str,
    head: str,
    *,
    number: int = 7,
    title: str = TITLE,
    body: str = "Fixes the scope check.",
) -> None:
    """Make the fake serve `base..head` of the real `repo` as pull request `number`."""
    add_tree(fake, REPOSITORY, base, tree_at(repo, base))
    add_tree(fake, REPOSITORY, head, tree_at(repo, head))
    statuses = {"A": "added", "D": "removed", "M": "modified", "R": "renamed"}
    fields = git(repo, "diff", "--name-status", "-z", "-M", base, head).split("\0")
    files = []
    while fields and fields[0]:
        code = fields.pop(0)
        previous = fields.pop(0) if code[0] == "R" else None
        name = fields.pop(0)
        diff = _file_section(repo, base, head, previous or name, name)
        hunks = diff[diff.index("\n@@") + 1 :].rstrip("\n") if "\n@@" in diff else None
        files.append(pr_file(name, statuses[code[0]], previous_filename=previous, patch=hunks))
    fake.add_pull(REPOSITORY, number, title=title, body=body, base_sha=base, head_sha=head,
                  files=files)  # fmt: skip


def _file_section(repo: Path, base: str, head: str, old: str, new: str) -> str:
    """git's diff of one file, the way GitHub lists it: only its own section (a path
    given to `git diff` also names what lies under it, when it is a directory on the other
    side)."""
    diff = git(repo, "diff", "-U3", "-M", base, head, "--", *dict.fromkeys((old, new)))
    sections = ["diff --git " + s for s in ("\n" + diff).split("\ndiff --git ")[1:]]
    (own,) = (s for s in sections if s.startswith(f"diff --git a/{old} b/{new}\n"))
    return own


def simple_pull(
    fake: FakeGitHub,
    base_files: ServedFiles,
    *,
    pr_files: list[dict[str, Any]] | None = None,
    head_files: ServedFiles | None = None,
) -> None:
    """Pull request 7 from BASE_SHA to HEAD_SHA (the same files, unless `head_files`),
    changing src/app.py unless `pr_files` says otherwise."""
    add_tree(fake, REPOSITORY, BASE_SHA, base_files)
    add_tree(fake, REPOSITORY, HEAD_SHA, base_files if head_files is None else head_files)
    files = pr_files or [pr_file("src/app.py", patch="@@ -1 +1 @@\n-old\n+new")]
    fake.add_pull(REPOSITORY, 7, title=TITLE, base_sha=BASE_SHA, head_sha=HEAD_SHA, files=files)


@contextmanager
def serving(monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> Iterator[FakeGitHub]:
    """A started GitHub fake with the content routes, which GITHUB_API_URL points at."""
    fake = FakeGitHub(**kwargs)  # type: ignore[arg-type]
    add_contents_routes(fake)
    with fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        yield fake


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (missing root: empty), to show that nothing was written."""
    if not root.exists():
        return {}
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def apply_case_diff(case_dir: Path, work: Path) -> dict[str, bytes]:
    """Copy a rubric case's base/ into a fresh repo, `git apply` its input.diff (as
    Cassandra's sandbox does), return the resulting files."""
    shutil.copytree(case_dir / "base", work)
    git(work, "init", "-q")
    git(work, "apply", "--whitespace=nowarn", str(case_dir / "input.diff"))
    return {k: v for k, v in snapshot(work).items() if not k.startswith(".git/")}


def fill_in_rubrics(
    manifest: Path, rubric: str = "Flags that DELETE accepts project:read."
) -> None:
    """Replace each scaffold's TODO rubric in `manifest` (other cases keep theirs)."""
    document = json.loads(manifest.read_text())
    for case in document["cases"]:
        if str(case.get("rubric", "")).startswith("TODO"):
            case["rubric"] = rubric
    manifest.write_text(json.dumps(document, indent=2))
