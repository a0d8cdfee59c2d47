"""Reports for the viewer's tests: many cases, several suites and models, hostile text."""

from __future__ import annotations

import json
from pathlib import Path

from assay.core.checks import Check, FindingRef
from assay.core.files import ATTEMPT_DIFF_FILE, artifacts_dir
from assay.report.gate.stats import summarize
from assay.report.model import Attempt, CaseResult, Report, RunInfo, Source

HOSTILE = "<script>window.__pwned = 1</script></script><!-- & \u2028"
DIFF = (
    "diff --git a/app/db.py b/app/db.py\n--- a/app/db.py\n+++ b/app/db.py\n"
    '@@ -1,2 +1,3 @@\n import sqlite3\n+q = f"SELECT * FROM t WHERE id={uid}"\n'
    " conn = sqlite3.connect(':memory:')\n"
)


def viewer_report(count: int, report_dir: Path | None = None, *, run_id: str = "run1") -> Report:
    """`count` cases over three suites and two models; case 0 fails with a hostile finding."""
    statuses = ["fail", "pass", "pass", "error", "skipped"]
    cases = []
    for i in range(count):
        status = statuses[i % len(statuses)]
        suite = ("review", "tasks", "rubric")[i % 3]
        model = ("model-a", "model-b")[i % 2]
        case_id = f"{suite}/case-{i:04d}"
        findings = [
            {
                "severity": "high",
                "title": HOSTILE if i == 0 else f"finding of {i}",
                "location": {"path": "app/db.py", "startLine": 2},
            }
        ]
        checks = [
            Check(
                id="should_find[0]",
                kind="should_find",
                status="fail" if status == "fail" else "pass",
                message="no finding names the SQL injection" if status == "fail" else "ok",
                expected="SQL injection in the query",
                finding=None if status == "fail" else FindingRef.of(findings, 0),
            )
        ]
        attempts = [
            Attempt(status=status, score=1.0 if status == "pass" else 0.0, transcript=None)
            for _ in range(2 if i == 0 else 1)
        ]
        if i == 0:
            attempts[1] = Attempt(status="pass", score=1.0)
        cases.append(
            CaseResult(
                id=case_id,
                suite=suite,
                kind="review" if suite == "review" else "task" if suite == "tasks" else "rubric",
                source=Source(path=f"evals/{suite}.yaml", line=i + 1),
                model=model,
                status=status,
                score=None
                if status in ("error", "skipped")
                else (1.0 if status == "pass" else 0.0),
                reason=f"should_find[0]: {HOSTILE}" if i == 0 else "",
                checks=checks,
                findings=findings,
                attempts=attempts,
                flaky=i == 0,
            )
        )
        if report_dir is not None and i < 5:
            folder = artifacts_dir(report_dir, case_id, model, 0)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / ATTEMPT_DIFF_FILE).write_text(DIFF, encoding="utf-8")
            transcript = {
                "messages": [
                    {"role": "user", "content": "review this"},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "name": "read_file", "input": {"path": "x"}}
                        ],
                    },
                ]
            }
            (folder / "transcript.json").write_text(json.dumps(transcript), encoding="utf-8")
            relative = (folder / "transcript.json").relative_to(report_dir)
            cases[-1].attempts[0] = (
                cases[-1].attempts[0].model_copy(update={"transcript": str(relative)})
            )
    return Report(
        run=RunInfo(
            id=run_id,
            started_at="2026-01-01T00:00:00Z",
            assay_version="0",
            threshold=0.75,
            models=["model-a", "model-b"],
        ),
        summary=summarize(cases, threshold=0.75, max_errors=0, duration_s=3.0),
        cases=cases,
    )


def baseline_of(head: Report, *, run_id: str = "base1") -> Report:
    """`head`'s report as a baseline where every 5th case from 0 passed (so it is newly
    failing now) and every 5th from 1 failed (newly passing now); the rest as in head."""
    cases = []
    for i, case in enumerate(head.cases):
        if i % 5 in (0, 1):
            status = "pass" if i % 5 == 0 else "fail"
            case = case.model_copy(
                update={"status": status, "score": 1.0 if status == "pass" else 0.0}
            )
        cases.append(case)
    return Report(
        run=head.run.model_copy(update={"id": run_id, "git_sha": "b" * 40}),
        summary=summarize(cases, threshold=0.75, max_errors=0, duration_s=3.0),
        cases=cases,
    )
