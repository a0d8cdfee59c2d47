"""The baseline a run is compared with: input `baseline-report` (a path, or `auto`).

- A path names a report.json, or a directory holding one (a downloaded report artifact);
  relative paths start at the workspace.
- `auto` takes the newest report artifact (input `baseline-artifact`) of a successful
  `push`, `workflow_dispatch` or `schedule` run on the repository's default branch, found
  through the REST API (`action/artifacts.py`). Runs from forks and pull requests are never
  a baseline: their artifacts hold whatever the PR's code wrote.

The archive is read in memory and only its report.json is taken (at the top, or the one
report.json inside it); a member name that is absolute or climbs with `..` rejects the
archive, and the download and the report are capped at MAX_BYTES each. The report is
validated as any report file is.

A baseline is a nice-to-have: every failure to get one becomes one `::warning::` and the
run goes on without a comparison. It never changes the gate.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from assay.action import commands
from assay.action.github_api import describe_error, github_errors, is_permission_error
from assay.core.counting import count_of
from assay.core.files import REPORT_FILE
from assay.core.paths import PathEscape, safe_relative
from assay.errors import ConfigError, ConfigErrors
from assay.report.model import Report

if TYPE_CHECKING:
    from github import Github

__all__ = ["AUTO", "MAX_BYTES", "BaselineReport", "load_baseline_report"]

AUTO = "auto"
"""The `baseline-report` value that fetches the default branch's latest report artifact."""
MAX_BYTES = 50 * 1024 * 1024
"""Cap on the downloaded archive and on the report.json inside it."""
REPORT_NAME = REPORT_FILE


class BaselineUnavailable(Exception):
    """Why there is no baseline; shown as the warning's text."""


@dataclass(frozen=True)
class BaselineReport:
    report: Report
    label: str
    """What the comparison is titled against: the default branch, or "baseline"."""
    origin: str
    """Where it came from, for the log: a path, or the artifact and its run."""


def load_baseline_report(
    spec: str,
    *,
    workspace: Path,
    repository: str,
    client: Github | None,
    artifact_name: str,
    allow_http: bool = False,
) -> BaselineReport | None:
    """The baseline `spec` names, or None after one `::warning::` saying why there is none.

    `allow_http` accepts a plain-http download redirect (only when the API itself is
    reached over http, as with a loopback server in tests).
    """
    try:
        if spec.strip().lower() == AUTO:
            baseline = _latest_artifact(
                client, repository=repository, artifact_name=artifact_name, allow_http=allow_http
            )
        else:
            baseline = _from_path(spec.strip(), workspace=workspace)
    except BaselineUnavailable as exc:
        commands.warning(f"no baseline comparison: {exc}", title="assay: baseline")
        return None
    except Exception as exc:  # a comparison is optional; the eval run is not
        # PyGithub can also fail with AssertionError / RuntimeError on odd redirects or
        # payloads; none of that may cost the user their eval results.
        commands.warning(
            f"no baseline comparison: {type(exc).__name__}: {exc}", title="assay: baseline"
        )
        return None
    commands.log(f"assay: comparing with {baseline.origin}")
    return baseline


def _from_path(raw: str, *, workspace: Path) -> BaselineReport:
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = workspace / path
    if path.is_dir():
        path = path / REPORT_NAME
    return BaselineReport(_read(path, shown=raw), label="baseline", origin=raw)


def _read(path: Path, *, shown: str) -> Report:
    from assay.report.read import read_report  # lazy: start-up (not loaded with this module)

    try:
        return read_report(path)
    except ConfigErrors as exc:
        first = exc.errors[0] if exc.errors else exc
        more = (
            f" (and {count_of(len(exc.errors) - 1, 'more problem')})" if len(exc.errors) > 1 else ""
        )
        raise BaselineUnavailable(f"not a valid report: {_located(shown, first)}{more}") from None
    except ConfigError as exc:
        raise BaselineUnavailable(_located(shown, exc)) from None


def _located(shown: str, problem: ConfigError) -> str:
    """`shown:line:col: message`, naming the file as the user knows it (not a temp copy)."""
    where = problem.location
    place = shown
    if where is not None and where.line:
        place += f":{where.line}" + (f":{where.col}" if where.col else "")
    return f"{place}: {problem.message}"


# -- the default branch's latest artifact ----------------------------------------------


def _latest_artifact(
    client: Github | None, *, repository: str, artifact_name: str, allow_http: bool
) -> BaselineReport:
    # lazy: start-up (not loaded with this module)
    from assay.action.artifacts import ArtifactUnavailable, download_artifact, trusted_artifacts

    if client is None:
        raise BaselineUnavailable("`baseline-report: auto` needs the github-token input")
    if not repository:
        raise BaselineUnavailable("GITHUB_REPOSITORY is not set")
    try:
        repo = client.get_repo(repository)
        for found in trusted_artifacts(repo, artifact_name):
            data = download_artifact(
                client,
                found.artifact.archive_download_url,
                allow_http=allow_http,
                max_bytes=MAX_BYTES,
            )
            origin = f"the `{artifact_name}` artifact of run {found.run_id} on {found.branch}"
            report = _report_from_archive(data, origin=origin)
            return BaselineReport(report, label=found.branch, origin=origin)
        branch = repo.default_branch
    except ArtifactUnavailable as exc:
        raise BaselineUnavailable(str(exc)) from None
    except github_errors() as exc:
        hint = "; the job needs `permissions: actions: read`" if is_permission_error(exc) else ""
        raise BaselineUnavailable(
            f"could not fetch the baseline artifact ({describe_error(exc)}){hint}"
        ) from None
    raise BaselineUnavailable(
        f"no unexpired `{artifact_name}` artifact from a successful run on {branch} "
        f"(upload one on pushes to {branch}; see docs/github-action.md#comparing-with-main)"
    )


def _too_big(what: str) -> str:
    from assay.action.artifacts import too_big  # lazy: start-up (not loaded with this module)

    return too_big(what, MAX_BYTES)


def _report_from_archive(data: bytes, *, origin: str) -> Report:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            member = _report_member(archive.infolist(), origin=origin)
            if member.file_size > MAX_BYTES:
                raise BaselineUnavailable(_too_big(f"{member.filename} in {origin}"))
            with archive.open(member) as handle:
                content = handle.read(MAX_BYTES + 1)
    except (zipfile.BadZipFile, EOFError, ValueError, OSError, RuntimeError) as exc:
        # RuntimeError: an encrypted member; NotImplementedError (a RuntimeError): an
        # unsupported compression method.
        raise BaselineUnavailable(f"{origin} is not a readable zip archive ({exc})") from None
    if len(content) > MAX_BYTES:
        raise BaselineUnavailable(_too_big(f"{REPORT_NAME} in {origin}"))
    # read_report gives the located validation errors every report file gets.
    with tempfile.TemporaryDirectory(prefix="assay-baseline-") as scratch:
        path = Path(scratch) / REPORT_NAME
        path.write_bytes(content)
        return _read(path, shown=f"{REPORT_NAME} in {origin}")


def _report_member(members: list[zipfile.ZipInfo], *, origin: str) -> zipfile.ZipInfo:
    """report.json at the top of the archive, else the only one inside it."""
    found: list[tuple[PurePosixPath, zipfile.ZipInfo]] = []
    for member in members:
        try:
            name = safe_relative(member.filename)
        except PathEscape:
            raise BaselineUnavailable(
                f"{origin} has an unsafe member name {member.filename!r}"
            ) from None
        if name.name == REPORT_NAME and not member.is_dir():
            found.append((name, member))
    top = [member for name, member in found if len(name.parts) == 1]
    if top:
        return top[0]
    if len(found) == 1:
        return found[0][1]
    if not found:
        raise BaselineUnavailable(f"{origin} holds no {REPORT_NAME}")
    listed = ", ".join(str(name) for name, _ in found[:5])
    raise BaselineUnavailable(f"{origin} holds several {REPORT_NAME} files ({listed})")
