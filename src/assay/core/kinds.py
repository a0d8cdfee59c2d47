"""The kinds of case: what a case asks of the agent under test."""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["CASE_KINDS", "CaseKind"]

CaseKind = Literal["review", "verify", "rubric", "task"]
"""`review`: find the issues in a diff; `verify`: keep or reject one candidate finding;
`rubric`: a free review judged against a rubric; `task`: change a workspace."""

CASE_KINDS: Final[tuple[CaseKind, ...]] = get_args(CaseKind)
