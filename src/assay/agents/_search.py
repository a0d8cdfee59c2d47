"""Walking, glob matching and regex search over a sandbox tree, using the standard library only.

`assay.agents.tools` runs this file as a script for `grep` and `glob`
(`run_search_process`, the request as JSON on stdin): Python's `re` cannot be interrupted,
and a glob is a regex too, so a pathological pattern from the model is only truly bounded
when the match runs in a process that can be killed at the deadline. Matches stream out
as JSON lines, so whatever was found before the kill is still returned.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, NamedTuple

HIDDEN_DIRS = frozenset({".git"})
"""Directory names never shown to the agent (repository internals, not code under review)."""
BINARY_SNIFF_BYTES = 8192


def is_inside(root_real: str, path: str) -> bool:
    """Whether `path`, with every symlink resolved, stays inside `root_real` (already real)
    and out of its hidden directories: a symlink to `.git/config` is refused as read_file
    refuses the path itself."""
    real = os.path.realpath(path)
    if real == root_real:
        return True
    if not real.startswith(root_real + os.sep):
        return False
    parts = real[len(root_real) + 1 :].split(os.sep)
    return HIDDEN_DIRS.isdisjoint(parts)


def walk_files(root_real: str, start: str) -> Iterator[str]:
    """Yield repo-relative POSIX paths of files under `start`, sorted, never entering `.git`.

    Symlinked directories are not descended into, so a link pointing out of the sandbox
    cannot widen the walk; symlinked files are yielded and their targets checked by readers.
    """
    if not os.path.isdir(start):
        yield os.path.relpath(start, root_real).replace(os.sep, "/")
        return
    for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in HIDDEN_DIRS)
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            yield os.path.relpath(full, root_real).replace(os.sep, "/")


@lru_cache(maxsize=64)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob: `**` spans directories, `*` and `?` stay within one path segment.

    A pattern without `/` matches the file name at any depth (`*.py` finds `a/b/c.py`),
    as in ripgrep's `--glob` and .gitignore.
    """
    text = pattern.strip()
    if text.startswith("./"):
        text = text[2:]
    elif text.startswith("/"):  # anchored at the repository root
        text = text.lstrip("/")
    elif "/" not in text:
        text = "**/" + text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append("[^/]*")
            i += 1
        elif text[i] == "?":
            out.append("[^/]")
            i += 1
        elif text[i] == "[" and (end := _class_end(text, i)) != -1:
            out.append(_class_regex(text[i + 1 : end]))
            i = end + 1
        else:  # an unclosed `[` is a literal, as in fnmatch
            out.append(re.escape(text[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _class_end(text: str, start: int) -> int:
    """Where the class opened at `start` closes; -1 when it is unclosed. A `]` right after
    `[` or `[!` is a member, not the end (`[]a]`, `[!]a]`), as in fnmatch."""
    first = start + 2 if text.startswith("[!", start) else start + 1
    if text.startswith("]", first):
        first += 1
    return text.find("]", first)


def _class_regex(body: str) -> str:
    """A class's regex: its ranges kept, every other member escaped, so that `[`, `\\`,
    `&&` or `--` mean themselves (Python would read some as nested sets and warn)."""
    negate = body.startswith("!")
    members = _CLASS_MEMBER.sub(_escaped_member, body[1:] if negate else body)
    return f"[{'^' if negate else ''}{members}]"


_CLASS_MEMBER = re.compile(r"(.)-(.)|(.)", re.DOTALL)
"""A range (`a-z`) or one character, read left to right."""


def _escaped_member(match: re.Match[str]) -> str:
    low, high, single = match.groups()
    return re.escape(single) if single is not None else f"{re.escape(low)}-{re.escape(high)}"


def glob_matches(pattern: str, relative_path: str) -> bool:
    return glob_regex(pattern).match(relative_path) is not None


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head


STARTUP_TIMEOUT_S = 15.0
"""How long the worker may take to start; the search budget only runs once it is ready,
so a busy machine slows grep down instead of making it return nothing."""


class SearchOutcome(NamedTuple):
    records: list[dict[str, Any]]
    """Matches: {path, line, text}."""
    summary: dict[str, Any] | None
    """The worker's closing line; None when it was killed at the budget or crashed."""
    timed_out: bool
    stderr: str


async def run_search_process(request: dict[str, Any], budget_s: float) -> SearchOutcome:
    """Run this file as a worker on `request`, killed at `budget_s`; matches so far are kept.

    `-I -S`: no user site, no site-packages, and an empty environment: the worker needs
    only the standard library, starts fast, and sees no credentials.
    """
    import asyncio  # lazy: the worker process (this file under -I -S) never needs it

    # lazy: the worker runs this file with -I -S, where assay cannot be imported
    from assay.isolation.processes import start_piped

    process = await start_piped([sys.executable, "-I", "-S", os.path.abspath(__file__)], env={})
    assert process.stdin and process.stdout and process.stderr
    process.stdin.write(json.dumps(request).encode())
    process.stdin.close()
    records: list[dict[str, Any]] = []
    summary: dict[str, Any] | None = None
    timed_out = False
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    try:
        while summary is None:
            remaining = max(deadline - time.monotonic(), 0)
            try:
                line = await asyncio.wait_for(process.stdout.readline(), remaining)
            except TimeoutError:
                timed_out = True
                break
            if not line:
                break
            record = json.loads(line)
            if record.get("ready"):
                deadline = time.monotonic() + budget_s
            elif record.get("done"):
                summary = record
            else:
                records.append(record)
    finally:
        if process.returncode is None:
            process.kill()
        stderr = await process.stderr.read()
        await process.wait()
    return SearchOutcome(records, summary, timed_out, stderr.decode("utf-8", "replace"))


def _search(request: dict[str, object]) -> None:
    root_real = str(request["root"])
    start = str(request["start"])
    rx = re.compile(str(request["pattern"]), re.IGNORECASE if request.get("ignore_case") else 0)
    include = request.get("glob")
    max_matches = int(str(request["max_matches"]))
    max_file_bytes = int(str(request["max_file_bytes"]))
    max_line_chars = int(str(request["max_line_chars"]))
    _send({"ready": True})
    found = scanned = skipped_large = skipped_binary = 0
    for relative in walk_files(root_real, start):
        if include and not glob_matches(str(include), relative):
            continue
        full = os.path.join(root_real, relative)
        if not is_inside(root_real, full) or not os.path.isfile(full):
            continue
        if os.path.getsize(full) > max_file_bytes:
            skipped_large += 1
            continue
        with open(full, "rb") as handle:
            data = handle.read()
        if looks_binary(data[:BINARY_SNIFF_BYTES]):
            skipped_binary += 1
            continue
        scanned += 1
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            if rx.search(line[:max_line_chars]):
                _send({"path": relative, "line": number, "text": line[:max_line_chars]})
                found += 1
                if found >= max_matches:
                    _send({"done": True, "scanned": scanned, "limit": True})
                    return
    _send(
        {
            "done": True,
            "scanned": scanned,
            "limit": False,
            "skipped_large": skipped_large,
            "skipped_binary": skipped_binary,
        }
    )


def _glob(request: dict[str, object]) -> None:
    """The files whose path matches `pattern`, streamed, stopping past `max_results`.

    In this process for the same reason as grep: the glob is a regex, and a pattern such as
    `**/**/**/**/**/**/**/**/x` backtracks for seconds per path, then for ever.
    """
    root_real = str(request["root"])
    pattern = str(request["pattern"])
    max_results = int(str(request["max_results"]))
    _send({"ready": True})
    found = 0
    for relative in walk_files(root_real, root_real):
        if glob_matches(pattern, relative):
            _send({"path": relative})
            found += 1
            if found > max_results:
                _send({"done": True, "limit": True})
                return
    _send({"done": True, "limit": False})


def _send(record: dict[str, Any]) -> None:
    """One JSON line to the parent, flushed: what was found before a kill still arrives."""
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    job = json.loads(sys.stdin.read())
    _glob(job) if job.get("tool") == "glob" else _search(job)
