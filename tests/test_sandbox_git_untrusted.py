"""git in a repository someone else wrote (`assay score`'s workspace): whatever its config,
attributes, objects or submodules say, assay's git starts no program there, and no git
process assay starts carries a credential.

Each repository here is real, each trap is checked to go off under plain git first, and
then read the way `assay score` reads it (`workspace_changes` with a commit baseline).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from assay.errors import SandboxError
from assay.isolation.git import git_environment
from assay.workspace import WorkspaceChanges, workspace_changes
from tests.test_sandbox_helpers import write

PLAIN_GIT = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
IDENTITY = ["-c", "user.name=u", "-c", "user.email=u@example.com"]


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *IDENTITY, *args],
        cwd=repo,
        env={**os.environ, **PLAIN_GIT},
        check=check,
        capture_output=True,
        text=True,
    )


def _repository(path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        write(path / name, text)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "baseline")
    return path


def _touch_later(path: Path) -> None:
    """A new mtime, content the same: git must read the file (through any filter)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


def _changes(repo: Path) -> WorkspaceChanges:
    return asyncio.run(workspace_changes(repo))


# config text appended to .git/config, attributes (file, text): each makes plain git run
# the filter program when it next reads calc.py.
FILTERS = {
    "clean": ('[filter "pwn"]\n\tclean = "touch {marker}; cat"\n', ".git/info/attributes"),
    "process": ('[filter "pwn"]\n\tprocess = "touch {marker}"\n', ".git/info/attributes"),
    "required": (
        '[filter "pwn"]\n\tclean = "touch {marker}; cat"\n\trequired = true\n',
        ".git/info/attributes",
    ),
    "case-and-old-syntax": ('[Filter.pwn]\n\tClean = "touch {marker}; cat"\n', ".gitattributes"),
    "equals-in-name": ('[filter "p=wn"]\n\tclean = "touch {marker}; cat"\n', ".gitattributes"),
    "included": ("[include]\n\tpath = {included}\n", ".git/info/attributes"),
}


@pytest.mark.parametrize("how", sorted(FILTERS))
def test_no_filter_the_repository_names_ever_runs(tmp_path: Path, how: str) -> None:
    repo = _repository(tmp_path / "repo", {"calc.py": "return a + b\n"})
    marker, included = tmp_path / "filter-ran", tmp_path / "included.config"
    config, attributes = FILTERS[how]
    write(included, f'[filter "pwn"]\n\tclean = "touch {marker}; cat"\n')
    with open(repo / ".git" / "config", "a") as out:
        out.write(config.format(marker=marker, included=included))
    driver = "p=wn" if how == "equals-in-name" else "pwn"
    write(repo / attributes, f"calc.py filter={driver}\n")
    _touch_later(repo / "calc.py")
    _git(repo, "status", "--porcelain", check=False)
    assert marker.exists(), "the trap does not go off under plain git"
    marker.unlink()
    _touch_later(repo / "calc.py")

    changes = _changes(repo)
    assert not marker.exists()
    # calc.py's bytes did not change; only .gitattributes, when the trap wrote one.
    assert changes.changed == (() if attributes.startswith(".git/") else (".gitattributes",))


def test_a_partial_clone_never_fetches_what_it_lacks(tmp_path: Path) -> None:
    """A promisor remote whose `uploadpack` is a program, allowed by the repository's own
    `protocol.file.allow`: git's lazy fetch of a missing object would run it."""
    repo = _repository(tmp_path / "repo", {"a.txt": "line\n" * 50})
    _git(repo, "mv", "a.txt", "c.txt")
    write(repo / "c.txt", "line\n" * 50 + "more\n")
    _git(repo, "add", "c.txt")  # a staged inexact rename: status reads the old blob
    blob = _git(repo, "rev-parse", "HEAD:a.txt").stdout.strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    marker = tmp_path / "fetch-ran"
    for key, value in {
        "extensions.partialClone": "origin",
        "remote.origin.url": str(tmp_path),
        "remote.origin.promisor": "true",
        "remote.origin.uploadpack": f"sh -c 'touch {marker}; exit 1'",
        "protocol.file.allow": "always",
    }.items():
        _git(repo, "config", key, value)
    _git(repo, "status", "--porcelain", check=False)
    assert marker.exists(), "the trap does not go off under plain git"
    marker.unlink()

    with pytest.raises(SandboxError, match=f"unable to read {blob}"):
        _changes(repo)
    assert not marker.exists()


@pytest.mark.parametrize("committed", [False, True], ids=["status", "diff-from-baseline"])
def test_git_stays_out_of_a_submodules_work_tree(tmp_path: Path, committed: bool) -> None:
    """A submodule's own config is never listed: git would start `git status` in it, and
    its filters would run there."""
    sub = _repository(tmp_path / "repo" / "sub", {"s.txt": "s\n"})
    repo = _repository(tmp_path / "repo", {"calc.py": "return a + b\n"})  # sub: a gitlink
    if committed:  # HEAD moves off the baseline: the work tree is diffed with it instead
        write(repo / "notes.txt", "n\n")
        _git(repo, "add", "notes.txt")
        _git(repo, "commit", "-qm", "the agent's commit")
    marker = tmp_path / "filter-ran"
    with open(sub / ".git" / "config", "a") as out:
        out.write(f'[filter "pwn"]\n\tclean = "touch {marker}; cat"\n')
    write(sub / ".git" / "info" / "attributes", "* filter=pwn\n")
    _touch_later(sub / "s.txt")
    _git(repo, "status", "--porcelain", check=False)
    assert marker.exists(), "the trap does not go off under plain git"
    marker.unlink()
    _touch_later(sub / "s.txt")
    write(repo / "calc.py", "return a - b\n")

    expected = ("calc.py", "notes.txt") if committed else ("calc.py",)
    assert _changes(repo).changed == expected
    assert not marker.exists()


def test_no_git_process_carries_a_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    job = {
        "GITHUB_TOKEN": "ghs_jobtokenjobtokenjobtoken",
        "ACTIONS_RUNTIME_TOKEN": "runtime-token-runtime-token",
        "INPUT_ANTHROPIC-API-KEY": "sk-ant-input-input-input",
        "ANTHROPIC_API_KEY": "sk-ant-key-key-key-key",
        "MY_SERVICE_PASSWORD": "hunter2hunter2",
    }
    for name, value in job.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ASSAY_HARMLESS", "kept")
    env = git_environment()
    assert not set(job) & set(env)
    assert not set(job.values()) & set(env.values())
    assert env["ASSAY_HARMLESS"] == "kept" and env["PATH"] == os.environ["PATH"]
