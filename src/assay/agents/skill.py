"""Loading a skill: the instructions the builtin reviewer follows for a suite.

A skill is a markdown file, or a directory holding `SKILL.md` (Warden's built-in skill
layout). Optional YAML front matter between `---` lines carries `name` and
`description`; it is stripped from the text the model sees.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assay.errors import AgentError

__all__ = ["Skill", "load_skill"]

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    """The markdown instructions, front matter removed."""
    path: Path


def load_skill(path: Path) -> Skill:
    """Read the skill at `path`; AgentError when it is missing, unreadable or malformed.

    The error is the run's, not the suite's: loaders already checked that the path was
    well formed, so a skill that vanished or cannot be decoded fails this attempt.
    """
    file = path / SKILL_FILE if path.is_dir() else path
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AgentError(f"skill not found: {file}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentError(f"skill {file} cannot be read: {exc}") from None
    return _parsed(file, text)


@functools.lru_cache(maxsize=64)
def _parsed(file: Path, text: str) -> Skill:
    """The skill in `text`, parsed once per (file, content) rather than once per case.

    Keyed by the content just read, not by a stat, so a skill edited between two runs
    in one process (as tests do) is parsed again: reading costs microseconds, the YAML
    front matter about a millisecond.
    """
    meta, body = _split_front_matter(text, file)
    # A directory skill is named after its directory, whether given as the dir or its SKILL.md.
    default_name = file.parent.name if file.name == SKILL_FILE else file.stem
    return Skill(
        name=str(meta.get("name") or default_name),
        description=str(meta.get("description") or ""),
        body=body.strip(),
        path=file,
    )


def _split_front_matter(text: str, file: Path) -> tuple[dict[str, Any], str]:
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            header = "".join(lines[1:index])
            try:
                meta = yaml.safe_load(header) if header.strip() else {}
            except yaml.YAMLError as exc:
                raise AgentError(f"skill {file}: front matter is not valid YAML: {exc}") from None
            if not isinstance(meta, dict):
                raise AgentError(f"skill {file}: front matter must be a mapping of keys to values")
            return meta, "".join(lines[index + 1 :])
    # An opening `---` without a closing one is a horizontal rule, not front matter.
    return {}, text
