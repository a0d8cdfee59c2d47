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
    """

    def __init__(self) -> None:
        self._placed: dict[str, str] = {}
        self._files: set[str] = set()
        self._dirs: set[str] = set()

    def place(self, source_path: str) -> str:
        if source_path in self._placed:
            return self._placed[source_path]
        wanted = sanitise_path(source_path).split("/")
        parts, numbers = list(wanted), [1] * len(wanted)
        while (index := self._collision(parts)) is not None:
            numbers[index] += 1
            parts[index] = _numbered(wanted[index], numbers[index])
        placed = "/".join(parts)
        self._placed[source_path] = placed
        folded = placed.casefold().split("/")
        self._files.add("/".join(folded))
        self._dirs.update("/".join(folded[:i]) for i in range(1, len(folded)))
        return placed

    def _collision(self, parts: list[str]) -> int | None:
        """The index of the first component that clashes with a path placed before."""
        folded = [p.casefold() for p in parts]
        for end in range(1, len(folded)):
            if "/".join(folded[:end]) in self._files:  # a directory where a file is
                return end - 1
        whole = "/".join(folded)
        if whole in self._files or whole in self._dirs:
            return len(parts) - 1
        return None


def _numbered(component: str, number: int) -> str:
    """`name.ext` -> `name-2.ext`; `.env` -> `.env-2`; `archive.tar.gz` -> `archive-2.tar.gz`."""
    hidden = "." if component.startswith(".") else ""
    stem, dot, suffix = component[len(hidden) :].partition(".")
    return f"{hidden}{stem}-{number}{dot}{suffix}"
