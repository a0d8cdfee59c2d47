"""The numbers of a run: combining repeats, the aggregate score, its interval, the gate."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from assay.errors import ConfigError
from assay.report.gate.decide import decide, is_unit_score
from assay.report.gate.interval import clustered_interval
from assay.report.gate.policy import GatePolicy, attempt_scores, gated_cases
from assay.report.model import Attempt, CaseResult, CaseStatus, Summary, Tokens

__all__ = [
    "INTERRUPTED",
    "budget_reason",
    "combine_attempts",
    "gate_option_problems",
    "incomplete_reason",
    "not_run_counts",
    "skipped_note",
    "summarize",
]

INTERRUPTED = "interrupted"
"""The reason of a case an interrupted run never finished."""
_BUDGET_REASON = re.compile(r"budget of \$\S+ reached")


def combine_attempts(attempts: Sequence[Attempt]) -> tuple[CaseStatus, float | None, bool]:
    """(status, score, flaky) of a case from its repeats.

    Scored attempts (pass/fail) decide: the case passes only when every one passed, its
    score is their mean, and it is flaky when they disagree. Without any scored attempt
    the case is `error` if one errored, else `skipped`.
    """
    scored = [a for a in attempts if a.status in ("pass", "fail")]
    if not scored:
        if any(a.status == "error" for a in attempts):
            return "error", None, False
        return "skipped", None, False
    scores = [a.score if a.score is not None else float(a.status == "pass") for a in scored]
    outcomes = {a.status for a in scored}
    status: CaseStatus = "pass" if outcomes == {"pass"} else "fail"
    return status, sum(scores) / len(scores), len(outcomes) > 1


def gate_option_problems(*, threshold: float | None, max_errors: int | None) -> list[str]:
    """What is wrong with the gate's own options (`run` and `merge` both gate); [] when fine."""
    problems: list[str] = []
    if threshold is not None and (not 0.0 <= threshold <= 1.0 or math.isnan(threshold)):
        problems.append(f"--threshold must be between 0 and 1, got {threshold:g}")
    if max_errors is not None and max_errors < 0:
        problems.append(f"--max-errors must be 0 or more, got {max_errors}")
    return problems


def budget_reason(limit_usd: float) -> str:
    """The reason of a case `--max-cost` kept from starting."""
    return f"budget of ${limit_usd:g} reached"


def not_run_counts(cases: Sequence[CaseResult]) -> dict[str, int]:
    """How many cases the run cut short (interrupted, budget reached), by reason.

    Derived from the cases themselves, so a merged report says the same as its shards.
    """
    counts: dict[str, int] = {}
    for case in cases:
        if case.status == "skipped" and (
            case.reason == INTERRUPTED or _BUDGET_REASON.fullmatch(case.reason)
        ):
            counts[case.reason] = counts.get(case.reason, 0) + 1
    return counts


def incomplete_reason(cases: Sequence[CaseResult]) -> str | None:
    """`incomplete: 12 of 33 case(s) not run (interrupted: 12)`, or None for a complete run.

    A report with cases the run never reached is a gate failure whatever the score of the
    rest: the cases left out may be exactly the ones that fail.
    """
    counts = not_run_counts(cases)
    if not counts:
        return None
    detail = ", ".join(f"{reason}: {count}" for reason, count in counts.items())
    return f"incomplete: {sum(counts.values())} of {len(cases)} case(s) not run ({detail})"


def skipped_note(cases: Sequence[CaseResult]) -> str | None:
    """`29 of 33 case(s) skipped (no credentials for ...: 29)`: every skip the run chose
    (no key, an --offline cache miss), grouped by reason, in one line; None without any.
    Cases the run never reached are counted by `incomplete_reason` instead."""
    not_run = not_run_counts(cases)
    counts: dict[str, int] = {}
    for case in cases:
        if case.status == "skipped" and case.reason not in not_run:
            reason = case.reason or "no reason given"
            counts[reason] = counts.get(reason, 0) + 1
    if not counts:
        return None
    ordered = sorted(counts.items(), key=lambda item: -item[1])
    detail = "; ".join(f"{reason}: {count}" for reason, count in ordered)
    return f"{sum(counts.values())} of {len(cases)} case(s) skipped ({detail})"


def summarize(
    cases: Sequence[CaseResult],
    *,
    threshold: float,
    max_errors: int,
    duration_s: float,
    shard: str | None = None,
    require_all: bool = False,
    policy: GatePolicy | None = None,
    nothing_selected: str | None = None,
) -> Summary:
    """The report summary: counts, aggregate score and interval, gate, tokens and cost.

    `shard` (`I/N`) names the shard the cases are: a shard that got no cases at all (more
    shards than cases) passes with a note, since the merge of all shards gates the run;
    so does a run whose selection chose no case on purpose (`nothing_selected`, the
    selection's reason: `--affected-by` with no case affected).
    `require_all` makes any skipped case a gate failure (`--require-all`). `policy` is
    the gate's mode, its inconclusive rule, how errors count and the quarantine
    (report/gate/policy.py; default: the threshold gate as it always was).
    """
    policy = policy or GatePolicy()
    counts = {status: 0 for status in ("pass", "fail", "error", "skipped")}
    for case in cases:
        counts[case.status] += 1
    gated = gated_cases(cases, policy)
    scored = [c for c in gated if _is_scored(c)]
    scores = [c.score for c in scored if c.score is not None]
    score = sum(scores) / len(scores) if scores else None
    interval = clustered_interval([attempt_scores(c, "skip") for c in scored])
    errored = [
        c for c in gated if c.status == "error" or any(a.status == "error" for a in c.attempts)
    ]
    if_failed = [s for c in gated if (s := attempt_scores(c, "fail"))]
    score_if_errors_failed = (
        _mean([_score_if_errors_failed(c) for c in gated if _is_scored(c) or c.status == "error"])
        if errored
        else None
    )
    gate_score, gate_interval = score, interval
    if policy.errors_count_as == "fail" and errored:
        gate_score, gate_interval = score_if_errors_failed, clustered_interval(if_failed)
    gate_errors = sum(1 for c in gated if c.status == "error")

    problems: list[str] = []
    verdict: str | None = None
    regression: str | None = None
    if shard is not None and not cases:
        gate_reason = (
            f"shard {shard} has no cases (there are more shards than cases): nothing to "
            "gate here; the merged report of all shards gates the run"
        )
        verdict = "pass"
    elif nothing_selected is not None and not cases:
        gate_reason = f"{nothing_selected}: nothing to run, nothing to gate"
        verdict = "pass"
    else:
        decision = decide(
            gate_score,
            gate_interval,
            gate_errors,
            threshold=threshold,
            max_errors=max_errors,
            policy=policy,
            gated=gated,
        )
        problems, gate_reason, verdict, regression = decision
        incomplete = incomplete_reason(cases)
        if incomplete is not None:
            if not problems:
                gate_reason += " over the cases that ran"
            problems.insert(0, incomplete)
            gate_reason = f"{incomplete}; {gate_reason}"
        skipped = skipped_note(cases)
        if skipped is not None and require_all:
            problems.append(f"{skipped} and --require-all is set")
            gate_reason = f"{gate_reason}; {problems[-1]}"
        elif skipped is not None:
            gate_reason = f"{gate_reason}; {skipped}"
        if len(gated) < len(cases):
            gate_reason = f"{gate_reason}; {len(cases) - len(gated)} quarantined case(s) not gated"
        if problems and verdict == "pass":
            verdict = "fail"
    if score is not None and not is_unit_score(score):
        score, interval = None, None  # the gate failed on it; the report cannot hold it

    known_costs = [c.usage.cost_usd for c in cases if c.usage.cost_usd is not None]
    cost = sum(known_costs) if known_costs else None
    if cost is not None and not math.isfinite(cost):  # only reports edited by hand get here
        raise ConfigError(f"the cases' cost_usd add up to {cost}, past any real cost")
    return Summary(
        total=len(cases),
        passed=counts["pass"],
        failed=counts["fail"],
        errors=counts["error"],
        skipped=counts["skipped"],
        score=score,
        score_ci=list(interval) if interval is not None else None,
        gate="fail" if problems else "pass",
        gate_reason=gate_reason,
        verdict=verdict,  # type: ignore[arg-type]
        gate_mode=policy.mode,
        score_if_errors_failed=score_if_errors_failed,
        quarantined=len(cases) - len(gated),
        regression=regression,
        tokens=Tokens(
            input=sum(c.usage.input_tokens for c in cases),
            output=sum(c.usage.output_tokens for c in cases),
        ),
        cost_usd=cost,
        duration_s=duration_s,
    )


def _is_scored(case: CaseResult) -> bool:
    """A case the score averages over. Asked of the case, never as `case in scored`: a
    list's `in` compares pydantic models field by field, once per case it passes."""
    return case.status in ("pass", "fail") and case.score is not None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _score_if_errors_failed(case: CaseResult) -> float:
    """The case's score with its errored attempts as misses (an errored case: 0)."""
    if case.status == "error" or case.score is None:
        return 0.0
    scored = sum(1 for a in case.attempts if a.status in ("pass", "fail"))
    errors = sum(1 for a in case.attempts if a.status == "error")
    return case.score * scored / (scored + errors) if scored else case.score
