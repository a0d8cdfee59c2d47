"""Helpers shared by the sandbox tests (no tests here): cases, files, and real git."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TypeAlias

from assay.isolation.git import git_environment
from assay.suites.case import Case, CaseKind, ReviewSpec, RubricSpec, TaskSpec, VerifySpec

Spec: TypeAlias = ReviewSpec | VerifySpec | RubricSpec | TaskSpec
FORMATS = {
    "review": "review-yaml",
    "verify": "verification",
    "rubric": "rubric-manifest",
    "task": "task-suite",
}


def make_case(
    kind: CaseKind, spec: Spec, *, name: str = "case-1", root: Path | None = None
) -> Case:
    return Case(
        id=f"suite/{name}",
        suite="suite",
        name=name,
        kind=kind,
        format=FORMATS[kind],  # type: ignore[arg-type]
        source_path=(root or Path("/nonexistent")) / "suite.yaml",
        source_line=1,
        spec=spec,
        root=root,
    )


def write(path: Path, content: str | bytes, *, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    path.chmod(0o755 if executable else 0o644)
    return path


def source_lines(count: int, *, tag: str) -> str:
    """A realistic-looking TypeScript fixture of `count` lines."""
    body = [f"// {tag}: generated fixture", "export function handler(users: User[], id: string) {"]
    body += [
        f"  const value{i} = users.find((u) => u.id === id)?.name ?? '{tag}-{i}';"
        for i in range(count - 3)
    ]
    body.append("}")
    return "\n".join(body) + "\n"


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run real git in `repo` without the developer's config; return stdout."""
    result = subprocess.run(
        ["git", *args],
        cwd=repo,
        env=git_environment(ceiling=repo.parent),
        capture_output=True,
        text=True,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def assert_healthy(repo: Path) -> None:
    """The repo passes `git fsck --strict` and its work tree matches HEAD exactly."""
    git(repo, "fsck", "--strict", "--no-dangling")
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(repo, "diff", "HEAD", "--stat") == ""
