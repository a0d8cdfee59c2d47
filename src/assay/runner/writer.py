"""The report directory: checked before the run, filled after it.

`report.json` is the contract; summary.md, junit.xml, (on request) agent-eval-report.json
and cassandra-results.json, and any plugin's files are renderings of it, one per renderer
in `assay.report.renderers`. Every file is written to a temporary name and
renamed, so a reader never sees half a report, and a renderer that fails half-way (or
gives something other than text) leaves no file.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util.secrets import redact_chunks
from assay._util.textout import write_in_slices
from assay.core.files import (
    CASES_DIR,
    JUNIT_FILE,
    LOCK_FILE,
    PVYAI_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
)
from assay.errors import ConfigError
from assay.registry.plugin_calls import is_interruption, plugin_origin, what_it_raised
from assay.report.history import record_run
from assay.report.model import REPORT_CONTRACT
from assay.report.renderers import (
    BUILTIN_RENDERERS,
    RENDERERS,
    RenderContext,
    pvyai_reports,
    renderers_in_order,
)

if TYPE_CHECKING:
    from assay.report.model import Report
    from assay.report.renderers import Renderer
    from assay.suites.case import Case

__all__ = [
    "JUNIT_FILE",
    "PVYAI_FILE",
    "REPORT_FILE",
    "SUMMARY_FILE",
    "prepare_report_dir",
    "remove_earlier_reports",
    "pvyai_reports",
    "refuse_foreign_files",
    "write_rendering",
    "write_report_dir",
]


def prepare_report_dir(path: Path) -> Path:
    """Create `path` and prove it is writable now, not after an hour of evals; refuse it
    when it holds files of someone else's that the report would replace."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".assay-probe-"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(f"cannot write the report directory {path}: {reason}") from None
    refuse_foreign_files(path, option="--report-dir")
    # Written in place (appended, created below): through a link they would land elsewhere.
    linked = [name for name in (RESULTS_FILE, CASES_DIR) if (path / name).is_symlink()]
    if linked:
        raise ConfigError(
            f"{path / linked[0]} is a symbolic link; assay writes its report files only in "
            "the report directory itself: remove it, or choose another --report-dir"
        )
    return path.resolve()


def refuse_foreign_files(directory: Path, *, option: str, also: Sequence[str] = ()) -> None:
    """ConfigError when `directory` holds a file a report would replace (or `also`) though
    assay never wrote a report there: a user's own summary.md, or a `cases/` of theirs, is
    never overwritten."""
    if _written_by_assay(directory):
        return
    ours = {REPORT_FILE, RESULTS_FILE, CASES_DIR, *(r.filename for r in renderers_in_order())}
    held = sorted(name for name in {*ours, *also} if os.path.lexists(directory / name))
    if held:
        raise ConfigError(
            f"{directory} already holds {', '.join(held)}, which a report would replace, "
            f"and no report of assay's: write it to a new or empty directory, or to one "
            f"assay wrote before ({option})"
        )


def write_report_dir(
    report: Report,
    path: Path,
    *,
    cases: Sequence[Case],
    pvyai: bool = False,
    cassandra: bool = False,
    inspect_log: bool = False,
    history_dir: Path | None = None,
    baseline: Report | None = None,
) -> list[Path]:
    """Write every registered renderer's file (report.json first); return the paths.

    `run` and `merge` both come here, so a renderer (a plugin's included) is written by both.
    With `history_dir` the run is recorded in that history first, so report.html's trend
    ends with it; with `baseline`, summary.md and report.html compare the run with it.
    The history is a nice-to-have: when it cannot be written the report still is, and
    then the OSError is raised. A plugin's renderer that fails is a warning on stderr (its
    file is not written); one of assay's own is a ConfigError once the others are written.
    """
    history_failed: OSError | None = None
    if history_dir is not None:
        try:
            record_run(report, history_dir)
        except OSError as exc:
            history_failed, history_dir = exc, None
    ctx = RenderContext(
        report,
        cases,
        path,
        pvyai=pvyai,
        cassandra=cassandra,
        inspect_log=inspect_log,
        history_dir=history_dir,
        baseline=baseline,
    )
    written = []
    broken: list[str] = []
    for renderer in renderers_in_order():
        try:  # a renderer's bug: the other files are still written
            text = _rendering(renderer, ctx)
            if text is None:  # nothing of this run's (no --pvyai-report, no rubric case)
                _remove_earlier(path / renderer.filename)
            else:
                written.append(_write(path / renderer.filename, text))
        except _RenderingFailed as failed:
            if renderer.name in BUILTIN_RENDERERS:  # assay's own report is incomplete
                broken.append(f"renderer {renderer.name!r} ({renderer.filename}) {failed}")
            else:
                _warn_broken(renderer, failed)
                _remove_earlier(path / renderer.filename)
    if broken:
        raise ConfigError("; ".join(broken))
    if history_failed is not None:
        raise history_failed
    return written


def remove_earlier_reports(path: Path) -> None:
    """Remove every report file an earlier run left in `path` (report.json and every
    renderer's file, a plugin's too), as a run starts.

    A run killed before it writes its report must not leave the earlier run's passing
    report.json beside its own partial results.jsonl: `assay compare`, `assay view` and a
    CI step would read that report as this run's. The caller holds the directory's lock,
    and `prepare_report_dir` made sure the files of these names are assay's. results.jsonl
    (truncated, or continued by --resume) and `cases/` (artifacts a resumed result points
    at; each attempt's own directory is written afresh) are left to the run.
    """
    for name in {REPORT_FILE, *(renderer.filename for renderer in renderers_in_order())}:
        _remove_earlier(path / name)


def _remove_earlier(target: Path) -> None:
    """An earlier run's file of a renderer that wrote nothing this time would pass for this
    run's (`refuse_foreign_files` made sure the directory's files of these names are
    assay's)."""
    with contextlib.suppress(OSError):
        target.unlink()


def _written_by_assay(directory: Path) -> bool:
    """Its lock file (`.assay.lock`) is there, which every run and merge leaves; or, for a
    report directory downloaded from CI (artifacts leave hidden files out), a report.json
    of assay's, which opens with its contract."""
    if (directory / LOCK_FILE).exists():
        return True
    try:
        with (directory / REPORT_FILE).open("rb") as report:
            head = report.read(64)
    except OSError:
        return False
    return b"".join(head.split()).startswith(f'{{"contract":"{REPORT_CONTRACT}"'.encode())


class _RenderingFailed(Exception):
    """A renderer raised, or gave something other than text: what it did, as
    `failed: KeyError: 'x'` or `returned bytes: expected ...`."""


_TEXT = "expected a str, an iterable of str, or None"


def _rendering(renderer: Renderer, ctx: RenderContext) -> str | Iterator[str] | None:
    """The renderer's text, its pieces checked as they are written; _RenderingFailed when
    it raises (half-way through its pieces too: the renderer's failure, not a write error)
    or gives anything but text."""
    text = _calling(renderer.render, ctx)
    if text is None or isinstance(text, str):
        return text
    if isinstance(text, bytes | bytearray) or not isinstance(text, Iterable):
        raise _RenderingFailed(f"returned {type(text).__name__}: {_TEXT}")
    return _rendered(text)


def _rendered(pieces: Iterable[object]) -> Iterator[str]:
    iterator = _calling(iter, pieces)
    while True:
        try:
            piece = _calling(next, iterator)
        except StopIteration:
            return
        if not isinstance(piece, str):
            raise _RenderingFailed(f"gave a piece of type {type(piece).__name__}: {_TEXT}")
        yield piece


def _calling(function: Callable[[Any], Any], argument: Any) -> Any:
    """`function(argument)` of a renderer's code, whatever it raises (SystemExit too, which
    would otherwise end `assay run` after the run with no gate) as _RenderingFailed."""
    try:
        return function(argument)
    except StopIteration:
        raise
    except BaseException as exc:
        if is_interruption(exc):
            raise
        raise _RenderingFailed(f"failed: {what_it_raised(exc)}") from exc


def _warn_broken(renderer: Renderer, failed: _RenderingFailed) -> None:
    """A plugin's file is a nice-to-have: the report and the gate stand without it, so its
    failure is a warning, not the run's verdict (which is still printed and is the exit
    code)."""
    print(
        f"warning: {plugin_origin(RENDERERS, renderer.name)} ({renderer.filename}) {failed}; "
        f"{renderer.filename} was not written",
        file=sys.stderr,
    )


def write_rendering(target: Path, text: str | Iterable[str]) -> Path:
    """One rendering of a report written outside a run (`assay export`): as every report
    file is, redacted, and whole or not at all."""
    return _write(target, text)


def _write(target: Path, text: str | Iterable[str]) -> Path:
    # The report was redacted already; renderings may add text of their own.
    pieces = redact_chunks([text] if isinstance(text, str) else text)
    # A plain open (not mkstemp) so the file gets the user's umask, like any report.
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="\n") as out:
            write_in_slices(out, pieces)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target
