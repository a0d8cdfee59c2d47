"""The sticky comment's marker: distinct workflow and job names give distinct markers,
every marker is harmless in an HTML comment, and the markers earlier versions wrote for
names they did not have to clean are unchanged, so those PRs' comments are still found.

tests/test_action_ci_mistakes.py takes two such workflows through `assay ci`.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.action.comment import comment_marker

HARMLESS = "A-Za-z0-9 ._/()-"
"""What earlier versions kept of a name; they wrote `_` for anything else."""
SAFE_CHARS = "aZ09 ._/()-"
ANY_CHARS = SAFE_CHARS + ":;_&<>!-=\n\t\"'`é\U0001f600"
MARKER = re.compile(rf"<!-- assay:evals workflow=[{HARMLESS}~]+ job=[{HARMLESS}~]+ -->")


def _earlier_marker(workflow: str, job: str) -> str:
    """The marker as the previous version wrote it."""

    def clean(text: str) -> str:
        return re.sub(rf"[^{HARMLESS}]", "_", text.strip())[:100] or "-"

    return f"<!-- assay:evals workflow={clean(workflow)} job={clean(job)} -->"


@pytest.mark.parametrize(
    ("workflow", "job", "names"),
    [
        ("Evals", "evals", "workflow=Evals job=evals"),
        ("Evals (fast) v1.2", "evals-nightly", "workflow=Evals (fast) v1.2 job=evals-nightly"),
        (".github/workflows/e.yml", "run_evals", "workflow=.github/workflows/e.yml job=run_evals"),
        ("  Evals  ", "", "workflow=Evals job=-"),
    ],
)
def test_a_name_with_only_harmless_characters_keeps_its_marker(
    workflow: str, job: str, names: str
) -> None:
    marker = f"<!-- assay:evals {names} -->"
    assert comment_marker(workflow=workflow, job=job) == marker
    assert marker == _earlier_marker(workflow, job)


@settings(max_examples=300, deadline=None)
@given(
    workflow=st.text(alphabet=st.sampled_from(SAFE_CHARS), max_size=100),
    job=st.text(alphabet=st.sampled_from(SAFE_CHARS), max_size=100),
)
@pytest.mark.slow
def test_every_marker_an_earlier_version_wrote_unchanged_is_still_written(
    workflow: str, job: str
) -> None:
    assert comment_marker(workflow=workflow, job=job) == _earlier_marker(workflow, job)


def test_names_that_differ_only_in_what_is_cleaned_get_their_own_markers() -> None:
    names = ["Evals: fast", "Evals; fast", "Evals_ fast", "Evals\u00a0fast", "evals/a", "evals a"]
    markers = [comment_marker(workflow=name, job="evals") for name in names]
    assert len(set(markers)) == len(names)
    # still readable, and the name that needed no cleaning is written as it is
    assert re.fullmatch(
        r"<!-- assay:evals workflow=Evals_ fast~[0-9a-f]{12} job=evals -->", markers[0]
    )
    assert markers[2] == "<!-- assay:evals workflow=Evals_ fast job=evals -->"
    long = "e" * 100
    assert comment_marker(workflow=long + "1", job="j") != comment_marker(workflow=long, job="j")


@settings(max_examples=500, deadline=None)
@given(
    first=st.text(alphabet=st.sampled_from(ANY_CHARS), min_size=1, max_size=120),
    second=st.text(alphabet=st.sampled_from(ANY_CHARS), min_size=1, max_size=120),
)
@pytest.mark.slow
def test_distinct_names_get_distinct_harmless_markers(first: str, second: str) -> None:
    first_marker = comment_marker(workflow=first, job=second)
    second_marker = comment_marker(workflow=second, job=first)
    for marker in (first_marker, second_marker):
        assert MARKER.fullmatch(marker), marker
    # A name is taken without the whitespace around it (RunnerEnvironment strips it too);
    # an empty one is `-`, as it always was, and GitHub never sends one.
    names = {first.strip(), second.strip()}
    if len(names) == 2 and names != {"", "-"}:
        assert first_marker != second_marker
