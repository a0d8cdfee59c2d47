"""A dry run: build every selected case's sandbox and keep it; run no agent, call no model.

Builds share a small thread pool (each is mostly file writes plus one git process); the
outcomes come back in case order. The sandboxes are kept so the user can look inside
them: that is what a dry run is for.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import SandboxError
from assay.report.model import CaseResult
from assay.runner.combine import source_of
from assay.runner.kinds import kind_of
from assay.runner.reporting import build_report, now
from assay.suites.case import Case
from assay.workspace import Sandbox, build_sandbox, private_work_root

if TYPE_CHECKING:
    from assay.options import RunSettings
    from assay.report.model import Report
    from assay.runner.plan import PlannedRun

__all__ = ["DryRun", "build_dry_run", "dry_run_report"]

_WORKERS = 4


@dataclass(frozen=True)
class DryRun:
    root: Path
    """The run's private work directory, holding every sandbox built."""
    outcomes: tuple[tuple[Case, Sandbox | SandboxError], ...]
    """Each case with its kept sandbox, or why it could not be built."""

    @property
    def failed(self) -> int:
        return sum(isinstance(outcome, SandboxError) for _, outcome in self.outcomes)


def build_dry_run(
    cases: Sequence[Case], *, work_root: Path | None, skill_override: Path | None
) -> DryRun:
    """Build the sandbox of every case in `cases` under a fresh directory in `work_root`.

    Raises ConfigError when `work_root` cannot be used.
    """
    root = private_work_root(work_root)
    with ThreadPoolExecutor(max_workers=min(_WORKERS, max(1, len(cases)))) as pool:
        built = list(pool.map(lambda case: _build(case, root, skill_override), cases))
    return DryRun(root, tuple(zip(cases, built, strict=True)))


def _build(case: Case, root: Path, skill_override: Path | None) -> Sandbox | SandboxError:
    try:
        builder = kind_of(case).sandbox
        return build_sandbox(case, parent=root, skill_override=skill_override, builder=builder)
    except SandboxError as exc:
        return exc


def dry_run_report(settings: RunSettings, runs: Sequence[PlannedRun], built: DryRun) -> Report:
    """What a dry run did, as a report (written nowhere): one entry per case, `skipped`
    with its kept sandbox as `workspace`, or `error` saying why it could not be built."""

    results = []
    for case, outcome in built.outcomes:
        failed = isinstance(outcome, SandboxError)
        results.append(
            CaseResult(
                id=case.id,
                suite=case.suite,
                kind=case.kind,
                source=source_of(case.source_path, case.source_line),
                status="error" if failed else "skipped",
                reason=str(outcome) if failed else "dry run: the sandbox was built; nothing ran",
                error_source="sandbox" if failed else None,
                workspace=None if isinstance(outcome, SandboxError) else str(outcome.path),
            )
        )
    return build_report(
        settings, runs, results, started_at=now(), duration_s=0.0, interrupted=False
    )
