"""Choosing cases by id: `-t PATTERN` matches by substring or as a glob."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from assay._util.arguments import as_texts, expect, items
from assay.errors import ConfigError
from assay.suites.case import Case

__all__ = ["name_matches", "nothing_selected", "select_cases"]


def select_cases(cases: Iterable[Case], patterns: str | Sequence[str]) -> list[Case]:
    """The cases whose id (or an alias) contains a pattern or matches it as a glob; all when none.

    Order is kept, so a selection runs in the same order as the full suite. One pattern
    may be given on its own, as a string.
    """
    cases = items("cases", cases, "an iterable of Case (a LoadedSuites' .cases)")
    for index, case in enumerate(cases):
        expect(f"cases[{index}]", case, Case, "a Case")
    patterns = as_texts("patterns", patterns)
    if not patterns:
        return list(cases)
    return [c for c in cases if any(_matches(c, p) for p in patterns)]


def _matches(case: Case, pattern: str) -> bool:
    return any(name_matches(name, pattern) for name in (case.id, *case.aliases))


def name_matches(name: str, pattern: str) -> bool:
    """`-t`'s rule for one case id: it contains `pattern`, or matches it as a glob."""
    return pattern in name or fnmatchcase(name, pattern)


def nothing_selected(patterns: Sequence[str]) -> ConfigError:
    """The error for an empty selection, naming the patterns that matched nothing."""
    if not patterns:
        return ConfigError("no cases found to run")
    return ConfigError("no cases match " + " ".join(f"-t {p!r}" for p in patterns))
