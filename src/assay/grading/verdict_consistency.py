"""A rubric verdict that contradicts itself: a score of 1-2 with `met_rubric: true`, or 4-5
with `met_rubric: false`.

Its pass/fail stays Cassandra's: `met_rubric` decides (docs/cassandra.md), so a case can
"pass" with score 0.00. assay does not overrule the judge; it flags the verdict in the
case's reason and judge record, and the run counts them in one note (`contradiction_note`).
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.core.counting import count_of

__all__ = ["CONTRADICTION_KEY", "contradiction", "contradiction_note"]

CONTRADICTION_KEY = "contradiction"
"""The key of the case's `judge` record that holds the flag."""


def contradiction(score: int, met_rubric: bool) -> str | None:
    """What is wrong with the verdict, or None when score and met_rubric agree."""
    if met_rubric and score <= 2:
        return f"self-contradictory verdict: score {score}/5 with met_rubric true"
    if not met_rubric and score >= 4:
        return f"self-contradictory verdict: score {score}/5 with met_rubric false"
    return None


def contradiction_note(flagged: Sequence[str]) -> str | None:
    """`2 cases got a self-contradictory rubric verdict ...` for the ids of the cases whose
    judge record holds CONTRADICTION_KEY, or None without any."""
    if not flagged:
        return None
    shown = ", ".join(flagged[:3]) + (f" and {len(flagged) - 3} more" if len(flagged) > 3 else "")
    return (
        f"{count_of(len(flagged), 'case')} got a self-contradictory rubric verdict (score "
        "1-2 with met_rubric true, or 4-5 with false): met_rubric decided pass or fail, as "
        f"in Cassandra; read the judge's rationale ({shown})"
    )
