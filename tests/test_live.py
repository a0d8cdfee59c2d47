"""The builtin agent and the judges against the real API (opt-in: `pytest --live` with a key).

A tiny inline corpus with bugs no competent reviewer misses: one review case (judged by
the findings judge) and one rubric case (judged by the rubric judge). `ASSAY_LIVE_MODEL`
picks the model (default: assay's default model).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from assay.agents.builtin import TRANSCRIPT_NAME, BuiltinAgent
from assay.grading.base import Grade
from assay.grading.findings_judge import FindingsJudge
from assay.grading.rubric_judge import RubricJudge
from assay.models.names import DEFAULT_MODEL, bridge_env
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, Expectation, FixtureFile, ReviewSpec, RubricSpec
from assay.workspace.build import build_sandbox

pytestmark = [pytest.mark.live, pytest.mark.timeout(600)]

LOOKUP = """\
import sqlite3


def find_user(conn: sqlite3.Connection, username: str):
    query = "SELECT id, email FROM users WHERE name = '" + username + "'"
    return conn.execute(query).fetchone()
"""
CONFIG_DIFF = """\
--- a/config.py
+++ b/config.py
@@ -1,2 +1,3 @@
 import os
 DEBUG = os.environ.get("DEBUG") == "1"
+STRIPE_SECRET_KEY = "sk_live_51HxQ2eAbCdEfGhIjKlMnOpQr"
"""


def _case(kind: str, spec: Any, tmp_path: Path) -> Case:
    return Case(
        id=f"live/{kind}",
        suite="live",
        name=kind,
        kind=kind,  # type: ignore[arg-type]
        format="review-yaml",
        source_path=tmp_path / "live.yaml",
        source_line=1,
        spec=spec,
    )


def _run(case: Case, grader: Any, tmp_path: Path) -> tuple[AgentOutput, Grade, AttemptContext]:
    bridge_env()
    model = os.environ.get("ASSAY_LIVE_MODEL") or DEFAULT_MODEL
    ctx = AttemptContext(
        case=case,
        sandbox=build_sandbox(case, parent=tmp_path),
        model=model,
        judge_model=model,
        timeout_s=300,
        attempt=0,
        artifacts_dir=tmp_path / "artifacts",
    )

    async def both() -> tuple[AgentOutput, Grade]:
        output = await BuiltinAgent(options=RunOptions()).run(ctx)
        return output, await grader(options=RunOptions()).grade(ctx, output)

    output, grade = asyncio.run(both())
    return output, grade, ctx


def test_live_review_case(tmp_path: Path) -> None:
    fixture = tmp_path / "fixtures" / "lookup.py"
    fixture.parent.mkdir()
    fixture.write_text(LOOKUP, encoding="utf-8")
    spec = ReviewSpec(
        given="a user lookup that builds SQL by string concatenation",
        files=(FixtureFile(fixture, "sql-injection/lookup.py"),),
        should_find=(Expectation("SQL injection through the username parameter"),),
        should_not_find=("style, formatting, or naming issues",),
    )
    output, grade, ctx = _run(_case("review", spec, tmp_path), FindingsJudge, tmp_path)
    assert (ctx.artifacts_dir / TRANSCRIPT_NAME).is_file()
    assert any(f["location"]["path"] == "sql-injection/lookup.py" for f in output.findings)
    assert grade.status == "pass", grade.reason
    assert output.usage.input_tokens > 0 and grade.usage.input_tokens > 0


def test_live_rubric_case(tmp_path: Path) -> None:
    base = tmp_path / "case" / "base"
    base.mkdir(parents=True)
    (base / "config.py").write_text('import os\nDEBUG = os.environ.get("DEBUG") == "1"\n')
    diff = tmp_path / "case" / "input.diff"
    diff.write_text(CONFIG_DIFF, encoding="utf-8")
    spec = RubricSpec(
        rubric="The agent MUST identify the hardcoded Stripe secret key in config.py and "
        "recommend loading it from the environment or a secret store.",
        diff=diff,
        base=base,
        description="Security: hardcoded API key",
    )
    output, grade, _ = _run(_case("rubric", spec, tmp_path), RubricJudge, tmp_path)
    assert output.review_text
    assert grade.judge["verdict"]["met_rubric"] is True, grade.judge["verdict"]["rationale"]
    assert grade.score >= 0.5
