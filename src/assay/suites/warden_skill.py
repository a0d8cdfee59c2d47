"""Which skill a Warden case runs with, and why: the one place that decides it.

- A YAML suite: its top-level `skill:` key (`named_skill`), for every eval in the file.
- A category's JSON scenarios, weakest first: assay's conventional `skills/<category>.md`
  or `skills/<category>/SKILL.md` (`conventional_skill`); the eval.ts declaration's `skill`
  (`declared_skill`); the category's `_suite.yaml` `skill:` key (`named_skill`).
  `suites/category.py` lays these over each other with the category's other defaults; a
  category left with none is a warning (`warn_if_no_skill`; an error under `--strict`).
- Every path above is resolved by `resolve_skill`: relative to the eval root, inside the
  project (Warden points at built-in skills with `../`), a `.md` file or a directory with
  SKILL.md, outside `.git`, its front matter (if any) a YAML mapping.
- At run time, `--skill` replaces the case's skill, whatever its kind (`skill_at_run`).

A skill's name (`skill_name`: front matter `name`, else its directory's or file's stem)
is the first part of the case ids Warden gives, `<skill name>/<case>`.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from assay._util.paths import resolve_inside
from assay.errors import ConfigError, SourcePosition
from assay.suites.document import Document, read_text
from assay.upstream.warden import yaml12

if TYPE_CHECKING:
    from assay.suites.context import CategoryDefaults, LoadContext
    from assay.upstream.warden.evalts import EvalValue

__all__ = [
    "SKILL_NOT_RESOLVED",
    "check_skill_text",
    "conventional_skill",
    "declared_skill",
    "named_skill",
    "resolve_skill",
    "skill_at_run",
    "skill_name",
    "warn_if_no_skill",
]

SKILL_NOT_RESOLVED = "not resolved"
"""The source of a skill that was named but could not be resolved (already an error)."""


def skill_at_run(case_skill: Path | None, override: Path | None) -> Path | None:
    """The skill an attempt runs with: the run's `--skill` when given, else the case's."""
    return override if override is not None else case_skill


def named_skill(raw: str, *, root: Path, doc: Document, ctx: LoadContext) -> Path | None:
    """The `skill:` key of a YAML suite or of a category's `_suite.yaml`: the skill it
    names, or None once the problem is reported."""
    try:
        return resolve_skill(
            raw, eval_root=root, project=ctx.project_for(root), location=doc.location(("skill",))
        )
    except ConfigError as exc:
        ctx.problems.add(exc)
        return None


def declared_skill(value: EvalValue, *, root: Path, ctx: LoadContext) -> Path:
    """The `skill` of an eval.ts declaration (`discoverEvalScenarios({skill})`);
    ConfigError when it cannot be one (the caller reports it once per declaration)."""
    return resolve_skill(
        str(value.value), eval_root=root, project=ctx.project_for(root), location=value.location
    )


def conventional_skill(eval_root: Path, category: str) -> Path | None:
    """The weakest: `skills/<category>.md` or `skills/<category>/SKILL.md`, if present."""
    for candidate in (f"skills/{category}.md", f"skills/{category}/SKILL.md"):
        try:
            path = resolve_inside(eval_root, candidate)
        except ConfigError:
            continue
        if path.is_file():
            return path
    return None


def warn_if_no_skill(
    runs: list[CategoryDefaults], *, category_dir: Path, root: Path, ctx: LoadContext
) -> None:
    """A category some run of which has no skill (and none that failed to resolve, which
    is already an error): its cases would review without one."""
    if any(r.skill is None and r.sources.get("skill") != SKILL_NOT_RESOLVED for r in runs):
        name = category_dir.name
        ctx.problems.unknown_key(
            f"category {name!r} has no skill: its cases would run without one. Set `skill:` "
            f"in {os.path.relpath(category_dir, root)}/_suite.yaml (or declare the category "
            "in src/<name>.eval.ts, or add skills/<category>.md)",
            SourcePosition(category_dir),
        )


def resolve_skill(raw: str, *, eval_root: Path, project: Path, location: SourcePosition) -> Path:
    """The skill file (a .md, or SKILL.md inside a skill directory), checked and readable."""
    if PurePosixPath(raw.replace("\\", "/")).is_absolute() or (len(raw) > 1 and raw[1] == ":"):
        raise ConfigError(
            f"skill {raw!r} is absolute; use a path relative to the eval root", location
        )
    joined = os.path.normpath(os.path.join(eval_root, raw.replace("\\", "/")))
    relative = os.path.relpath(joined, project)
    if relative == ".." or relative.startswith("../") or relative == ".":
        raise ConfigError(
            f"skill {raw!r} is outside the project {project} (the git work tree holding "
            "the eval root, else the directory of its pyproject.toml / assay.toml): run "
            "assay inside the repository that holds both, or put an assay.toml at their "
            "common parent",
            location,
        )
    path = resolve_inside(project, relative, location=location)
    if path.is_dir():
        path = path / "SKILL.md"
        if not path.is_file():
            raise ConfigError(f"skill directory {raw!r} has no SKILL.md", location)
    elif not path.is_file():
        raise ConfigError(f"skill {raw!r} not found (looked for {joined})", location)
    # The skill's text goes to the model and into transcripts: only markdown outside git's
    # own files can be one (a suite in a PR must not make `.git/config` or `.env` a skill).
    if ".git" in Path(os.path.relpath(path, project)).parts:
        raise ConfigError(f"skill {raw!r} is inside .git; point at a .md file", location)
    if path.suffix.lower() != ".md":
        raise ConfigError(
            f"skill {raw!r} is not markdown; a skill is a .md file or a directory with SKILL.md",
            location,
        )
    check_skill_text(path, location=location)
    return path


def check_skill_text(path: Path, *, location: SourcePosition) -> None:
    """A skill is UTF-8 markdown whose optional `---` front matter is a YAML mapping."""
    text = read_text(path, what="skill")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise ConfigError(
            "skill front matter opened with '---' is never closed", SourcePosition(path, 1, 1)
        )
    # lazy: start-up (yaml only when used)
    import yaml  # skills with front matter only

    try:
        front = yaml12.load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark else 2
        raise ConfigError(
            f"skill front matter is not valid YAML: {exc}", SourcePosition(path, line)
        ) from None
    if front is not None and not isinstance(front, dict):
        raise ConfigError("skill front matter must be a YAML mapping", SourcePosition(path, 2, 1))


def skill_name(skill: Path) -> str:
    """Warden's `resolveEvalSkillName`: front matter `name`, else the directory or file stem."""
    fallback = skill.parent.name if skill.name == "SKILL.md" else skill.stem
    try:
        text = skill.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return fallback
    end = text.find("\n---", 3)
    if not text.startswith("---") or end == -1:
        return fallback
    # lazy: start-up (yaml only when used)
    import yaml  # skills with front matter only

    try:
        front = yaml12.load(text[3:end])  # Warden's `yaml` package: YAML 1.2, `yes` a string
    except yaml.YAMLError:
        return fallback
    name = front.get("name") if isinstance(front, dict) else None
    if isinstance(name, str) and name.strip() and "/" not in name:
        return name.strip()
    return fallback
