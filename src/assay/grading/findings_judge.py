"""The findings judge: grades a review case against its should_find / should_not_find.

Warden's semantics: ONE judge call per case answers every assertion; the required
severity of a should_find is checked here, in code, against the finding the judge
matched. The case fails when a required should_find is unmet, a required severity
differs, or any should_not_find is violated; optional should_find never fail it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any, Literal

from assay._util.prompt_text import fenced
from assay.core.checks import Check, FindingRef
from assay.core.severities import normalise_severity, warden_severity
from assay.errors import JudgeError
from assay.grading.base import Grade
from assay.grading.judge_verdicts import (
    FindingsVerdict,
    bounded_findings_schema,
    findings_verdict_problems,
)
from assay.grading.judging import JudgeCall, load_judge_prompt
from assay.models.base import ToolSpec
from assay.models.names import DEFAULT_MODEL
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Expectation, ReviewSpec

__all__ = ["PROMPT_VERSION", "FindingsJudge"]

PROMPT_VERSION = "findings-judge.v3"
_CALL = JudgeCall("record_verdict", FindingsVerdict)
CheckStatus = Literal["pass", "fail", "error", "skipped"]


class FindingsJudge:
    """Grader for review cases."""

    def __init__(self, *, options: RunOptions) -> None:
        self.options = options

    async def grade(self, ctx: AttemptContext, output: AgentOutput) -> Grade:
        spec = ctx.case.spec
        if not isinstance(spec, ReviewSpec):
            raise JudgeError(f"the findings judge grades review cases, not {ctx.case.kind!r}")
        model = ctx.judge_model or ctx.model or DEFAULT_MODEL
        findings = output.findings
        if not spec.should_find and not spec.should_not_find:
            return Grade(status="pass", score=1.0, reason="the case has no assertions to judge")

        def problems(verdict: FindingsVerdict) -> list[str]:
            return findings_verdict_problems(
                verdict,
                should_find=len(spec.should_find),
                should_not_find=len(spec.should_not_find),
                findings=len(findings),
            )

        answer = await _CALL.ask(
            model=model,
            system=load_judge_prompt(PROMPT_VERSION),
            prompt=judge_prompt(spec, findings),
            options=self.options,
            sample=ctx.attempt,
            check=problems,
            tool=_bounded_tool(len(spec.should_find), len(spec.should_not_find), len(findings)),
        )
        checks = assertion_checks(spec, answer.verdict, findings)
        failed = [c for c in checks if c.status == "fail" and getattr(c, "required", True)]
        return Grade(
            status="fail" if failed else "pass",
            score=0.0 if failed else 1.0,
            reason="; ".join(f"{c.id}: {c.message}" for c in failed),
            checks=checks,
            judge={
                "model": model,
                "prompt_version": PROMPT_VERSION,
                "attempts": answer.attempts,
                "verdict": answer.verdict.model_dump(),
            },
            usage=answer.usage,
        )


@functools.lru_cache(maxsize=256)
def _bounded_tool(should_find: int, should_not_find: int, findings: int) -> ToolSpec:
    """The verdict tool as this case's judge sees it: its schema bounded by the counts."""
    schema = bounded_findings_schema(
        should_find=should_find, should_not_find=should_not_find, findings=findings
    )
    return dataclasses.replace(_CALL.tool, input_schema=schema)


def judge_prompt(spec: ReviewSpec, findings: list[dict[str, Any]]) -> str:
    """The case as the judge sees it: every list indexed, the findings as JSON data.

    As in Warden's judge, each should_find says whether it is required and the severity
    its finding must have, and each finding its severity and confidence, so the judge can
    pick, of two findings reporting one problem, the one with that severity (the check
    itself is `_severity_check`'s)."""
    expected = "\n".join(f"[{i}] {_expectation(e)}" for i, e in enumerate(spec.should_find))
    forbidden = "\n".join(f"[{i}] {text}" for i, text in enumerate(spec.should_not_find))
    shown = [_finding_for_judge(i, finding) for i, finding in enumerate(findings)]
    return (
        f"## Scenario\n\n{spec.given}\n\n"
        f"## Expected findings (should_find)\n\n{expected or '(none)'}\n\n"
        f"## Must not be reported (should_not_find)\n\n{forbidden or '(none)'}\n\n"
        f"## The reviewer's findings ({len(findings)})\n\n"
        f"{fenced(json.dumps(shown, indent=2, ensure_ascii=False), 'json')}\n\n"
        f"Call record_verdict with exactly {len(spec.should_find)} should_find entries and "
        f"exactly {len(spec.should_not_find)} should_not_find entries."
    )


def _expectation(expectation: Expectation) -> str:
    severity = f" [required severity: {expectation.severity}]" if expectation.severity else ""
    required = " (required)" if expectation.required else " (optional)"
    return f"{expectation.finding}{severity}{required}"


def _finding_for_judge(index: int, finding: dict[str, Any]) -> dict[str, Any]:
    keys = ("severity", "confidence", "title", "description", "location")
    shown = {key: finding[key] for key in keys if key in finding}
    # On Warden's scale, as `_severity_check` compares it (`critical` is `high`).
    severity = warden_severity(normalise_severity(shown.get("severity")))
    if severity is not None:
        shown["severity"] = severity
    return {"index": index, **shown}


def assertion_checks(
    spec: ReviewSpec, verdict: FindingsVerdict, findings: list[dict[str, Any]]
) -> list[Check]:
    """One check per assertion, plus a `severity` check for each should_find naming one."""
    checks: list[Check] = []
    by_index = {entry.index: entry for entry in verdict.should_find}
    for index, expectation in enumerate(spec.should_find):
        entry = by_index[index]
        check_id = f"should_find[{index}]"
        matched = entry.matchedFindingIndex if entry.met else None
        # One reference for both checks about the finding: a run keeps every check.
        ref = FindingRef.of(findings, matched)
        checks.append(
            _check(
                check_id,
                "should_find",
                "pass" if entry.met else "fail",
                entry.reasoning,
                expected=expectation.finding,
                finding=ref,
                required=expectation.required,
                matchedFindingIndex=matched,
            )
        )
        if expectation.severity is not None:
            checks.append(_severity_check(check_id, expectation, entry.met, matched, findings, ref))
    violations = {entry.index: entry for entry in verdict.should_not_find}
    for index, forbidden in enumerate(spec.should_not_find):
        bad = violations[index]
        violating = bad.violatingFindingIndex if bad.violated else None
        checks.append(
            _check(
                f"should_not_find[{index}]",
                "should_not_find",
                "fail" if bad.violated else "pass",
                bad.reasoning,
                expected=forbidden,
                finding=FindingRef.of(findings, violating),
                required=True,
                violatingFindingIndex=violating,
            )
        )
    return checks


def _severity_check(
    check_id: str,
    expectation: Expectation,
    met: bool,
    matched: int | None,
    findings: list[dict[str, Any]],
    ref: FindingRef | None,
) -> Check:
    status: CheckStatus
    if not met:
        status, message = "skipped", "no matching finding to check"
    elif matched is None:  # Warden's evalPassed: a required severity needs the matched finding
        status = "fail"
        message = f"severity {expectation.severity} could not be checked: no matched finding"
    else:
        given = findings[matched].get("severity")
        # Both sides on Warden's scale: a finding's `critical` matches a required `high`.
        if warden_severity(normalise_severity(given)) == expectation.severity:
            status, message = "pass", f"finding {matched} has severity {expectation.severity}"
        else:
            status = "fail"
            message = f"expected severity {expectation.severity}, finding {matched} has {given!r}"
    return _check(
        f"{check_id}.severity",
        "severity",
        status,
        message,
        expected=f"severity {expectation.severity}",
        finding=ref,
        required=expectation.required,
    )


def _check(
    check_id: str,
    kind: str,
    status: CheckStatus,
    message: str,
    *,
    expected: str,
    finding: FindingRef | None,
    **extra: Any,
) -> Check:
    """A report check; `extra` (required, the finding index) rides along as extra fields."""
    return Check.model_validate(
        {
            "id": check_id,
            "kind": kind,
            "status": status,
            "message": message,
            "expected": expected,
            "finding": finding,
            **extra,
        }
    )
