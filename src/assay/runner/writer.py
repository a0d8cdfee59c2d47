"""The report directory: checked before the run, filled after it.

`report.json` is the contract; summary.md, junit.xml, (on request) agent-eval-report.json
and cassandra-results.json, and any plugin's files are renderings of it, one per renderer
in `assay.report.renderers`. Every file is written to a temporary name and
renamed, so a reader never sees half a report.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

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
from assay.report.model import REPORT_CONTRACT
from assay.report.renderers import (
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
    "pvyai_reports",
    "refuse_foreign_files",
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
    history_dir: Path | None = None,
    baseline: Report | None = None,
) -> list[Path]:
    """Write every registered renderer's file (report.json first); return the paths.

    `run` and `merge` both come here, so a renderer (a plugin's included) is written by both.
    With `history_dir` the run is recorded in that history first, so report.html's trend
    ends with it; with `baseline`, summary.md and report.html compare the run with it.
    The history is a nice-to-have: when it cannot be written the report still is, and
    then the OSError is raised.
    """
    history_failed: OSError | None = None
    if history_dir is not None:
        from assay.report.history import record_run

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
        history_dir=history_dir,
        baseline=baseline,
    )
    written = []
    broken: list[str] = []
    for renderer in renderers_in_order():
        try:
            text = renderer.render(ctx)
        except Exception as exc:  # a plugin's bug: the other files are still written
            broken.append(_broken(renderer, exc))
            continue
        if text is None:
            continue
        try:
            pieces = text if isinstance(text, str) else _rendered(text)
            written.append(_write(path / renderer.filename, pieces))
        except _RenderingFailed as failed:  # its pieces raised half-way: the same
            broken.append(_broken(renderer, failed.__cause__))
    if broken:
        raise ConfigError("; ".join(broken))
    if history_failed is not None:
        raise history_failed
    return written


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
    """A renderer's pieces raised while being written (its cause is what they raised)."""


def _rendered(pieces: Iterable[str]) -> Iterator[str]:
    """`pieces`, with whatever producing them raises wrapped in _RenderingFailed: a
    renderer that fails half-way is the renderer's failure, not a write error."""
    iterator = iter(pieces)
    while True:
        try:
            piece = next(iterator)
        except StopIteration:
            return
        except Exception as exc:
            raise _RenderingFailed from exc
        yield piece


def _broken(renderer: Renderer, exc: BaseException | None) -> str:
    what = f"{type(exc).__name__}: {exc}" if exc is not None else "unknown"
    return f"renderer {renderer.name!r} ({renderer.filename}) failed: {what}"


def _write(target: Path, text: str | Iterable[str]) -> Path:
    from assay._util.secrets import redact_chunks

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
