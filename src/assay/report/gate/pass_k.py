"""pass@1, pass@k and pass^k over repeats, and `--min-pass`: a case's outcome from its attempts.

With `n` scored attempts of a case of which `c` passed, the unbiased estimators of the chance
that k attempts drawn from the case's attempt distribution contain at least one pass
(pass@k, Chen et al. 2021, "Evaluating Large Language Models Trained on Code") and that all k
pass (pass^k, Yao et al. 2024, tau-bench) are

    pass@k = 1 - C(n - c, k) / C(n, k)        pass^k = C(c, k) / C(n, k)

averaged over cases. They need n >= k; with k = n they are "any attempt passed" and "every
attempt passed". pass@1 (= pass^1) is the mean per-attempt pass rate. See docs/statistics.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from assay.report.model import Attempt, CaseResult, Report

__all__ = [
    "PassCounts",
    "PassRates",
    "case_pass_counts",
    "min_pass_problem",
    "pass_at_k",
    "pass_counts",
    "pass_hat_k",
    "pass_rates",
    "pass_rates_note",
]


@dataclass(frozen=True)
class PassCounts:
    """How many of a case's scored attempts passed (`passed`) out of how many (`total`)."""

    passed: int
    total: int


@dataclass(frozen=True)
class PassRates:
    """The run's pass@1, pass@k and pass^k over its cases; None where no case qualifies."""

    k: int
    pass_at_1: float | None
    pass_at_k: float | None
    pass_hat_k: float | None


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that k of the n attempts, drawn without replacement, hold a pass."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that k of the n attempts, drawn without replacement, all passed."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def pass_counts(attempts: Sequence[Attempt]) -> PassCounts:
    """How many of `attempts` passed, out of the scored (pass or fail) ones."""
    scored = [a.status for a in attempts if a.status in ("pass", "fail")]
    return PassCounts(passed=scored.count("pass"), total=len(scored))


def case_pass_counts(case: CaseResult) -> PassCounts:
    """A reported case's counts: from its attempts, else (a result without them, hand-built
    or old) its own status as one attempt."""
    if case.attempts:
        return pass_counts(case.attempts)
    if case.status in ("pass", "fail"):
        return PassCounts(passed=int(case.status == "pass"), total=1)
    return PassCounts(passed=0, total=0)


def pass_rates(cases: Sequence[PassCounts], k: int) -> PassRates:
    """The means over cases: pass@1 over every case with a scored attempt; pass@k and
    pass^k over the cases with at least k (a case that errored below k is left out, as an
    errored case is left out of the score)."""
    scored = [case for case in cases if case.total > 0]
    enough = [case for case in scored if case.total >= k]
    return PassRates(
        k=k,
        pass_at_1=_mean([case.passed / case.total for case in scored]),
        pass_at_k=_mean([pass_at_k(case.total, case.passed, k) for case in enough]),
        pass_hat_k=_mean([pass_hat_k(case.total, case.passed, k) for case in enough]),
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def pass_rates_note(report: Report) -> str:
    """`pass@1 0.60 · pass@5 1.00 · pass^5 0.50 · min-pass 4`: the repeats' numbers in one
    line, for the terminal, summary.md and the PR comment; "" for a run without repeats."""
    summary = report.summary
    if summary.k is None:
        return ""
    k = summary.k
    parts = [
        f"pass@1 {_shown(summary.pass_at_1)}",
        f"pass@{k} {_shown(summary.pass_at_k)}",
        f"pass^{k} {_shown(summary.pass_hat_k)}",
    ]
    if report.run.min_pass is not None:
        parts.append(f"min-pass {report.run.min_pass} of {report.run.repeat}")
    return " · ".join(parts)


def _shown(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "–"


def min_pass_problem(
    min_pass: int | None, *, repeat: int, adaptive: bool, flag: str = "--min-pass"
) -> str | None:
    """Why `--min-pass` cannot be used with this `--repeat`; None when it can (or is unset).
    `flag` names the option as the user set it (its variable, its configuration file)."""
    if min_pass is None:
        return None
    if adaptive:
        return (
            f"{flag} needs a fixed --repeat K: with --repeat auto cases get different "
            "numbers of attempts"
        )
    if not 1 <= min_pass <= repeat:
        return (
            f"{flag} must be between 1 and --repeat ({repeat}), got {min_pass}: a case "
            f"cannot pass more attempts than it has"
        )
    return None
