"""Review and verify sandboxes: Warden's main/eval repo, built with real git checks."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from assay.errors import SandboxError
from assay.isolation.git import git_environment
from assay.suites.case import FixtureFile, ReviewSpec, VerifySpec
from assay.workspace import SKILL_DIR, Sandbox, build_sandbox, remove_sandbox
from tests.test_sandbox_helpers import assert_healthy, git, make_case, source_lines, write


@pytest.fixture
def evals(tmp_path: Path) -> Path:
    """A Warden eval root: a skill, a license, and GitHub-captured and hand-written fixtures."""
    root = tmp_path / "evals"
    write(root / "skills" / "bug-detection.md", "# Bug detection\nFind bugs.\n")
    write(root / "fixtures" / "authz" / "LICENSE", "MIT License\n")
    captured = root / "fixtures" / "authz" / "github" / "getsentry" / "sentry"
    write(captured / "src" / "api" / "details.py", source_lines(30, tag="details"))
    write(captured / "src" / "api" / "helpers.py", source_lines(20, tag="helpers"))
    write(root / "fixtures" / "null-access" / "handler.ts", source_lines(25, tag="handler"))
    write(root / "fixtures" / "null-access" / "run.sh", "#!/bin/sh\necho hi\n", executable=True)
    return root


def _spec(evals: Path, **overrides: object) -> ReviewSpec:
    captured = evals / "fixtures" / "authz" / "github" / "getsentry" / "sentry"
    fields: dict[str, object] = {
        "given": "replay endpoint grants DELETE to project:read",
        # The loader maps fixtures/<case>/github/<owner>/<repo>/<path> to <case>/<path>.
        "files": (
            FixtureFile(captured / "src" / "api" / "details.py", "authz/src/api/details.py"),
            FixtureFile(captured / "src" / "api" / "helpers.py", "authz/src/api/helpers.py"),
        ),
        "supporting_files": (
            FixtureFile(evals / "fixtures" / "authz" / "LICENSE", "authz/LICENSE"),
        ),
        "skill": evals / "skills" / "bug-detection.md",
        "repository": "getsentry/sentry",
    }
    fields.update(overrides)
    return ReviewSpec(**fields)  # type: ignore[arg-type]


def _build(tmp_path: Path, spec: ReviewSpec | VerifySpec, **kwargs: object) -> Sandbox:
    parent = tmp_path / "work"
    parent.mkdir(exist_ok=True)
    kind = "verify" if isinstance(spec, VerifySpec) else "review"
    return build_sandbox(make_case(kind, spec), parent=parent, **kwargs)  # type: ignore[arg-type]


def test_review_sandbox_has_skill_and_support_on_main_and_fixtures_on_eval(
    tmp_path: Path, evals: Path
) -> None:
    sandbox = _build(tmp_path, _spec(evals))
    repo = sandbox.path

    assert sandbox.kind == "review"
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/eval"
    assert git(repo, "rev-parse", "main").strip() == sandbox.base_commit
    assert git(repo, "rev-parse", "HEAD").strip() == sandbox.head_commit
    assert git(repo, "rev-parse", "eval^").strip() == sandbox.base_commit
    # Warden's commit messages: its reviewer reads the tip's subject as the PR title.
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "install eval skill"
    assert git(repo, "log", "-1", "--format=%s", "eval").strip() == "add fixture: case-1"
    assert git(repo, "log", "-1", "--format=%b", "eval").strip() == ""
    assert git(repo, "ls-tree", "-r", "--name-only", "main").split() == [
        f"{SKILL_DIR}/bug-detection.md",
        "authz/LICENSE",
    ]
    assert sandbox.changed_files == ("authz/src/api/details.py", "authz/src/api/helpers.py")
    assert sandbox.diff == git(repo, "diff", "main...eval")
    assert "LICENSE" not in sandbox.diff and "bug-detection" not in sandbox.diff
    assert "+++ b/authz/src/api/details.py" in sandbox.diff
    assert (repo / "authz/src/api/details.py").read_text() == source_lines(30, tag="details")
    identity = git(repo, "log", "--format=%an <%ae> %at %cn <%ce> %ct", "-1").strip()
    assert identity == "assay <assay@localhost> 946684800 assay <assay@localhost> 946684800"
    assert_healthy(repo)


def test_origin_remote_is_configured_but_never_fetched(tmp_path: Path, evals: Path) -> None:
    sandbox = _build(tmp_path, _spec(evals))
    assert sandbox.repository == "getsentry/sentry"
    assert git(sandbox.path, "remote", "get-url", "origin").strip() == (
        "https://github.com/getsentry/sentry.git"
    )
    assert git(sandbox.path, "branch", "-r") == ""  # no remote-tracking refs: nothing fetched

    plain = _build(tmp_path, _spec(evals, repository=None))
    assert plain.repository is None
    assert git(plain.path, "remote") == ""


def test_repository_that_could_inject_config_is_refused(tmp_path: Path, evals: Path) -> None:
    with pytest.raises(SandboxError, match="owner/repo"):
        _build(tmp_path, _spec(evals, repository='a/b.git"\n[core]\n\thooksPath = /tmp'))
    assert list((tmp_path / "work").iterdir()) == []  # nothing left behind


def test_verify_sandbox_uses_the_same_recipe(tmp_path: Path, evals: Path) -> None:
    handler = evals / "fixtures" / "null-access" / "handler.ts"
    spec = VerifySpec(
        given="verifier keeps a null access",
        files=(FixtureFile(handler, "null-access/handler.ts"),),
        candidate={"title": "null access", "location": {"path": "null-access/handler.ts"}},
        expect_verdict="keep",
    )
    sandbox = _build(tmp_path, spec)
    assert sandbox.kind == "verify"
    assert sandbox.changed_files == ("null-access/handler.ts",)
    assert git(sandbox.path, "ls-tree", "-r", "--name-only", "main") == ""
    assert_healthy(sandbox.path)


def test_same_trees_and_diff_as_the_plain_git_recipe(tmp_path: Path, evals: Path) -> None:
    """Objects written by assay equal what `git add` + `git commit` produce, byte for byte."""
    spec = _spec(evals, files=(*_spec(evals).files, _fixture(evals, "run.sh")), skill=None)
    sandbox = _build(tmp_path, spec)

    plain = tmp_path / "plain"
    env = git_environment(ceiling=tmp_path)

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=plain, env=env, check=True, capture_output=True, text=True
        ).stdout

    plain.mkdir()
    run("init", "-q", "-b", "main")
    for fixture in spec.supporting_files:
        shutil.copy2(fixture.source, _dest(plain, fixture.dest))
    run("add", "-A")
    run("commit", "-q", "-m", "support")
    run("checkout", "-q", "-b", "eval")
    for fixture in spec.files:
        shutil.copy2(fixture.source, _dest(plain, fixture.dest))
    run("add", "-A")
    run("commit", "-q", "-m", "fixtures")

    for ref in ("main", "eval"):
        ours = git(sandbox.path, "rev-parse", f"{ref}^{{tree}}")
        assert ours == run("rev-parse", f"{ref}^{{tree}}")
    assert sandbox.diff == run("diff", "main...eval")
    assert "new file mode 100755" in sandbox.diff  # run.sh kept its executable bit


def _fixture(evals: Path, name: str) -> FixtureFile:
    return FixtureFile(evals / "fixtures" / "null-access" / name, f"null-access/{name}")


def _dest(repo: Path, dest: str) -> Path:
    path = repo / dest
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_builds_are_reproducible(tmp_path: Path, evals: Path) -> None:
    first = _build(tmp_path, _spec(evals))
    second = _build(tmp_path, _spec(evals))
    assert first.path != second.path
    assert (first.base_commit, first.head_commit, first.diff) == (
        second.base_commit,
        second.head_commit,
        second.diff,
    )
    # Pinned, so that the ids are the same on every machine and across assay versions:
    # a change here changes the commit ids of every existing suite's sandboxes (the last:
    # Warden's commit messages, `install eval skill` and `add fixture: <case>`).
    assert first.base_commit == "9688067d4663adba0dc1833a97f22977975e9d63"
    assert first.head_commit == "f984e52d09c86fd6a5de053c7746ecb4ebf15e53"


def test_sandbox_directory_is_private_and_removed(tmp_path: Path, evals: Path) -> None:
    sandbox = _build(tmp_path, _spec(evals))
    root = sandbox.root
    assert sandbox.path == root / "repo"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE(sandbox.scratch.stat().st_mode) == 0o700
    assert list(sandbox.scratch.iterdir()) == []
    assert sorted(p.name for p in root.iterdir()) == ["repo", "scratch"]

    (sandbox.path / "authz" / "notes.txt").write_text("agent output")
    locked = sandbox.path / "authz" / "src"
    locked.chmod(0o500)  # an agent may leave read-only directories behind
    remove_sandbox(sandbox)
    assert not root.exists()
    remove_sandbox(sandbox)  # already gone: nothing to do


def test_skill_md_brings_its_whole_directory(tmp_path: Path, evals: Path) -> None:
    skill_dir = tmp_path / "warden" / "builtin-skills" / "security-review"
    write(skill_dir / "SKILL.md", "# Security review\n")
    write(skill_dir / "references" / "authz.md", "check scopes\n")
    override = write(tmp_path / "override.md", "# Override\n")

    sandbox = _build(tmp_path, _spec(evals, skill=skill_dir / "SKILL.md"))
    assert git(sandbox.path, "ls-tree", "-r", "--name-only", "main").split() == [
        f"{SKILL_DIR}/security-review/SKILL.md",
        f"{SKILL_DIR}/security-review/references/authz.md",
        "authz/LICENSE",
    ]
    skill_copy = sandbox.path / SKILL_DIR / "security-review"
    assert (skill_copy / "references" / "authz.md").read_text() == "check scopes\n"

    overridden = _build(
        tmp_path, _spec(evals, skill=skill_dir / "SKILL.md"), skill_override=override
    )
    assert (overridden.path / SKILL_DIR / "override.md").read_text() == "# Override\n"
    assert not (overridden.path / SKILL_DIR / "SKILL.md").exists()


def test_fixture_over_a_supporting_file_is_a_modification(tmp_path: Path, evals: Path) -> None:
    old = write(tmp_path / "old.py", "x = 1\n")
    new = write(tmp_path / "new.py", "x = 2\n")
    spec = _spec(
        evals,
        supporting_files=(FixtureFile(old, "pkg/mod.py"),),
        files=(FixtureFile(new, "pkg/mod.py"),),
    )
    sandbox = _build(tmp_path, spec)
    assert sandbox.changed_files == ("pkg/mod.py",)
    assert "-x = 1\n+x = 2\n" in sandbox.diff
    assert (sandbox.path / "pkg" / "mod.py").read_text() == "x = 2\n"
    assert_healthy(sandbox.path)


@pytest.mark.parametrize(
    ("dest", "message"),
    [
        ("../outside.py", r"'\.\.'"),
        ("/etc/passwd", "absolute"),
        (".git/hooks/post-checkout", r"inside \.git"),
        ("pkg/.GIT/config", r"inside \.git"),
    ],
)
def test_fixture_destinations_cannot_escape(
    tmp_path: Path, evals: Path, dest: str, message: str
) -> None:
    source = evals / "fixtures" / "null-access" / "handler.ts"
    with pytest.raises(SandboxError, match=message):
        _build(tmp_path, _spec(evals, files=(FixtureFile(source, dest),)))
    assert list((tmp_path / "work").iterdir()) == []


def test_conflicting_destinations_are_refused(tmp_path: Path, evals: Path) -> None:
    a = write(tmp_path / "a.py", "a\n")
    b = write(tmp_path / "b.py", "b\n")
    with pytest.raises(SandboxError, match="would both land at pkg/x.py"):
        _build(
            tmp_path, _spec(evals, files=(FixtureFile(a, "pkg/x.py"), FixtureFile(b, "pkg/x.py")))
        )
    with pytest.raises(SandboxError, match="to be a directory"):
        _build(tmp_path, _spec(evals, files=(FixtureFile(a, "pkg"), FixtureFile(b, "pkg/x.py"))))


def test_missing_fixture_is_a_sandbox_error(tmp_path: Path, evals: Path) -> None:
    with pytest.raises(SandboxError, match="cannot read fixture .*gone.py"):
        _build(tmp_path, _spec(evals, files=(FixtureFile(tmp_path / "gone.py", "gone.py"),)))
    assert list((tmp_path / "work").iterdir()) == []


def test_unicode_and_spaces_in_paths(tmp_path: Path, evals: Path) -> None:
    source = write(tmp_path / "src.py", "print('hi')\n")
    names = ("docs/read me.md", 'src/naïve "quoted".py', "src/tab\tname.py")
    sandbox = _build(tmp_path, _spec(evals, files=tuple(FixtureFile(source, n) for n in names)))
    assert set(sandbox.changed_files) == set(names)
    assert sandbox.diff == git(sandbox.path, "diff", "main...eval")
    assert_healthy(sandbox.path)


def test_fixture_that_is_not_a_regular_file_is_refused(tmp_path: Path, evals: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(SandboxError, match="pipe is not a regular file"):
        _build(tmp_path, _spec(evals, files=(FixtureFile(tmp_path / "pipe", "x/pipe"),)))
    with pytest.raises(SandboxError, match="not a regular file"):
        _build(tmp_path, _spec(evals, files=(FixtureFile(evals / "fixtures", "x/dir"),)))
