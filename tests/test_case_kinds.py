"""A case kind is one bundle (`runner/kinds.py: KINDS`), complete for every built-in kind.

Each kind of the corpus is taken through every part of its bundle for real: its spec type
matches the loaded case, its inputs exist, its sandbox builder builds a git repo (through
`build_sandbox`, as the runner calls it), what the agent is asked is worded for every
runtime, and its grader is built from run options.
"""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from assay.agents.asks import ASKS, Shown, ask_for
from assay.agents.command import build_prompt
from assay.agents.presets.base import preset_prompt
from assay.core.kinds import CASE_KINDS
from assay.options import RunOptions
from assay.runner.kinds import KINDS, grader_for, kind_of
from assay.suites import load_suites
from assay.suites.case import Case, Spec
from assay.workspace import build_sandbox
from assay.workspace.build import SANDBOX_BUILDERS

ROOT = Path(__file__).resolve().parents[1]


def one_case_per_kind() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for case in load_suites([ROOT / "evals"]).cases:
        cases.setdefault(case.kind, case)
    return cases


CASES = one_case_per_kind()


def test_every_kind_has_one_bundle_and_every_table_covers_the_same_kinds() -> None:
    assert tuple(KINDS) == CASE_KINDS
    assert tuple(SANDBOX_BUILDERS) == CASE_KINDS
    assert tuple(ASKS) == CASE_KINDS
    assert set(CASES) == set(CASE_KINDS), "the corpus has a case of every kind"
    spec_types = set(typing.get_args(Spec))
    assert {bundle.spec_type for bundle in KINDS.values()} == spec_types
    for name, bundle in KINDS.items():
        assert bundle.name == name
        assert bundle.sandbox is SANDBOX_BUILDERS[name]
        assert bundle.ask is ASKS[name]


@pytest.mark.parametrize("kind", CASE_KINDS)
def test_each_part_of_a_kinds_bundle_works_on_a_case_of_the_kind(kind: str, tmp_path: Path) -> None:
    case = CASES[kind]
    bundle = kind_of(case)
    assert isinstance(case.spec, bundle.spec_type)

    inputs = bundle.inputs(case.spec)
    assert inputs and all(path.exists() for _, path in inputs), inputs
    tree = bundle.copied_tree(case.spec)
    assert tree is None or tree in {path for _, path in inputs}

    # the corpus's review and verify cases are a few small files: built on the event loop
    assert bundle.small_sandbox(case.spec, None) == (kind in ("review", "verify"))
    sandbox = build_sandbox(case, parent=tmp_path, builder=bundle.sandbox)
    assert sandbox.kind == kind
    assert (sandbox.path / ".git").is_dir()
    assert (sandbox.diff != "") == (kind != "task")  # a task starts with a clean workspace

    diff_file = tmp_path / "diff.patch"
    for prompt in (
        build_prompt(case, diff=sandbox.diff, diff_file=diff_file),
        preset_prompt(case, diff=sandbox.diff, diff_file=diff_file),
    ):
        assert prompt.strip() and not prompt.startswith(("\n", " "))
        if bundle.ask.shows_diff:
            assert sandbox.diff.strip() in prompt
        elif kind != "task":
            assert str(diff_file) in prompt
    answer = bundle.ask.answer
    if answer.shape is not None and not answer.written_review:
        assert answer.shape in build_prompt(case, diff=sandbox.diff, diff_file=diff_file)

    grader = grader_for(case, options=RunOptions())
    assert callable(grader.grade)
    assert bundle.grading_phase in {"judge", "checks", "grading"}
    assert (bundle.runtime is not None) == (bundle.blocked_checks is not None) == (kind == "task")
    if bundle.blocked_checks is not None:
        blocked = bundle.blocked_checks(case.spec, "the agent never ran")
        assert blocked and all(check.status == "blocked" for check in blocked)


def test_a_kinds_parts_refuse_a_case_of_another_kind(tmp_path: Path) -> None:
    review, task = CASES["review"], CASES["task"]
    with pytest.raises(TypeError, match="review"):
        ASKS["task"].task(review, Shown(diff_at="above", diff="", answer=""))
    with pytest.raises(TypeError, match="task"):
        build_sandbox(task, parent=tmp_path, builder=SANDBOX_BUILDERS["review"])
    assert list(tmp_path.iterdir()) == [], "nothing is left behind"


def test_the_task_text_is_the_same_for_every_runtime_but_for_how_it_is_answered() -> None:
    case = CASES["review"]
    shown = Shown(diff_at="in /scratch/diff.patch", diff="", answer="ANSWER.")
    asked = ask_for(case, shown)
    # Warden's pull request, not the case's `given` (the judge's alone).
    assert (asked.title, asked.body) == (f"add fixture: {case.name}", "Analyzing changes in eval")
    assert asked.text.startswith(
        f"{asked.title}\n\n{asked.body}\n\nReview the changes on branch eval"
    )
    assert asked.text.endswith(" ANSWER.")
    command = build_prompt(case, diff="", diff_file=Path("/scratch/diff.patch"))
    preset = preset_prompt(case, diff="", diff_file=Path("/scratch/diff.patch"))
    common = asked.text.removesuffix("ANSWER.")
    assert command.startswith(common) and preset.startswith(common)
    assert "$ASSAY_FINDINGS_FILE" in command and "```json" in preset
