"""Rubric sandboxes, Cassandra's recipe: the base state committed on `main`, `input.diff`
applied with `git apply` and committed on `eval`, HEAD = eval.

The whole base tree is in the repo, not just the files the diff touches: a rubric may
expect the reviewer to read, say, a directory's AGENTS.md. As Cassandra's `git add .`
does, files the base's `.gitignore` rules ignore are on disk but never committed. An
empty `input.diff` applies nothing: `eval` is the base commit itself; any other content
goes to `git apply` (whitespace alone fails there, as in Cassandra). The diff is bytes
throughout (git applies bytes; a diff that is not UTF-8 applies as Cassandra applies it).
As in Cassandra, it is written to `input.diff` at the root of the work tree (over a base
file of that name), applied from there and deleted before the change is committed: a
base's own `input.diff` is gone on `eval`, and a diff that creates `input.diff` fails
(one that edits it is applied to the diff's own text). A diff naming a path outside the
base (`..`, absolute) is refused before `git apply` sees it.

A base directory is copied as Go 1.24's `os.CopyFS` copies it (Cassandra pins Go
1.24.4): one holding a symlink, or any entry but a file or directory, fails the case
(`failed to copy base directory: CopyFS <path>: invalid argument`).

A failure reads as Cassandra's does (`SANDBOX_FAILURE`, and `failed to apply diff` for a
diff that does not apply), so its results file can say where the case failed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from assay._util.diff_paths import escaping_diff_paths
from assay._util.fixture_tree import copyfs_refusal
from assay.errors import SandboxError
from assay.isolation.git import git_message, git_output, run_git
from assay.suites.case import RubricSpec
from assay.upstream.go.json import go_text
from assay.workspace.built_sandbox import Sandbox
from assay.workspace.objects import Snapshot
from assay.workspace.repo import BASE_BRANCH, EVAL_BRANCH, RepoBuilder, branch_diff, changed_paths
from assay.workspace.worktree import WorkTree

__all__ = ["SANDBOX_FAILURE", "build_rubric_sandbox"]

SANDBOX_FAILURE = "failed to create sandbox"
"""How the message of a rubric sandbox that could not be built begins (Cassandra's words)."""

DIFF_NAME = "input.diff"
"""Where Cassandra writes the diff in the work tree to apply it (and deletes it after)."""
_TARBALL_SUFFIXES = (".tar.gz",)
"""Cassandra's sandbox takes a directory or a `.tar.gz` (a `.tgz` is refused)."""


def build_rubric_sandbox(spec: RubricSpec, repo: Path, *, staging: Path) -> Sandbox:
    """Build the rubric repo in the empty directory `repo`; `staging`: a free path to unpack in.

    Raises SandboxError, its message starting with `SANDBOX_FAILURE`.
    """
    try:
        return _build(spec, repo, staging=staging)
    except SandboxError as exc:
        raise SandboxError(f"{SANDBOX_FAILURE}: {exc}") from None
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        raise SandboxError(f"{SANDBOX_FAILURE}: {exc.strerror}{where}") from None


def _build(spec: RubricSpec, repo: Path, *, staging: Path) -> Sandbox:
    builder = RepoBuilder(repo, head_branch=EVAL_BRANCH)
    base = _base_state(builder.work, spec.base, staging=staging)
    base = _without(base, _ignored(repo))
    main = builder.commit(base, message="assay: base")
    builder.sync()
    diff = _diff_bytes(spec.diff)
    if diff:  # Cassandra skips `git apply` for an empty diff only
        _apply(repo, spec.diff, diff)
        scanned = builder.work.scan()
        # Tracked files stay tracked; what the rules ignore and was not in the base stays out.
        head = _without(scanned, _ignored(repo) - base.keys())
        tip = builder.commit(head, parents=[main], message="assay: apply input.diff")
    else:
        head, tip = base, main
    builder.check_out({BASE_BRANCH: main, EVAL_BRANCH: tip}, snapshot=head)
    return Sandbox(
        path=repo,
        kind="rubric",
        base_commit=main,
        head_commit=tip,
        diff=branch_diff(repo),
        changed_files=changed_paths(base, head),
        repository=None,
    )


def _base_state(work: WorkTree, base: Path | None, *, staging: Path) -> Snapshot:
    """Copy the base (directory or tarball) into the work tree; None is an empty base."""
    if base is None:
        return {}
    if base.is_dir():
        refused = copyfs_refusal(base)
        if refused is not None:
            shown = os.fsencode(refused).decode("utf-8", "replace")
            raise SandboxError(f"failed to copy base directory: CopyFS {shown}: invalid argument")
        return work.copy_tree(base)
    if not base.is_file():
        raise SandboxError(f"base state {base} does not exist")
    if not base.name.endswith(_TARBALL_SUFFIXES):
        raise SandboxError(f"base state {base} is neither a directory nor a .tar.gz")
    from assay._util.tarsafe import extract_tarball  # lazy: start-up (not loaded with this module)

    # Unpacked aside and copied in, so a tarball goes through the same checks as a
    # directory (symlinks, special files, `.git`) before anything lands in the repo.
    staging.mkdir(mode=0o700)
    try:
        try:
            extract_tarball(base, staging)
        except SandboxError as exc:
            raise SandboxError(f"failed to extract base tarball: {exc}") from None
        return work.copy_tree(staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _ignored(repo: Path) -> set[str]:
    """The work tree's files that its `.gitignore` rules ignore (git's own reading of them)."""
    listed = git_output(["ls-files", "--others", "--ignored", "--exclude-standard", "-z"], cwd=repo)
    return {name.decode("utf-8", "surrogateescape") for name in listed.split(b"\0") if name}


def _without(snapshot: Snapshot, paths: set[str]) -> Snapshot:
    return {path: entry for path, entry in snapshot.items() if path not in paths}


def _diff_bytes(diff: Path) -> bytes:
    if not diff.is_file():
        raise SandboxError(f"{diff}: the diff file does not exist")
    return diff.read_bytes()


def _apply(repo: Path, diff: Path, data: bytes) -> None:
    """`git apply input.diff` in the work tree's root, as Cassandra runs it, then the file
    deleted."""
    escaping = escaping_diff_paths(go_text(data))
    if escaping:
        line, why = escaping[0]
        raise SandboxError(
            f"failed to apply diff: {diff}:{line}: the diff names a path outside the base: {why}"
        )
    written = repo / DIFF_NAME
    try:
        if written.is_symlink():
            # Cassandra's os.WriteFile would write through it; a link (from a tarball) may
            # lead into `.git`, which must never hold the suite's bytes.
            written.unlink()
        written.write_bytes(data)
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise SandboxError(f"failed to write diff file: open {written}: {reason}") from None
    result = run_git(["apply", "--whitespace=nowarn", DIFF_NAME], cwd=repo)
    if result.returncode != 0:
        raise SandboxError(
            f"failed to apply diff: {diff}: {diff.name} does not apply to the base: "
            f"{git_message(result)}"
        )
    written.unlink()
