"""Run history: every run's report kept beside the report directory, bounded by count.

`<report-dir>/../.assay-history/` (or `--history DIR` / `ASSAY_HISTORY`) holds
`index.json` (one small entry per run, oldest first: run id, git sha, branch, time, score,
counts) and `reports/<run id>.json`. The newest `keep` runs stay (`ASSAY_HISTORY_KEEP`,
default 20). `assay history` lists them, `--flaky` names the cases whose pass/fail flipped
across them, `assay compare` reads `@last`, `@<branch>` or a run id from here, and
report.html draws the score trend.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from assay._util import json_text
from assay._util.textout import write_in_slices
from assay.core.files import safe_segment
from assay.core.numbers import read_number
from assay.errors import ConfigError
from assay.isolation.git import repository_fact
from assay.options import HISTORY_KEEP_VARIABLE
from assay.report.json_stream import report_json_chunks
from assay.report.model import Report

__all__ = [
    "DEFAULT_KEEP",
    "HISTORY_DIRNAME",
    "INDEX_FILE",
    "HistoryEntry",
    "adopt_runs",
    "flaky_cases",
    "history_dir_for",
    "history_for_viewer",
    "history_keep",
    "quarantine_snippet",
    "read_history",
    "record_run",
    "resolve_ref",
    "trend_mermaid",
    "usable_history_dir",
]

HISTORY_DIRNAME = ".assay-history"
INDEX_FILE = "index.json"
DEFAULT_KEEP = 20
_FORMAT = "assay.history.v1"


class HistoryEntry(BaseModel):
    """One run in the index."""

    model_config = ConfigDict(extra="ignore")
    run_id: str
    git_sha: str | None = None
    branch: str | None = None
    time: str
    score: float | None = None
    gate: str
    total: int
    passed: int
    failed: int
    errors: int
    skipped: int
    report: str
    """The kept report, relative to the history directory."""


def history_dir_for(report_dir: Path, explicit: Path | None = None) -> Path:
    """`explicit` (`--history`), else `ASSAY_HISTORY`, else `.assay-history` beside the
    report directory."""
    if explicit is not None:
        return explicit
    if os.environ.get("ASSAY_HISTORY"):
        return Path(os.environ["ASSAY_HISTORY"])
    return report_dir.resolve().parent / HISTORY_DIRNAME


def usable_history_dir(
    report_dir: Path, explicit: Path | None = None
) -> tuple[Path | None, str | None]:
    """The history a run will be recorded in, checked before the run rather than after it.

    (the directory, None); or (None, why) when the default one, beside the report
    directory, cannot be written: the run goes on without it. ConfigError when a chosen
    one (`--history`, `ASSAY_HISTORY`) cannot be written or `ASSAY_HISTORY_KEEP` is bad.
    """
    history_keep()
    directory = history_dir_for(report_dir, explicit)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".assay-probe-"):
            pass
    except OSError as exc:
        why = f"cannot write the run history {directory}: {exc.strerror or exc}"
        if explicit is not None or os.environ.get("ASSAY_HISTORY"):
            raise ConfigError(f"{why} (--history, ASSAY_HISTORY)") from None
        return None, f"{why}; this run is not added to it"
    return directory, None


def history_keep() -> int:
    """How many runs the history keeps: `ASSAY_HISTORY_KEEP`, default 20."""
    text = os.environ.get(HISTORY_KEEP_VARIABLE, "")
    if not text:
        return DEFAULT_KEEP
    try:
        keep = int(read_number(text, int))
    except ValueError:
        keep = 0
    if keep < 1:
        raise ConfigError(f"{HISTORY_KEEP_VARIABLE}={text!r}: expected a whole number of runs >= 1")
    return keep


def current_branch() -> str | None:
    """The branch this run is for: GitHub's (the PR's head, else the ref), else git's."""
    for name in ("GITHUB_HEAD_REF", "GITHUB_REF_NAME"):
        if os.environ.get(name):
            return os.environ[name]
    branch = repository_fact(["rev-parse", "--abbrev-ref", "HEAD"])
    return branch if branch != "HEAD" else None


def read_history(history_dir: Path) -> list[HistoryEntry]:
    """The index, oldest first; empty when there is none. A broken index is a ConfigError."""
    index = history_dir / INDEX_FILE
    try:
        document = json_text.loads(index.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{index}: not a readable history index ({exc}); delete it") from None
    try:
        runs = document["runs"] if isinstance(document, dict) else None
        if not isinstance(runs, list):
            raise ValueError("no `runs` list")
        return [HistoryEntry.model_validate(run) for run in runs]
    except (ValueError, ValidationError, KeyError) as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(f"{index}: not a history index ({first}); delete it") from None


def _write(path: Path, pieces: Iterable[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        write_in_slices(out, pieces)
    os.replace(temporary, path)


def _report_text(report: Report) -> Iterator[str]:
    """A history's copy of a report: compact JSON, a case at a time."""
    yield from report_json_chunks(report)
    yield "\n"


def record_run(
    report: Report, history_dir: Path, *, branch: str | None = None, keep: int | None = None
) -> HistoryEntry:
    """Add `report` to the history (replacing a run of the same id) and trim it to `keep`."""
    keep = history_keep() if keep is None else keep
    entry = _entry_for(report, branch if branch is not None else current_branch())
    _write(history_dir / entry.report, _report_text(report))
    return _keep_runs(history_dir, [entry], keep=keep)[-1]


def adopt_runs(
    history_dir: Path, runs: list[tuple[Report, str | None]], *, keep: int | None = None
) -> list[HistoryEntry]:
    """Put earlier runs (each report with its branch, oldest first) before the ones
    `history_dir` already holds (a run it holds is kept as it is); trim to `keep`.

    Each index entry is built from its report here, whatever index it came from, and each
    report is written under a name made from its run id: restored history cannot point
    the index anywhere else.
    """
    keep = history_keep() if keep is None else keep
    held = {e.run_id for e in read_history(history_dir)}
    entries = []
    for report, branch in runs[-keep:]:
        if report.run.id in held:
            continue
        entry = _entry_for(report, branch)
        _write(history_dir / entry.report, _report_text(report))
        entries.append(entry)
    return _keep_runs(history_dir, entries, keep=keep, before=True)


def _entry_for(report: Report, branch: str | None) -> HistoryEntry:
    summary = report.summary
    return HistoryEntry(
        run_id=report.run.id,
        git_sha=report.run.git_sha,
        branch=branch,
        time=report.run.started_at,
        score=summary.score,
        gate=summary.gate,
        total=summary.total,
        passed=summary.passed,
        failed=summary.failed,
        errors=summary.errors,
        skipped=summary.skipped,
        report=f"reports/{safe_segment(report.run.id)}.json",
    )


def _keep_runs(
    history_dir: Path, added: list[HistoryEntry], *, keep: int, before: bool = False
) -> list[HistoryEntry]:
    """Write the index with `added` after (or `before`) the runs it holds, replacing runs of
    the same id; drop the oldest past `keep`, their reports too."""
    ids = {e.run_id for e in added}
    held = [e for e in read_history(history_dir) if e.run_id not in ids]
    runs = added + held if before else held + added
    dropped, runs = runs[:-keep], runs[-keep:]
    document = {"format": _FORMAT, "runs": [e.model_dump() for e in runs]}
    _write(history_dir / INDEX_FILE, [json.dumps(document, indent=2), "\n"])
    kept = {e.report for e in runs}
    for old in dropped:
        path = _kept_report(history_dir, old)
        if old.report not in kept and path is not None:
            path.unlink(missing_ok=True)
    return runs


_REPORT_NAME = re.compile(r"reports/[^/\\.][^/\\]*")


def _kept_report(history_dir: Path, entry: HistoryEntry) -> Path | None:
    """Where `entry`'s report is, or None when the index names anything but a file of
    `reports/` (an index edited to name `../../victim`: trimming unlinks that path)."""
    if _REPORT_NAME.fullmatch(entry.report) is None:
        return None
    return history_dir / entry.report


def resolve_ref(ref: str, history_dir: Path) -> Path:
    """`@last`, `@<branch>` (its newest run) or a run id -> that run's kept report."""
    runs = read_history(history_dir)
    if ref == "@last":
        found = runs[-1:]
    elif ref.startswith("@"):
        found = [e for e in runs if e.branch == ref[1:]][-1:]
    else:
        found = [e for e in runs if e.run_id == ref][-1:]
    if not found:
        known = ", ".join(e.run_id for e in runs[-5:]) or "none yet"
        raise ConfigError(
            f"{ref}: no such run in the history at {history_dir} (newest: {known}); "
            "see `assay history`"
        )
    path = _kept_report(history_dir, found[0])
    if path is None:
        raise ConfigError(
            f"{history_dir / INDEX_FILE}: run {found[0].run_id} names {found[0].report!r}, "
            "not a report of the history's reports/ directory; delete the index"
        )
    return path


def flaky_cases(history_dir: Path) -> list[tuple[str, list[str]]]:
    """Cases whose pass/fail flipped across the kept runs, with their statuses oldest first."""
    seen: dict[str, list[str]] = defaultdict(list)
    for entry in read_history(history_dir):
        path = _kept_report(history_dir, entry)
        try:
            if path is None:
                raise ValueError(entry.report)
            document = json_text.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a report trimmed or damaged by hand: the others still count
        for case in document.get("cases", []):
            key = case["id"] + (f" [{case['model']}]" if case.get("model") else "")
            seen[key].append(case["status"])
    return [
        (key, statuses)
        for key, statuses in sorted(seen.items())
        if {"pass", "fail"} <= set(statuses)
    ]


def quarantine_snippet(flaky: list[tuple[str, list[str]]]) -> str:
    """The `[tool.assay] quarantine` list that keeps `flaky` (from `flaky_cases`) out of the
    gate: their case ids, each once (a quarantine names a case, whatever its model)."""
    ids = sorted({key.split(" [", 1)[0] for key, _ in flaky})
    # `#\u0023[` is the same TOML string as `##[`, which a CI log would read as a command.
    quoted = [json.dumps(i).replace("##[", "#\\u0023[") for i in ids]
    return "quarantine = [\n" + "".join(f"    {q},\n" for q in quoted) + "]\n"


def history_for_viewer(history_dir: Path | None) -> list[dict[str, Any]]:
    """The index as report.html's trend reads it (empty without history)."""
    if history_dir is None:
        return []
    try:
        return [e.model_dump() for e in read_history(history_dir)]
    except ConfigError:
        return []  # a broken index must not cost the run its viewer


_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def trend_mermaid(entries: list[HistoryEntry]) -> str | None:
    """The score across the kept runs as a mermaid `xychart-beta` block (GitHub draws it in
    a job summary); None with fewer than two scored runs."""
    scored = [e for e in entries if e.score is not None]
    if len(scored) < 2:
        return None
    labels = ", ".join(f'"{_LABEL_UNSAFE.sub("", e.run_id)[:12] or "run"}"' for e in scored)
    scores = ", ".join(f"{e.score:.3f}" for e in scored)
    return (
        "### Score across runs\n\n```mermaid\nxychart-beta\n"
        f'    title "Score, last {len(scored)} runs"\n'
        f"    x-axis [{labels}]\n"
        '    y-axis "score" 0 --> 1\n'
        f"    line [{scores}]\n```\n"
    )
