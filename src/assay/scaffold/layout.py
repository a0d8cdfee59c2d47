"""Where scaffolded files go: case names, fixture directories, and safe file names.

Captured repository paths are written to disk on whatever system the eval suite is
checked out on, so each path component is made portable (no characters Windows or
macOS reject, no reserved device names, never `.git`), and two paths that only a
case-sensitive file system can tell apart get numbered names instead of clobbering
each other. The same control characters are taken out of every repository path shown
on the terminal (`printable`), so a file name can neither redraw the terminal nor start
a workflow command line.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping
from pathlib import PurePosixPath

from assay.core.text import CONTROL_CHARACTERS, one_line
from assay.errors import ConfigError
from assay.suites.discover import SKIPPED_DIR_NAMES

__all__ = [
    "MAX_NAME_LENGTH",
    "PathAllocator",
    "check_name",
    "fixture_repo_dir",
    "without_controls",
    "sanitise_path",
    "slugify",
]

MAX_NAME_LENGTH = 80
_NAME = re.compile(r"[A-Za-z0-9._-]+")
_UNPORTABLE = re.compile(f'[{CONTROL_CHARACTERS}<>:"|?*\\\\]')
_RESERVED = re.compile(r"(?i)(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def check_name(value: str, *, option: str) -> str:
    """A --name or --category value: `[A-Za-z0-9._-]+`, not `.` or `..` (it names a path),
    not starting with `-` (the commands printed next would read it as an option), and not
    a name suite discovery skips (hidden, `fixtures`, `base`, ...)."""
    if not _NAME.fullmatch(value) or value in (".", ".."):
        raise ConfigError(
            f"{option} {value!r} is not allowed: use letters, digits, '.', '_' and '-' "
            "(and not '.' or '..')"
        )
    if value.startswith("-"):
        raise ConfigError(
            f"{option} {value!r} is not allowed: it may not start with '-' (`assay validate` "
            "and `assay run` would read the case's path as an option)"
        )
    if value.startswith(".") or value in SKIPPED_DIR_NAMES:
        raise ConfigError(
            f"{option} {value!r} is not allowed: `assay run` never looks at a name that starts "
            f"with '.' or is one of {', '.join(sorted(SKIPPED_DIR_NAMES))} (they hold fixtures, "
            "skills or dependencies), so the case would never run"
        )
    return value


def without_controls(text: str) -> str:
    """`text` with each control character as `_`, as in fixture paths: safe to store in the
    stub's notes (what is printed goes through `report.terminal.printable` as well)."""
    return one_line(text, "_")


def slugify(title: str, *, fallback: str) -> str:
    """`Fix: DELETE needs project:write` -> `fix-delete-needs-project-write` (at most 80 chars)."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = _NOT_SLUG.sub("-", ascii_title.lower()).strip("-")
    slug = slug[:MAX_NAME_LENGTH].rstrip("-")
    return slug or fallback


def fixture_repo_dir(name: str, repository: str) -> PurePosixPath:
    """`fixtures/<name>/github/<owner>/<repo>`: Warden's layout for captured source files."""
    owner, repo = repository.split("/", 1)
    return PurePosixPath(
        "fixtures", name, "github", _portable_component(owner), _portable_component(repo)
    )


def sanitise_path(path: str) -> str:
    """A repository path made portable, component by component (see the module docstring)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    if not parts:
        raise ValueError(f"not a file path: {path!r}")
    return "/".join(_portable_component(p) for p in parts)


def _portable_component(part: str) -> str:
    part = _UNPORTABLE.sub("_", part)
    stripped = part.rstrip(". ")
    if stripped != part:  # Windows drops trailing dots and spaces
        part = stripped + "_" * (len(part) - len(stripped))
    if _RESERVED.fullmatch(part) or part.casefold() == ".git":
        part = "_" + part
    return part


class PathAllocator:
    """Gives each repository path one portable relative path, unique ignoring case.

    The same source path always gets the same answer. A later path that collides with an
    earlier one (after sanitising, case-insensitively, or as a file where the other has a
    directory) gets a numbered component: `readme.md` after `README.md` is `readme-2.md`.

    `trees`: the trees each path is in (a rubric case's `base` and `head` sides; a path it
    does not name is in all of them). Paths collide only within a tree they share: `conf`,
    a file the change deletes, and `conf/main.py`, which it adds in its place, never exist
    together, so both keep their names. `warden_fixture_dir`: the Warden fixture directory
    the paths go under (the review format), whose re-anchoring they are kept from (see
    `_WARDEN_ANCHOR`).
    """

    def __init__(
        self,
        *,
        trees: Mapping[str, Collection[str]] | None = None,
        warden_fixture_dir: PurePosixPath | None = None,
    ) -> None:
        self._trees_of = dict(trees or {})
        self._every_tree = sorted({t for names in self._trees_of.values() for t in names}) or [""]
        self._anchor_before = warden_fixture_dir.name if warden_fixture_dir else None
        self._placed: dict[str, str] = {}
        self._files: dict[str, set[str]] = {tree: set() for tree in self._every_tree}
        self._dirs: dict[str, set[str]] = {tree: set() for tree in self._every_tree}

    def place(self, source_path: str) -> str:
        if source_path in self._placed:
            return self._placed[source_path]
        trees = self._trees_of.get(source_path, self._every_tree)
        wanted = sanitise_path(source_path).split("/")
        if self._anchor_before is not None:
            wanted = _unanchored(wanted, before=self._anchor_before)
        parts, numbers = list(wanted), [1] * len(wanted)
        while (index := self._collision(parts, trees)) is not None:
            numbers[index] += 1
            parts[index] = _numbered(wanted[index], numbers[index])
        placed = "/".join(parts)
        self._placed[source_path] = placed
        folded = placed.casefold().split("/")
        for tree in trees:
            self._files[tree].add("/".join(folded))
            self._dirs[tree].update("/".join(folded[:i]) for i in range(1, len(folded)))
        return placed

    def _collision(self, parts: list[str], trees: Collection[str]) -> int | None:
        """The index of the first component that clashes with a path placed before in
        one of `trees`."""
        folded = [p.casefold() for p in parts]
        whole = "/".join(folded)
        for tree in trees:
            files, dirs = self._files[tree], self._dirs[tree]
            for end in range(1, len(folded)):
                if "/".join(folded[:end]) in files:  # a directory where a file is
                    return end - 1
            if whole in files or whole in dirs:
                return len(parts) - 1
        return None


_WARDEN_ANCHOR = ("evals", "fixtures")
"""Warden places a fixture in its temp repo by what follows the first `evals/fixtures` in
the fixture's path, and only without one by what follows the first `fixtures`, the
scaffold's own (`suites/warden.py: fixture_destination`). A captured path holding that
pair (a pull request to a repository with Warden evals, `evals/fixtures/<case>/...`)
would land at what follows it, so there its `fixtures` becomes `_fixtures`, as a
reserved name gets its `_`."""


def _unanchored(parts: list[str], *, before: str) -> list[str]:
    """`parts` (placed after the component `before`) with each `fixtures` that follows an
    `evals` renamed `_fixtures`."""
    result: list[str] = []
    for part in parts:
        previous = result[-1] if result else before
        result.append("_" + part if (previous, part) == _WARDEN_ANCHOR else part)
    return result


def _numbered(component: str, number: int) -> str:
    """`name.ext` -> `name-2.ext`; `.env` -> `.env-2`; `archive.tar.gz` -> `archive-2.tar.gz`."""
    hidden = "." if component.startswith(".") else ""
    stem, dot, suffix = component[len(hidden) :].partition(".")
    return f"{hidden}{stem}-{number}{dot}{suffix}"
