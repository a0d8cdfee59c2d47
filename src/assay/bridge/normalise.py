"""The request a bridged call is cached under: what differs from run to run taken out.

A CLI's request names where it runs (Claude Code's system prompt holds its working
directory; a tool result holds the paths it read), and those are a new temporary
directory in every run; its system prompt also holds today's date. Sent as they are, the
requests key the cache by them: a recorded run would never replay. So the cache key is
taken from a copy of the request with the attempt's own directories written as
`<sandbox>` / `<artifacts>` everywhere, and dates in the system prompt (`2026-12-06`, and
JavaScript's `Sun Dec 06 2026`, opencode's) written as `<date>`. gemini-cli's session
context (its first user message) says the date in the user's locale (`Today's date is
Sunday, December 6, 2026 (formatted ...)`: `<date>`) and names the project's directory under
`~/.gemini/tmp/`, whose name counts the workspaces it has seen (`workspace-3`:
`<project>`). The model is still sent the request as the CLI made it. Fields that only
vary per session (`metadata.user_id`, `cache_control`, request ids) never reach the
canonical request at all (the translators drop them).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from assay.models.base import Message, ModelRequest

__all__ = ["PathNames", "keyed_request"]

_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
    r" \d{2} \d{4}\b"
)
_SESSION_DATE = re.compile(
    r"(Today's date is )[^\n\"\\]+?( \(formatted according to the user's locale\))"
)
"""gemini-cli's date, in whatever form the user's locale gives it."""
_GEMINI_PROJECT = re.compile(r"(/\.gemini/tmp/)[^/\s\"\\]+")
"""gemini-cli's directory of the project (a name it picks anew for a new workspace path)."""


@dataclasses.dataclass(frozen=True)
class PathNames:
    """Directories of one attempt, each with the placeholder that stands for it."""

    pairs: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, named: Iterable[tuple[Path, str]]) -> PathNames:
        pairs: dict[str, str] = {}
        for path, name in named:
            for form in {str(path), os.path.realpath(path)}:
                if len(form) > 1:
                    pairs[form] = name
        # Longest first: a directory inside another is replaced before its parent.
        return cls(tuple(sorted(pairs.items(), key=lambda pair: -len(pair[0]))))

    def apply(self, text: str) -> str:
        for path, name in self.pairs:
            text = text.replace(path, name)
        return text


def keyed_request(request: ModelRequest, names: PathNames) -> ModelRequest:
    """`request` as the cache keys it (see the module's docstring)."""
    system = _DATE.sub("<date>", _session(names.apply(request.system)))
    return dataclasses.replace(
        request,
        system=system,
        messages=_messages(request.messages, names),
        tools=request.tools,
    )


def _messages(messages: Sequence[Message], names: PathNames) -> tuple[Message, ...]:
    text = json.dumps([list(m.content) for m in messages], ensure_ascii=False)
    # Paths inside JSON strings are escaped as JSON escapes them: replace those forms.
    escaped = PathNames(tuple((json.dumps(p)[1:-1], n) for p, n in names.pairs))
    contents = json.loads(_session(escaped.apply(text)))
    return tuple(
        Message(m.role, tuple(content)) for m, content in zip(messages, contents, strict=True)
    )


def _session(text: str) -> str:
    """`text` with gemini-cli's session context's date and project directory named."""
    text = _SESSION_DATE.sub(r"\1<date>\2", text)
    return _GEMINI_PROJECT.sub(r"\1<project>", text)
