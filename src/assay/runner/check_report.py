"""What `assay check` concludes: one status per case, with the answers that decided it.

`assay.check.v1` is report.json's shape where it can be (`source`, `usage`, `checks`,
the summary's `tokens` and `cost_usd`); a case's `probes` are the answers it was graded
with. A case is `ok` when every answer got the grade it must, `cannot pass` when the answer
that must pass (golden, reference, expected verdict, the rubric's words) does not, `cannot
fail` when an answer that must fail passes (or nothing could fail it), `no reference` when a
task has no reference solution to try (its no-op answer still is), `error` when the judge
or the harness failed, and `skipped` when its judge cannot be called (no key, an --offline
cache miss). Broken means `cannot pass` or `cannot fail`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.core._contract import ContractModel
from assay.core.checks import Check
from assay.core.usage import Usage
from assay.report.model import Source, Tokens
from assay.runner.combine import total_usage

__all__ = [
    "BROKEN",
    "CHECK_CONTRACT",
    "CaseCheck",
    "CaseCheckStatus",
    "CheckReport",
    "CheckSummary",
    "ProbeResult",
    "case_line",
    "report_lines",
    "summary_line",
]

CHECK_CONTRACT: Literal["assay.check.v1"] = "assay.check.v1"
CaseCheckStatus = Literal["ok", "cannot pass", "cannot fail", "no reference", "error", "skipped"]
BROKEN: frozenset[str] = frozenset({"cannot pass", "cannot fail"})
"""The statuses that make `assay check` exit 1 (and `error`, which leaves a case unproven)."""


class ProbeResult(ContractModel):
    answer: str
    """The answer graded: `golden`, `empty`, `should_not_find`, `verdict keep`, `rubric's
    words`, `empty review`, `reference`, `no-op`."""
    must: Literal["pass", "fail"]
    status: Literal["pass", "fail", "error", "skipped"]
    """The grade the run's grader gave it."""
    held: bool | None
    """Whether the grade is the one it must be; None when it could not be graded."""
    score: float | None = None
    """The grade's score in [0, 1], as report.json's attempts carry it."""
    judge_score: float | None = None
    """A rubric judge's own 1-5 score, which the answer's bound is on."""
    reason: str = ""
    checks: list[Check] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


class CaseCheck(ContractModel):
    id: str
    suite: str
    kind: Literal["review", "verify", "rubric", "task"]
    source: Source
    status: CaseCheckStatus
    reason: str = ""
    judge_model: str | None = None
    probes: list[ProbeResult] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


class CheckSummary(ContractModel):
    total: int
    ok: int
    cannot_pass: int
    cannot_fail: int
    no_reference: int
    errors: int
    skipped: int
    broken: int
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None
    duration_s: float = 0.0


class CheckReport(ContractModel):
    contract: Literal["assay.check.v1"] = CHECK_CONTRACT
    assay_version: str
    summary: CheckSummary
    cases: list[CaseCheck]
    warnings: list[str] = Field(default_factory=list)

    @property
    def failed(self) -> bool:
        """A case is broken or could not be checked: exit 1."""
        return any(case.status in BROKEN or case.status == "error" for case in self.cases)


def summarize(cases: list[CaseCheck], *, duration_s: float) -> CheckSummary:

    def count(status: str) -> int:
        return sum(1 for case in cases if case.status == status)

    usage = total_usage(case.usage for case in cases)
    return CheckSummary(
        total=len(cases),
        ok=count("ok"),
        cannot_pass=count("cannot pass"),
        cannot_fail=count("cannot fail"),
        no_reference=count("no reference"),
        errors=count("error"),
        skipped=count("skipped"),
        broken=sum(1 for case in cases if case.status in BROKEN),
        tokens=Tokens(input=usage.input_tokens, output=usage.output_tokens),
        # No model call at all (tasks, verify cases) cost nothing; an unknown price is None.
        cost_usd=usage.cost_usd if usage.input_tokens or usage.output_tokens else 0.0,
        duration_s=round(duration_s, 3),
    )


def case_line(case: CaseCheck, *, width: int = 0) -> str:
    """`<status>  <id>  (<reason>)`, the status padded to `width`."""
    line = f"{case.status:<{width}}  {case.id}"
    return f"{line}  ({case.reason})" if case.reason else line


def summary_line(report: CheckReport) -> str:
    """The totals, then the judge's tokens and cost, then the time taken."""
    s = report.summary
    counts = [f"{s.ok} ok"]
    for number, name in (
        (s.cannot_pass, "cannot pass"),
        (s.cannot_fail, "cannot fail"),
        (s.no_reference, "no reference"),
        (s.errors, "error"),
        (s.skipped, "skipped"),
    ):
        if number:
            counts.append(f"{number} {name}")
    cost = f"${s.cost_usd:.4f}" if s.cost_usd is not None else "cost unknown"
    return (
        f"{s.total} case(s): {', '.join(counts)}; judge tokens {s.tokens.input} in / "
        f"{s.tokens.output} out, {cost}; {s.duration_s:.1f}s"
    )


def report_lines(report: CheckReport) -> list[str]:
    """One line per case, then the summary line."""
    width = max((len(case.status) for case in report.cases), default=0)
    return [case_line(case, width=width) for case in report.cases] + [summary_line(report)]
