"""The Action's `check: true`: `assay check` on the suites of a pull request whose evals run.

The same options as the run (paths, judge model, concurrency, timeout). Its lines go to the
log and, fenced, to the job summary; each case that cannot pass or cannot fail (or could
not be checked) is an error annotation on its suite file, and fails the job.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from assay._util.prompt_text import fenced
from assay.action import commands
from assay.action.outputs import append_step_summary
from assay.runner.check import check
from assay.runner.check_report import BROKEN, report_lines

if TYPE_CHECKING:
    from assay.options import RunOptions
    from assay.runner.check_report import CheckReport

__all__ = ["check_suites", "check_summary"]


def check_suites(options: RunOptions, *, step_summary: Path | None, workspace: Path) -> bool:
    """Check the run's suites; True when a case is broken or could not be checked.
    Raises RunnerFileError when the job summary cannot be written."""

    commands.log("assay: checking that every case can pass and can fail (check: true)")
    report = check(options)
    for line in report_lines(report):
        commands.log(line)
    for case in report.cases:
        if case.status in BROKEN or case.status == "error":
            commands.error(
                f"{case.id}: {case.status}: {case.reason}",
                file=_relative(Path(case.source.path), workspace),
                line=case.source.line,
                title=f"assay check: {case.status}",
            )
    append_step_summary(step_summary, check_summary(report))
    return report.failed


def check_summary(report: CheckReport) -> str:
    """The job summary's section: the verdict, then every line, fenced."""

    verdict = "a case is broken" if report.failed else "every case can pass and can fail"
    body = fenced("\n".join(report_lines(report)), "text")
    return f"### assay check: {verdict}\n\n{body}\n"


def _relative(path: Path, workspace: Path) -> str:
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)
