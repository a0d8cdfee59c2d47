"""The numbers of a run: combining repeats, the aggregate score, its interval, the gate."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from assay.errors import ConfigError
from assay.report.model import Attempt, CaseResult, CaseStatus, Summary, Tokens

if TYPE_CHECKING:
    from assay.report.gate.policy import GatePolicy

__all__ = [
    "INTERRUPTED",
    "budget_reason",
    "combine_attempts",
    "confidence_interval",
    "gate_option_problems",
    "incomplete_reason",
    "not_run_counts",
    "skipped_note",
    "summarize",
]

INTERRUPTED = "interrupted"
"""The reason of a case an interrupted run never finished."""
_BUDGET_REASON = re.compile(r"budget of \$\S+ reached")

_Z95 = 1.959963984540054
_BOOTSTRAP_RESAMPLES = 2000
_BOOTSTRAP_MAX_DRAWS = 500_000
"""Large runs get fewer resamples (never under 200) so the interval stays well under a second."""
_BOOTSTRAP_SEED = 20_240_601
"""Fixed, so the same scores always give the same interval (reports are diffable)."""
_EPSILON = 1e-9
"""Means of 0/1 scores are not exact in binary; 3/4 must not fall below a 0.75 threshold."""


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


def confidence_interval(scores: Sequence[float]) -> tuple[float, float] | None:
    """A 95% interval for the mean of `scores`; None when there are none.

    Pass/fail scores get the Wilson score interval (sound for small n and for rates near
    0 or 1); graded scores a percentile bootstrap with a fixed seed.
    """
    n = len(scores)
    if n == 0:
        return None
    if all(score in (0.0, 1.0) for score in scores):
        return _wilson(sum(scores), n)
    resamples = min(_BOOTSTRAP_RESAMPLES, max(200, _BOOTSTRAP_MAX_DRAWS // n))
    rng = random.Random(_BOOTSTRAP_SEED)
    means = sorted(sum(rng.choices(scores, k=n)) / n for _ in range(resamples))
    low = means[int(0.025 * (resamples - 1))]
    high = means[math.ceil(0.975 * (resamples - 1))]
    return _clamp(low), _clamp(high)


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


def _wilson(successes: float, n: int) -> tuple[float, float]:
    p = successes / n
    z2 = _Z95 * _Z95
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = _Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return _clamp(centre - half), _clamp(centre + half)


def _clamp(value: float) -> float:
    # Rounding noise at the ends (1e-17 for an exact 0) is the end itself.
    if abs(value) < 1e-12:
        return 0.0
    if abs(value - 1.0) < 1e-12:
        return 1.0
    return min(1.0, max(0.0, value))


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
    from assay.report.gate.interval import clustered_interval
    from assay.report.gate.policy import GatePolicy, attempt_scores, gated_cases

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
        decision = _decide(
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
    if score is not None and not _is_unit_score(score):
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


def _decide(
    score: float | None,
    interval: tuple[float, float] | None,
    errors: int,
    *,
    threshold: float,
    max_errors: int,
    policy: GatePolicy,
    gated: Sequence[CaseResult],
) -> tuple[list[str], str, str, str | None]:
    """(problems, reason, verdict, regression finding) of the gate's own test."""
    from assay.report.gate.policy import regression_problem, straddles

    regression: str | None = None
    if policy.mode == "regression":
        limit = policy.floor if policy.floor is not None else 0.0
        problems = _gate_problems(
            score, errors, threshold=limit, max_errors=max_errors, word="floor"
        )
        worse, regression = regression_problem(gated, policy)
        if worse is not None:
            problems.append(worse)
        reason = (
            "; ".join(problems) or f"not worse than the baseline; {_passed(score, limit, 'floor')}"
        )
        if policy.baseline is not None and worse is None and not problems:
            reason = f"{regression}; {_passed(score, limit, 'floor')}"
    else:
        limit = threshold
        problems = _gate_problems(score, errors, threshold=limit, max_errors=max_errors)
        reason = "; ".join(problems) or _passed(score, limit)
    verdict = "fail" if problems else "pass"
    point_only = [p for p in problems if p.startswith("score ")]
    # Only the point score's own test can be in doubt: errors, a regression, an
    # incomplete run fail the gate whatever the interval says.
    if interval is not None and straddles(interval, limit) and problems == point_only:
        verdict = "inconclusive"
        low, high = interval
        word = "floor" if policy.mode == "regression" else "threshold"
        note = f"inconclusive: 95% interval {low:.2f}-{high:.2f} straddles the {word} {limit:.2f}"
        if policy.inconclusive == "fail" and not problems:
            problems = [note]
            reason = f"{reason}; {note} and --inconclusive is fail"
        elif policy.inconclusive in ("pass", "neutral") and problems:
            reason = f"{reason}; {note} and --inconclusive is {policy.inconclusive}"
            problems = []
        # Under `score` the point score decides as it always did and the verdict field
        # (and summary.md) carry the doubt; the reason stays as it was.
    return problems, reason, verdict, regression


def _gate_problems(
    score: float | None, errors: int, *, threshold: float, max_errors: int, word: str = "threshold"
) -> list[str]:
    """Why the gate fails; empty when it passes.

    Every test is written to fail closed: NaN compares False with everything, so a NaN
    score or threshold must land on the failing side of each comparison.
    """
    problems = []
    if score is None:
        problems.append("nothing was scored")
    elif not _is_unit_score(score):
        # Validated models cannot hold such a score; whatever slipped past them fails.
        problems.append(f"score {score} is not a number between 0 and 1")
    elif not score >= threshold - _EPSILON:
        shown, limit = _distinct(score, threshold)
        problems.append(f"score {shown} < {word} {limit}")
    if not errors <= max_errors:
        problems.append(f"errors {errors} > max-errors {max_errors}")
    return problems


def _passed(score: float | None, threshold: float, word: str = "threshold") -> str:
    assert score is not None  # no score is a gate problem
    shown, limit = _distinct(score, threshold)
    return f"score {shown} >= {word} {limit}"


def _is_unit_score(value: float) -> bool:
    return 0.0 <= value <= 1.0  # False for NaN


def _distinct(score: float, threshold: float) -> tuple[str, str]:
    """Both numbers with two decimals, or four when two would make them look equal."""
    for digits in (2, 4):
        shown, limit = f"{score:.{digits}f}", f"{threshold:.{digits}f}"
        if shown != limit or abs(score - threshold) < _EPSILON:
            return shown, limit
    return f"{score:.6f}", f"{threshold:.6f}"
