"""Warden's path semantics: fixture destinations in the temp repo, the origin repo.

Fixtures and supporting files are joined to the eval root as Node's `path.join` joins them
(a leading `/` is relative, `..` is normalised) and must stay inside the project (the git
work tree holding the eval root): a PR must not copy host files into a sandbox. In the
temp repo a fixture lands where Warden's `evalFixtureRepoPath` puts it, reading the
absolute path: after the first `evals/fixtures`, else after the first `fixtures`
(`<case>/github/<owner>/<repo>/<path>` as `<case>/<path>`), else at `<parent dir>/<file>`.
Skills share the project boundary (`project_root`); which skill a case runs with, and the
rules for its path, are `suites/warden_skill.py`'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePath

from assay._util.fixture_tree import fixture_file_problem
from assay._util.paths import resolve_inside
from assay.core.paths import is_inside, real_path
from assay.errors import ConfigError, SourcePosition
from assay.suites.case import FixtureFile
from assay.suites.document import Document, Problems
from assay.upstream.warden.paths import node_join

__all__ = [
    "EVAL_PULL_REQUEST_BODY",
    "SKILL_COMMIT_MESSAGE",
    "fixture_commit_message",
    "fixture_destination",
    "project_root",
    "resolve_fixtures",
    "shared_repository",
]

SKILL_COMMIT_MESSAGE = "install eval skill"
"""The message of the `main` commit (skill and supporting files), Warden's `setupEvalRepo`'s."""
EVAL_PULL_REQUEST_BODY = "Analyzing changes in eval"
"""The pull request body Warden's reviewer sees: `buildLocalEventContext` takes the head
commit's body, and the fixture commit has none (`Analyzing changes in ${head}`)."""


def fixture_commit_message(case_name: str) -> str:
    """The message of the `eval` commit holding a case's fixture files (Warden's
    `add fixture: ${meta.name}`). Warden's reviewer sees it as the pull request's title:
    a review never shows the case's `given`, which only the judge reads."""
    return f"add fixture: {case_name}"


def fixture_destination(path: PurePath, *, parent: str) -> tuple[str, str | None]:
    """Where a fixture lands in the temp repo, and its `owner/repo` if captured.

    `path` is the fixture's absolute path, as Warden reads it (a relative one reads the
    same way); `parent`: the name of the directory holding the file on disk (for files
    outside fixtures/). An empty destination means Warden would write to the repo root.
    """
    stored = _fixture_storage(tuple(part for part in path.parts if part != path.anchor))
    if stored is None:
        return f"{parent}/{path.name}", None
    if len(stored) >= 5 and stored[1] == "github":
        return "/".join((stored[0], *stored[4:])), f"{stored[2]}/{stored[3]}"
    return "/".join(stored), None


def _fixture_storage(parts: tuple[str, ...]) -> tuple[str, ...] | None:
    """The segments after the first `evals/fixtures`, else after the first `fixtures` that
    is not the last segment (Warden's `fixtureStorageSegments`)."""
    for index in range(len(parts) - 1):
        if parts[index] == "evals" and parts[index + 1] == "fixtures":
            return parts[index + 2 :]
    if "fixtures" in parts[:-1]:
        return parts[parts.index("fixtures") + 1 :]
    return None


def resolve_fixtures(
    raws: Sequence[str],
    *,
    field: str,
    key_path: tuple[object, ...],
    root: Path,
    project: Path,
    doc: Document,
    problems: Problems,
) -> tuple[tuple[FixtureFile, ...], list[str | None]]:
    """Resolve one `files` / `supporting_files` list; report every bad entry.

    Returns the fixtures and, per fixture, the GitHub repo it was captured from (or None).
    """
    fixtures: list[FixtureFile] = []
    repos: list[str | None] = []
    seen: dict[str, tuple[str, Path, int]] = {}
    for number, raw in enumerate(raws):
        location = doc.location(key_path + (number,))
        try:
            joined, source = _fixture_path(raw, root=root, project=project, location=location)
        except ConfigError as exc:
            problems.add(ConfigError(f"{field}[{number}]: {exc.message}", location))
            continue
        if not source.exists():
            where = f"under the eval root {root}" if is_inside(joined, root) else f"at {joined}"
            problems.error(f"{field}[{number}]: {raw!r} not found {where}", location)
            continue
        if not source.is_file():
            problems.error(f"{field}[{number}]: {raw!r} is not a file", location)
            continue
        too_big = fixture_file_problem(source, source.stat().st_size, shown=raw)
        if too_big:
            problems.error(f"{field}[{number}]: {too_big}", location)
            continue
        dest, repo = fixture_destination(joined, parent=joined.parent.name)
        problem = _destination_problem(dest)
        if problem:
            problems.error(f"{field}[{number}]: {raw!r} {problem}", location)
            continue
        if dest in seen:
            earlier, earlier_source, earlier_number = seen[dest]
            if earlier_source == source:  # Warden copies it twice, to the same place
                problems.unknown_key(
                    f"{field}[{number}]: {raw!r} is the file {field}[{earlier_number}] already "
                    "lists; it is copied once",
                    location,
                )
                continue
            problems.error(
                f"{field}[{number}]: {raw!r} lands at {dest!r} in the temp repo, like {earlier!r}",
                location,
            )
            continue
        seen[dest] = (raw, source, number)
        fixtures.append(FixtureFile(source=source, dest=dest))
        repos.append(repo)
    return tuple(fixtures), repos


def _fixture_path(
    raw: str, *, root: Path, project: Path, location: SourcePosition
) -> tuple[Path, Path]:
    """The fixture `raw` names: Node's join onto the eval root, and the file it is once
    symlinks are resolved. ConfigError when either leaves the project."""
    if not raw or "\x00" in raw:
        raise ConfigError(f"invalid path {raw!r}", location)
    joined = node_join(root, raw)
    relative = os.path.relpath(joined, project)
    if relative == ".." or relative.startswith("../"):
        raise ConfigError(
            f"{raw!r} is {joined}, outside the project {project} (the git work tree holding "
            "the eval root, else the directory of its pyproject.toml / assay.toml): a fixture "
            "is copied into the sandbox, so it must be a file of this checkout; copy it into "
            "the eval root's fixtures/",
            location,
        )
    return joined, resolve_inside(project, relative, location=location)


def _destination_problem(dest: str) -> str | None:
    """Why a fixture cannot land at `dest` in the temp repo, or None."""
    if not dest:
        return "would land at the root of the temp repo (a file named `fixtures` in `evals/`)"
    if any(part.casefold() == ".git" for part in dest.split("/")):
        return f"would land at {dest!r}, inside the temp repo's .git"
    return None


def shared_repository(repos: Sequence[str | None]) -> str | None:
    """`owner/repo` when the fixtures that name a GitHub repo all name that one.

    Warden's `singleEvalFixtureSourceRepository`: fixtures captured from no repo do not count.
    """
    distinct = {repo for repo in repos if repo is not None}
    return distinct.pop() if len(distinct) == 1 else None


def project_root(eval_root: Path, config_path: Path | None) -> Path:
    """The boundary for skills: the git work tree holding the eval root, else the config's
    directory (when it holds the eval root), else the eval root itself."""
    for directory in (eval_root, *eval_root.parents):
        if (directory / ".git").exists():
            return directory
    if config_path is not None:
        config_dir = real_path(config_path.parent)
        if is_inside(eval_root, config_dir):
            return config_dir
    return eval_root
