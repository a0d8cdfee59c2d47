"""Why the gate failed when no case failed: `passed 8 failed 0` above `gate: FAIL 0.50`
reads as a bug unless the summary says what made the difference.

The gate judges the mean case score, not the pass count: a rubric case passes when the
judge says the rubric is met (Cassandra's rule) yet scores (judge score - 1) / 4, so eight
passing rubric cases can average 0.50. Errors past --max-errors (or counted as misses),
skipped cases under --require-all or with nothing scored, and an incomplete run fail the
gate with no failed case too. One line, said by the terminal summary and summary.md.
"""

from __future__ import annotations

from assay.core.counting import count_of
from assay.report.model import Report

__all__ = ["gate_failed_without_failures"]


def gate_failed_without_failures(report: Report) -> str | None:
    """`why: no case failed, but ...`, or None when the gate passed or a case failed."""
    summary, run = report.summary, report.run
    if summary.gate != "fail" or summary.failed > 0:
        return None
    reasons: list[str] = []
    low = [
        case
        for case in report.cases
        if case.status == "pass" and case.score is not None and case.score < run.threshold
    ]
    if low:
        rubric = all(case.kind == "rubric" for case in low)
        reasons.append(
            f"{count_of(len(low), 'passing case')} scored below the threshold "
            f"{run.threshold:.2f}"
            + (
                " (a rubric case passes when the judge says the rubric is met, and scores "
                "(judge score - 1) / 4; the gate takes the mean score)"
                if rubric
                else " (the gate takes the mean score, not the pass count)"
            )
        )
    if summary.errors:
        how = (
            "counted as misses (--errors-count-as fail)"
            if run.errors_count_as == "fail"
            else f"--max-errors allows {run.max_errors}"
        )
        reasons.append(f"{count_of(summary.errors, 'error')} ({how})")
    if summary.skipped:
        why = "--require-all is set" if run.require_all else "not scored"
        reasons.append(f"{count_of(summary.skipped, 'case')} skipped ({why})")
    if not reasons:
        return None
    return "why: no case failed, but " + "; ".join(reasons)
