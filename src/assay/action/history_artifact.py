"""The run history across workflow runs: restored from the default branch's newest history
artifact before the evals run (action.yml uploads the history directory after them).

The artifact (input `history-artifact`, default `assay-history`) holds what the history
directory holds: `index.json` and `reports/<run id>.json`. It is taken from a `push`,
`workflow_dispatch` or `schedule` run on the default branch whose gate passed or failed
(`action/artifacts.py` decides what may serve), so a pull request's run shows the trend of
the default branch with itself at the end, and never feeds another run.

An artifact is untrusted input all the same. The archive is read in memory, capped in
size, in members and in what it expands to; a member that is absolute, climbs with `..`
or is a symlink rejects it; index.json and every report go through the readers any history
and report file does, and are written back by `report.history.adopt_runs` under names it
makes itself. The newest `ASSAY_HISTORY_KEEP` runs are taken.

History is a nice-to-have: a bad artifact is one `::warning::`, missing permission one
`::notice::`, no artifact yet a log line, and the run goes on either way.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from assay.action import commands
from assay.action.artifacts import (
    ArtifactUnavailable,
    TrustedArtifact,
    download_artifact,
    too_big,
    trusted_artifacts,
)
from assay.action.github_api import describe_error, github_errors, is_permission_error
from assay.core.counting import count_of
from assay.core.paths import PathEscape, safe_relative
from assay.errors import ConfigError, ConfigErrors

if TYPE_CHECKING:
    from github import Github

    from assay.report.model import Report

__all__ = ["MAX_ARCHIVE_BYTES", "MAX_EXPANDED_BYTES", "restore_history"]

MAX_ARCHIVE_BYTES = 50 * 1024 * 1024
"""Cap on the downloaded archive."""
MAX_EXPANDED_BYTES = 256 * 1024 * 1024
"""Cap on what the members read from it add up to (each one is read no further than this)."""
MAX_INDEX_BYTES = 1024 * 1024
"""Cap on index.json alone: a few KB in practice, and parsed whole before the last runs
are kept, so a compressed bomb of it would cost seconds and gigabytes."""
MAX_MEMBERS = 1000
"""More members than this (beyond twice the runs kept) and the archive is refused unread."""
_CONCLUSIONS = ("success", "failure")
"""A run whose gate failed is history too; a cancelled one may have left half a directory."""
_SYMLINK = 0o120000
_TITLE = "assay: history"


class _BadArtifact(Exception):
    """The artifact cannot be restored; the warning's text."""


def restore_history(
    client: Github | None,
    *,
    repository: str,
    artifact_name: str,
    history_dir: Path,
    keep: int,
    allow_http: bool = False,
) -> int:
    """Restore the newest trusted history artifact into `history_dir`; the runs added."""
    if client is None or not repository:
        commands.log("assay: no run history restored (no github-token)")
        return 0
    try:
        repo = client.get_repo(repository)
        found = next(iter(trusted_artifacts(repo, artifact_name, conclusions=_CONCLUSIONS)), None)
        if found is None:
            commands.log(
                f"assay: no `{artifact_name}` artifact on {repo.default_branch} yet; "
                "the history starts with this run"
            )
            return 0
        data = download_artifact(
            client,
            found.artifact.archive_download_url,
            allow_http=allow_http,
            max_bytes=MAX_ARCHIVE_BYTES,
        )
        added = _restore(
            data, history_dir=history_dir, keep=keep, origin=_origin(found, artifact_name)
        )
    except github_errors() as exc:
        _unreachable(exc)
        return 0
    except (ArtifactUnavailable, _BadArtifact) as exc:
        commands.warning(f"no run history restored: {exc}", title=_TITLE)
        return 0
    except Exception as exc:  # history is optional; the eval run is not
        commands.warning(f"no run history restored: {type(exc).__name__}: {exc}", title=_TITLE)
        return 0
    restored = count_of(added, "earlier run")
    commands.log(f"assay: restored {restored} from {_origin(found, artifact_name)}")
    return added


def _origin(found: TrustedArtifact, name: str) -> str:
    return f"the `{name}` artifact of run {found.run_id} on {found.branch}"


def _unreachable(exc: BaseException) -> None:
    described = describe_error(exc)
    if described.startswith("404"):
        # No such endpoint or repository for this token (GitHub hides what it will not show).
        commands.log(f"assay: no run history restored ({described})")
    elif is_permission_error(exc):
        commands.notice(
            f"no run history restored ({described}): the job needs `permissions: actions: read` "
            "(or set `keep-history: false`)",
            title=_TITLE,
        )
    else:
        commands.warning(f"no run history restored ({described})", title=_TITLE)


def _restore(data: bytes, *, history_dir: Path, keep: int, origin: str) -> int:
    # lazy: start-up (not loaded with this module)
    from assay.report.history import INDEX_FILE, adopt_runs, read_history

    try:
        with (
            zipfile.ZipFile(io.BytesIO(data)) as archive,
            tempfile.TemporaryDirectory(prefix="assay-history-") as scratch,
        ):
            members = _checked_members(archive, keep=keep, origin=origin)
            budget = _Budget(MAX_EXPANDED_BYTES, f"what {origin} expands to")
            index = members.get(PurePosixPath(INDEX_FILE))
            if index is None:
                raise _BadArtifact(f"{origin} holds no {INDEX_FILE}")
            staged = Path(scratch)
            _Budget(MAX_INDEX_BYTES, f"{INDEX_FILE} in {origin}").extract(
                archive, index, staged / INDEX_FILE
            )
            try:
                entries = read_history(staged)[-keep:]
            except ConfigError as exc:
                raise _BadArtifact(
                    _shown(exc, staged / INDEX_FILE, f"{INDEX_FILE} in {origin}")
                ) from None
            runs: list[tuple[Report, str | None]] = []
            skipped: list[str] = []
            for number, entry in enumerate(entries):
                report = _report(
                    archive, members, entry.report, entry.run_id, staged, number, budget
                )
                if isinstance(report, str):
                    skipped.append(f"{entry.run_id}: {report}")
                else:
                    runs.append((report, entry.branch))
    except (zipfile.BadZipFile, EOFError, ValueError, OSError, RuntimeError) as exc:
        raise _BadArtifact(f"{origin} is not a readable zip archive ({exc})") from None
    if skipped:
        more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
        commands.warning(
            f"{count_of(len(skipped), 'run')} of {origin} left out: {skipped[0]}{more}",
            title=_TITLE,
        )
    restored = {report.run.id for report, _ in runs}
    held = {entry.run_id for entry in read_history(history_dir)}
    kept = adopt_runs(history_dir, runs, keep=keep)
    return sum(e.run_id in restored and e.run_id not in held for e in kept)


def _checked_members(
    archive: zipfile.ZipFile, *, keep: int, origin: str
) -> dict[PurePosixPath, zipfile.ZipInfo]:
    infos = archive.infolist()
    limit = max(MAX_MEMBERS, 2 * keep + 10)
    if len(infos) > limit:
        raise _BadArtifact(f"{origin} holds {len(infos)} members, more than {limit}")
    members: dict[PurePosixPath, zipfile.ZipInfo] = {}
    declared = 0
    for info in infos:
        try:
            name = safe_relative(info.filename)
        except PathEscape:
            raise _BadArtifact(f"{origin} has an unsafe member name {info.filename!r}") from None
        if (info.external_attr >> 16) & 0o170000 == _SYMLINK:
            raise _BadArtifact(f"{origin} holds a symlink ({info.filename!r})")
        declared += info.file_size
        if declared > MAX_EXPANDED_BYTES:
            raise _BadArtifact(too_big(f"what {origin} expands to", MAX_EXPANDED_BYTES))
        if not info.is_dir():
            members[name] = info
    return members


class _Budget:
    """What the members read so far may still add up to (their headers may lie)."""

    def __init__(self, left: int, what: str) -> None:
        self.cap = self.left = left
        self.what = what

    def extract(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> None:
        with archive.open(info) as handle:
            content = handle.read(self.left + 1)
        if len(content) > self.left:
            raise _BadArtifact(too_big(self.what, self.cap))
        self.left -= len(content)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def _report(
    archive: zipfile.ZipFile,
    members: dict[PurePosixPath, zipfile.ZipInfo],
    name: str,
    run_id: str,
    staged: Path,
    number: int,
    budget: _Budget,
) -> Report | str:
    """The run's report, or why it was left out."""
    from assay.report.read import read_report  # lazy: start-up (not loaded with this module)

    try:
        info = members.get(safe_relative(name))
    except PathEscape:
        return f"its index entry names {name!r}"
    if info is None:
        return f"{name} is not in the archive"
    target = staged / "reports" / f"{number}.json"  # our own name, never the member's
    budget.extract(archive, info, target)
    try:
        report = read_report(target)
    except ConfigError as exc:
        return _shown(exc, target, name)
    finally:
        target.unlink(missing_ok=True)
    if report.run.id != run_id:
        return f"{name} is the report of run {report.run.id!r}"
    return report


def _shown(exc: ConfigError, staged_file: Path, shown: str) -> str:
    """`shown:line:col: message`, naming the file as it is in the artifact (not our copy)."""
    first = exc.errors[0] if isinstance(exc, ConfigErrors) and exc.errors else exc
    where = first.location
    place = shown
    if where is not None and where.line:
        place += f":{where.line}" + (f":{where.col}" if where.col else "")
    # read_history's advice to delete a local index means nothing for an artifact.
    message = first.message.replace(f"{staged_file}: ", "").removesuffix("; delete it")
    return f"{place}: {message}"
