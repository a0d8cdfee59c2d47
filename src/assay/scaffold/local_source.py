"""Two refs of a local clone as a change source: the same capture as a PR, without an API.

git runs through assay's one git runner (no user config, no hooks); every ref is
resolved to a full SHA first, so what is read is exactly what the notes record. Only
commits and trees are read, never the work tree, so a bare repository works as well.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from assay.core.paths import names_under
from assay.errors import ConfigError, SandboxError
from assay.isolation.git import git_message, run_git
from assay.isolation.processes import CompletedProcess
from assay.scaffold.change import Change, ChangedFile, License, Unavailable

__all__ = ["LocalRefs", "github_repository"]

_STATUSES = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied"}
_GITHUB_REMOTE = re.compile(
    r"(?:[a-z][a-z0-9+.-]*://)?(?:[^@/]+@)?(?:www\.)?github\.com(?::\d+)?[:/]"
    r"(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)(?:\.git)?/?"
)
_LICENSE_LIKE = re.compile(r"(?i)(licen[cs]e|copying)([.-].*)?")
_SYMLINK, _SUBMODULE = "120000", "160000"
_UNDECODABLE = "its name is not valid UTF-8, so it cannot be read back by that name"


def github_repository(remote_url: str) -> str | None:
    """`owner/repo` of a github.com remote URL (https, ssh or scp-like form), else None."""
    match = _GITHUB_REMOTE.fullmatch(remote_url.strip())
    return f"{match['owner']}/{match['repo']}" if match else None


class LocalRefs:
    """The change from `base` to `head` in the clone at `repo` (`git diff base head`)."""

    def __init__(self, repo: Path, *, base: str, head: str) -> None:
        self._shown = str(repo)
        self._top = _repository_top(repo)
        self._check_git_sees_a_repository(repo)
        self._base, self._head = base, head
        self._change: Change | None = None
        self._changed_names: list[str] = []
        """Every path the change names, sorted (see `_changed_under`)."""
        self._undecodable: set[str] = set()
        """Names git gave in bytes that are not UTF-8 (kept readable with U+FFFD)."""

    def describe(self) -> Change:
        if self._change is None:
            self._change = self._read_change()
        return self._change

    def read(self, path: str, *, ref: str, max_bytes: int | None) -> bytes | Unavailable:
        if path in self._undecodable:
            return Unavailable(_UNDECODABLE)
        entry = self._tree_entry(ref, path)
        if entry is None:
            return Unavailable(f"not in the tree of {ref[:12]}")
        mode, kind, sha, size = entry
        if kind == "tree":
            return Unavailable.not_a_file("directory")
        if mode == _SYMLINK or mode == _SUBMODULE:
            return Unavailable.not_a_file("symlink" if mode == _SYMLINK else "submodule")
        if max_bytes is not None and size > max_bytes:
            return Unavailable.too_large(size, max_bytes)
        return self._git("cat-file", "blob", sha)

    def detected_license(self, ref: str) -> License | None:
        """A root file named like a license (LICENSE-MIT, license.rst...), as GitHub detects."""
        listing = self._git("ls-tree", "-z", ref).decode("utf-8", "replace")
        for line in sorted(filter(None, listing.split("\0")), key=lambda e: e.split("\t", 1)[1]):
            meta, name = line.split("\t", 1)
            mode, kind, sha = meta.split()
            if kind == "blob" and mode != _SYMLINK and _LICENSE_LIKE.fullmatch(name):
                return License(name, self._git("cat-file", "blob", sha))
        return None

    def patch(self, file: ChangedFile) -> str | None:
        change = self.describe()
        paths = [p for p in (file.previous_path, file.path) if p]
        # A path is also the directory of what lies under it: `git diff -- conf` for a
        # file that becomes the directory `conf/` would take in `conf/main.py` as well.
        pathspecs = [f":(literal){p}" for p in paths]
        pathspecs += [f":(exclude,literal){p}" for p in self._changed_under(paths)]
        # The clone's own config may not reshape the hunks (blank context lines must keep
        # their leading space for `git apply`).
        out = self._git(
            "-c", "diff.suppressBlankEmpty=false",
            "diff", "--no-color", "--no-ext-diff", "--no-textconv",
            "-U3", "-M", change.base_sha, change.head_sha, "--", *pathspecs,
        )  # fmt: skip
        if _says_binary(out):
            return None
        try:
            text = out.decode("utf-8")
        except UnicodeDecodeError:
            return None
        start = text.find("\n@@ ")
        return text[start + 1 :] if start >= 0 else ""

    # -- internals -------------------------------------------------------------------
    def _changed_under(self, paths: list[str]) -> list[str]:
        """The other changed files' paths that lie inside one of `paths` as a directory."""
        found = [name for path in paths for name in names_under(self._changed_names, path)]
        return [name for name in found if name not in paths]

    def _read_change(self) -> Change:
        base_sha, head_sha = self._commit(self._base), self._commit(self._head)
        raw = self._git("diff", "--name-status", "-z", "-M", "--no-ext-diff", base_sha, head_sha)
        fields = [self._name(field) for field in raw.split(b"\0")]
        files: list[ChangedFile] = []
        index = 0
        while index < len(fields) and fields[index]:
            code = fields[index][0]
            if code in "RC":
                files.append(ChangedFile(_STATUSES[code], fields[index + 2], fields[index + 1]))
                index += 3
            else:
                files.append(ChangedFile(_STATUSES.get(code, "changed"), fields[index + 1]))
                index += 2
        self._changed_names = sorted({p for f in files for p in (f.previous_path, f.path) if p})
        message = self._git("log", "-1", "--no-show-signature", "--format=%s%x00%b", head_sha)
        subject, _, body = message.decode("utf-8", "replace").partition("\0")
        return Change(
            repository=self._repository(),
            title=subject.strip(),
            body=body.strip(),
            source=f"{self._shown} {self._base}..{self._head}",
            base_sha=base_sha,
            head_sha=head_sha,
            files=tuple(files),
            fallback_name=head_sha[:12],
        )

    def _name(self, raw: bytes) -> str:
        """A path as git gave it. One that is not UTF-8 is kept readable and remembered, so
        that reading it says why it cannot be captured."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            name = raw.decode("utf-8", "replace")
            self._undecodable.add(name)
            return name

    def _repository(self) -> str:
        result = self._run("config", "--get", "remote.origin.url")
        remote = result.stdout.decode("utf-8", "replace") if result.returncode == 0 else ""
        return github_repository(remote) or f"local/{_directory_name(self._top)}"

    def _check_git_sees_a_repository(self, given: Path) -> None:
        """A `.git` that is not a repository (an empty file, a broken link) fails here,
        with git's reason, instead of as a missing commit."""
        result = self._run("rev-parse", "--git-dir")
        if result.returncode != 0:
            raise ConfigError(
                f"--repo {given}: git does not see a repository at {self._top} "
                f"({git_message(result)})"
            )

    def _commit(self, ref: str) -> str:
        if not ref or ref.startswith("-"):
            raise ConfigError(f"invalid ref {ref!r}")
        result = self._run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if result.returncode != 0:
            raise ConfigError(
                f"no commit {ref!r} in {self._shown} (not a branch, tag or SHA there)"
            )
        return result.stdout.decode().strip()

    def _tree_entry(self, ref: str, path: str) -> tuple[str, str, str, int] | None:
        out = self._git("--literal-pathspecs", "ls-tree", "-l", "-z", ref, "--", path)
        for line in out.decode("utf-8", "replace").split("\0"):
            meta, _, name = line.partition("\t")
            if name == path:
                mode, kind, sha, size = meta.split()
                return mode, kind, sha, int(size) if size.isdigit() else 0
        return None

    def _run(self, *args: str) -> CompletedProcess[bytes]:
        try:
            return run_git(list(args), cwd=self._top)
        except SandboxError as exc:  # git is not installed
            raise ConfigError(str(exc)) from None

    def _git(self, *args: str) -> bytes:
        """git's stdout; a failure is the user's (a bad ref, a broken clone): ConfigError."""
        result = self._run(*args)
        if result.returncode != 0:
            command = next(a for a in args if a[0] != "-" and "=" not in a)
            raise ConfigError(f"git {command} failed in {self._shown}: {git_message(result)}")
        return result.stdout


def _says_binary(diff: bytes) -> bool:
    """Whether git's header (the lines before the first hunk) says the file is binary.

    Only the header: a text file may well hold those words in a line of its content.
    """
    header = diff.split(b"\n@@ ", 1)[0]
    return any(
        line == b"GIT binary patch" or line.startswith(b"Binary files ")
        for line in header.split(b"\n")
    )


def _repository_top(path: Path) -> Path:
    """The top of the git work tree holding `path`, or the bare repository `path` is in
    (git is never asked to look above it)."""
    start = Path(os.path.abspath(path))
    if not start.is_dir():
        raise ConfigError(f"--repo {path}: not a directory")
    for directory in (start, *start.parents):
        if (directory / ".git").exists() or _looks_like_a_git_directory(directory):
            return directory
    raise ConfigError(
        f"--repo {path}: not inside a git clone (no .git found, and not a bare repository)"
    )


def _looks_like_a_git_directory(directory: Path) -> bool:
    """What git itself looks for: HEAD, objects/ and refs/ (a bare clone, or a `.git`)."""
    return (
        (directory / "HEAD").is_file()
        and (directory / "objects").is_dir()
        and (directory / "refs").is_dir()
    )


def _directory_name(top: Path) -> str:
    """`widgets` for a clone in widgets/, a bare widgets.git, or widgets/.git itself."""
    if top.name == ".git":
        return top.parent.name
    return top.name.removesuffix(".git") or top.name
