"""The builtin agent's tools: read_file, grep, glob and list_dir, confined to one sandbox.

Every path the model gives is resolved (symlinks included) by assay._util.paths and must
land inside the sandbox root; anything else is refused with an error *result* the model
can read, never read and never raised. `.git` is hidden: it is repository machinery, and
reading it would let the agent see the fixture's history instead of reviewing the diff.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict, ValidationError

from assay._util.json_schema import describe_validation_error, tool_input_schema
from assay._util.paths import PathEscape, resolve_inside, safe_relative
from assay.agents import _search
from assay.errors import ConfigError
from assay.models.base import ToolSpec

__all__ = ["ToolLimits", "ToolResult", "SandboxTools"]

OUTSIDE = "path is outside the repository"


@dataclass(frozen=True)
class ToolLimits:
    """Bounds that keep one tool call cheap for the model's context and for the machine."""

    read_max_bytes: int = 256 * 1024
    read_max_lines: int = 2000
    read_max_line_bytes: int = 2000
    grep_max_matches: int = 200
    grep_max_file_bytes: int = 1024 * 1024
    grep_max_line_chars: int = 400
    search_time_budget_s: float = 2.0
    """What one grep or glob may take; its worker process is killed at it."""
    glob_max_results: int = 500
    list_max_entries: int = 1000
    attempt_max_result_chars: int = 4 * 1024 * 1024
    """All the tool results of one attempt together: a model asked (by the code it reads)
    to read the same large file hundreds of times would otherwise grow the conversation
    past what the API accepts, and assay's memory with it."""


@dataclass(frozen=True)
class ToolResult:
    content: str
    is_error: bool = False


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadFileInput(_Input):
    """Read a text file of the repository, with line numbers."""

    path: str
    """Repository-relative path, e.g. `src/app.py`."""
    start_line: int | None = None
    """First line to return (1-based, inclusive); default 1."""
    end_line: int | None = None
    """Last line to return (inclusive); default: as far as the size cap allows."""


class GrepInput(_Input):
    """Search file contents with a Python regular expression."""

    pattern: str
    """A Python `re` pattern, matched against each line."""
    path: str = "."
    """Directory (or file) to search, relative to the repository root."""
    glob: str | None = None
    """Only search files whose path matches this glob, e.g. `*.py` or `src/**/*.ts`."""
    ignore_case: bool = False
    """Match case-insensitively."""


class GlobInput(_Input):
    """List repository files whose path matches a glob pattern."""

    pattern: str
    """`**` spans directories, `*` stays within one; a pattern without `/` matches any depth."""


class ListDirInput(_Input):
    """List a directory's entries; directories end with `/`."""

    path: str = "."
    """Directory relative to the repository root."""


_INPUTS: dict[str, type[_Input]] = {
    "read_file": ReadFileInput,
    "grep": GrepInput,
    "glob": GlobInput,
    "list_dir": ListDirInput,
}


class SandboxTools:
    """The four read-only tools over the sandbox at `root`."""

    def __init__(self, root: Path, *, limits: ToolLimits | None = None) -> None:
        self.root = Path(os.path.realpath(root))
        self.limits = limits or ToolLimits()

    @staticmethod
    @functools.cache
    def specs() -> tuple[ToolSpec, ...]:
        """The tools' specs, built once per process: they are the same for every case."""
        return tuple(
            ToolSpec(
                name=name, description=model.__doc__ or name, input_schema=tool_input_schema(model)
            )
            for name, model in _INPUTS.items()
        )

    async def call(self, name: str, arguments: Any) -> ToolResult:
        """Run tool `name`; bad input or a refused path comes back as an error result."""
        model = _INPUTS.get(name)
        if model is None:
            return ToolResult(f"unknown tool {name!r}; available: {', '.join(_INPUTS)}", True)
        try:
            parsed = model.model_validate(arguments if isinstance(arguments, dict) else {})
        except ValidationError as exc:
            return ToolResult(f"invalid input for {name}: {describe_validation_error(exc)}", True)
        try:
            if isinstance(parsed, ReadFileInput):
                return self._read_file(parsed)
            if isinstance(parsed, GrepInput):
                return await self._grep(parsed)
            if isinstance(parsed, GlobInput):
                return await self._glob(parsed)
            assert isinstance(parsed, ListDirInput)
            return self._list_dir(parsed)
        except _Refused as refused:
            return ToolResult(self._sandbox_relative(str(refused)), True)
        except OSError as exc:
            return ToolResult(self._sandbox_relative(f"{name} failed: {exc.strerror or exc}"), True)

    def _sandbox_relative(self, message: str) -> str:
        """`message` with the sandbox's host path taken out: the model sees repository paths,
        never where on the host the sandbox lives (or any other host path)."""
        root = str(self.root)
        return message.replace(root + os.sep, "").replace(root, ".")

    # -- path confinement -----------------------------------------------------------------
    def resolve(self, raw: str) -> Path:
        """The real path of repo path `raw`; raises _Refused when it escapes or enters `.git`."""
        text = raw.strip()
        if text in ("", ".", "./"):
            return self.root
        try:
            safe_relative(text)
        except PathEscape as exc:
            raise _Refused(f"{OUTSIDE}: {exc}") from None
        try:
            path = resolve_inside(self.root, text, root_is_real=True)
        except ConfigError:
            # resolve_inside names the host paths; the model gets the repository's view only.
            raise _Refused(f"{OUTSIDE}: {raw!r} (a symlink on the way leads out of it)") from None
        if _search.HIDDEN_DIRS.intersection(PurePosixPath(self._relative(path)).parts):
            raise _Refused(f"{raw!r} is inside .git, which is not part of the repository's files")
        return path

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path != self.root else "."

    # -- tools --------------------------------------------------------------------------------
    def _read_file(self, args: ReadFileInput) -> ToolResult:
        path = self.resolve(args.path)
        if path.is_dir():
            return ToolResult(f"{args.path} is a directory; use list_dir", True)
        if not path.is_file():
            return ToolResult(f"no such file: {args.path}", True)
        start = max(args.start_line or 1, 1)
        if args.end_line is not None and args.end_line < start:
            return ToolResult(f"end_line {args.end_line} is before start_line {start}", True)
        with path.open("rb") as handle:
            if _search.looks_binary(handle.read(_search.BINARY_SNIFF_BYTES)):
                return ToolResult(
                    f"{args.path} is a binary file; only text files can be read", True
                )
            handle.seek(0)
            lines, stopped_at = self._read_lines(handle, start, args.end_line)
        if not lines and stopped_at is None:
            if start == 1:
                return ToolResult("(empty file)")
            return ToolResult(f"{args.path} has fewer than {start} lines", True)
        body = "".join(f"{number:>6}\t{text}\n" for number, text in lines)
        if stopped_at is not None:
            body += (
                f"[truncated at line {stopped_at - 1} (output cap "
                f"{self.limits.read_max_lines} lines / {self.limits.read_max_bytes} bytes); "
                f"call read_file with start_line={stopped_at} to continue]\n"
            )
        return ToolResult(body)

    def _read_lines(
        self, handle: BinaryIO, start: int, end: int | None
    ) -> tuple[list[tuple[int, str]], int | None]:
        """Lines start..end as (number, text); the second value is where a cap cut the output.

        A line longer than `read_max_line_bytes` (minified code, data) is cut with a marker
        and never read into memory whole.
        """
        limit = self.limits.read_max_line_bytes
        lines: list[tuple[int, str]] = []
        size = 0
        number = 0
        while raw := handle.readline(limit + 1):
            number += 1
            cut = len(raw) > limit and not raw.endswith(b"\n")
            if cut:
                _skip_rest_of_line(handle)
            if number < start:
                continue
            if end is not None and number > end:
                break
            text = raw[:limit].decode("utf-8", "replace").rstrip("\r\n")
            if cut:
                text += f" [line cut at {limit} bytes]"
            size += len(text) + 8
            if len(lines) >= self.limits.read_max_lines or size > self.limits.read_max_bytes:
                return lines, number
            lines.append((number, text))
        return lines, None

    async def _grep(self, args: GrepInput) -> ToolResult:
        try:
            re.compile(args.pattern)
        except re.error as exc:
            return ToolResult(f"invalid regular expression {args.pattern!r}: {exc}", True)
        if args.glob and (problem := _glob_problem(args.glob)) is not None:
            return ToolResult(problem, True)
        start = self.resolve(args.path)
        if not start.exists():
            return ToolResult(f"no such file or directory: {args.path}", True)
        request = {
            "root": str(self.root),
            "start": str(start),
            "pattern": args.pattern,
            "ignore_case": args.ignore_case,
            "glob": args.glob,
            "max_matches": self.limits.grep_max_matches,
            "max_file_bytes": self.limits.grep_max_file_bytes,
            "max_line_chars": self.limits.grep_max_line_chars,
        }
        outcome = await self._in_worker("grep", request)
        summary = outcome.summary
        lines = [f"{r['path']}:{r['line']}: {r['text']}" for r in outcome.records]
        notes = []
        if summary is None:
            notes.append(
                f"search stopped at its {self.limits.search_time_budget_s:g} s time budget; "
                "results are partial"
            )
        elif summary.get("limit"):
            notes.append(f"stopped at {self.limits.grep_max_matches} matches; narrow the search")
        elif summary.get("skipped_large"):
            notes.append(
                f"{summary['skipped_large']} file(s) over "
                f"{self.limits.grep_max_file_bytes} bytes not searched"
            )
        text = "\n".join(lines) if lines else "no matches"
        return ToolResult(text + "".join(f"\n[{note}]" for note in notes))

    async def _glob(self, args: GlobInput) -> ToolResult:
        if not args.pattern.strip():
            return ToolResult("empty glob pattern", True)
        if ".." in PurePosixPath(args.pattern).parts:
            return ToolResult(f"{OUTSIDE}: {args.pattern!r}", True)
        if (problem := _glob_problem(args.pattern)) is not None:
            return ToolResult(problem, True)
        request = {
            "tool": "glob",
            "root": str(self.root),
            "pattern": args.pattern,
            "max_results": self.limits.glob_max_results,
        }
        outcome = await self._in_worker("glob", request)
        matches = [str(record["path"]) for record in outcome.records]
        shown = matches[: self.limits.glob_max_results]
        text = "\n".join(shown) if shown else "no files match"
        if outcome.summary is None:
            text += (
                f"\n[matching stopped at its {self.limits.search_time_budget_s:g} s time budget; "
                "results are partial: simplify the pattern]"
            )
        elif len(matches) > len(shown):
            text += f"\n[capped at {self.limits.glob_max_results} paths; use a narrower pattern]"
        return ToolResult(text)

    async def _in_worker(self, name: str, request: dict[str, Any]) -> _search.SearchOutcome:
        """`request` run by the search worker within the time budget (its summary None
        when stopped there); a worker that crashed is the tool's error result."""
        outcome = await _search.run_search_process(request, self.limits.search_time_budget_s)
        if outcome.summary is None and not outcome.timed_out:
            last = outcome.stderr.strip().splitlines()[-1:] or ["no output"]
            raise _Refused(f"{name} failed: {last[0]}")
        return outcome

    def _list_dir(self, args: ListDirInput) -> ToolResult:
        path = self.resolve(args.path)
        if not path.is_dir():
            return ToolResult(f"not a directory: {args.path}", True)
        entries = []
        for entry in sorted(os.scandir(path), key=lambda e: e.name):
            if entry.name in _search.HIDDEN_DIRS:
                continue
            # is_dir() follows a symlink; the entry is shown, but entering it is still checked.
            entries.append(entry.name + ("/" if _is_dir(entry) else ""))
        shown = entries[: self.limits.list_max_entries]
        text = "\n".join(shown) if shown else "(empty directory)"
        if len(entries) > len(shown):
            text += f"\n[{len(entries) - len(shown)} more entries not shown]"
        return ToolResult(text)


def _glob_problem(pattern: str) -> str | None:
    """Why `pattern` cannot be matched (a reversed range `[z-a]`), for the model to fix."""
    try:
        _search.glob_regex(pattern)
    except re.error as exc:
        return f"invalid glob pattern {pattern!r}: {exc.msg}"
    return None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a symlink loop: listed as what it is, a name that leads nowhere
        return False


def _skip_rest_of_line(handle: BinaryIO) -> None:
    while chunk := handle.readline(64 * 1024):
        if chunk.endswith(b"\n"):
            return


class _Refused(Exception):
    """A path the tools will not touch, or a search that failed; its message is the tool's
    error result."""
