"""What the agent under test is asked, per case kind: written once for every runtime.

The builtin agent, the command runtime and the CLI presets ask the same thing of a case
over different transports (typed `submit_*` tools and a PR-context message, an argv prompt
and an answer file, a CLI's final message). `ASKS` holds each kind's part, which the
runner's kind registry (`runner/kinds.py: KINDS`) bundles with the kind's sandbox and
grader: the task text (`KindAsk.task`) and the answer it wants (`Answer`). A runtime says
only how it shows the change and takes the answer (`Shown`), and may put its own framing
around the text (the builtin agent's PR context and tool instructions).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from assay._util.prompt_text import fenced
from assay.suites.case import Case, CaseKind, ReviewSpec, RubricSpec, TaskSpec, VerifySpec
from assay.suites.warden import EVAL_PULL_REQUEST_BODY, fixture_commit_message

__all__ = [
    "ASKS",
    "FINDINGS_SHAPE",
    "RUBRIC_LEAD",
    "VERDICT_SHAPE",
    "Answer",
    "Ask",
    "KindAsk",
    "Shown",
    "ask_for",
    "candidate_json",
]

RUBRIC_LEAD = "Review the following git diff for issues."
"""A rubric case asks for a free review of the diff (Cassandra's own words)."""
FINDINGS_SHAPE = '{"findings": [{severity, confidence, title, description, location}]}'
"""A review case's answer."""
VERDICT_SHAPE = '{"verdict": "keep" or "reject", "reason": "..."}'
"""A verify case's answer."""
_SpecT = TypeVar("_SpecT")
_FINDING_FIELDS = (
    "Report each issue as a finding with severity (critical|high|medium|low|info), "
    "confidence, title, description and location {path, startLine, endLine}."
)
_VERDICT_CHOICE = (
    "Check it against the code and answer keep (a real issue) or reject (not a real issue)."
)


@dataclass(frozen=True)
class Answer:
    """What a kind's answer is, for a runtime to word how it is given."""

    shape: str | None
    """The JSON object the agent answers with; None when its answer is no JSON (a task's
    answer is its workspace)."""
    written_review: bool = False
    """The answer is a written review (rubric), findings optional."""


@dataclass(frozen=True)
class Shown:
    """How a runtime shows the change and takes the answer."""

    diff_at: str
    """Where the diff is, completing "the diff is ...": `in /.../diff.patch`, `above`."""
    diff: str
    """The diff as the runtime shows it inline (a rubric case's task carries it)."""
    answer: str
    """The runtime's sentence saying how to give this kind's answer ("" when it needs none)."""


@dataclass(frozen=True)
class Ask:
    """One case's task: the pull request's own account of the change, then what to do."""

    title: str | None
    """The pull request's title, as Warden's agent sees it: a review case's is its fixture
    commit's subject (`add fixture: <case>`; its `given` is for the judge alone), a verify
    case's its `given` (Warden hands it to the verifier as the title). A runtime that frames
    the change itself shows it there (the builtin agent: as the pull request's title)."""
    task: str
    body: str | None = None
    """The pull request's description, when Warden's agent sees one (a review case's)."""

    @property
    def text(self) -> str:
        return "\n\n".join(part for part in (self.title, self.body, self.task) if part)


@dataclass(frozen=True)
class KindAsk:
    """A case kind's part in what the agent is asked."""

    task: Callable[[Case, Shown], Ask]
    answer: Answer
    shows_diff: bool = False
    """The task carries the diff itself (`Shown.diff`); else it says where it is."""


def candidate_json(spec: VerifySpec) -> str:
    """The candidate finding of a verify case, as the agent sees it."""
    return json.dumps(spec.candidate, indent=2, ensure_ascii=False)


def _with_answer(text: str, shown: Shown) -> str:
    return f"{text} {shown.answer}" if shown.answer else text


def _review(case: Case, shown: Shown) -> Ask:
    _spec(case, ReviewSpec)
    task = (
        f"Review the changes on branch eval against main (the diff is {shown.diff_at}). "
        + _FINDING_FIELDS
    )
    # Warden's reviewer sees the fixture commit's message, not the case's `given`.
    title = fixture_commit_message(case.name)
    return Ask(title, _with_answer(task, shown), body=EVAL_PULL_REQUEST_BODY)


def _verify(case: Case, shown: Shown) -> Ask:
    spec = _spec(case, VerifySpec)
    task = (
        "A reviewer reported this candidate finding about the changes on branch eval "
        f"against main (the diff is {shown.diff_at}):\n\n"
        f"{fenced(candidate_json(spec), 'json')}\n\n" + _VERDICT_CHOICE
    )
    return Ask(spec.given, _with_answer(task, shown))


def _rubric(case: Case, shown: Shown) -> Ask:
    _spec(case, RubricSpec)
    return Ask(None, f"{_with_answer(RUBRIC_LEAD, shown)}\n\n{shown.diff}")


def _task(case: Case, shown: Shown) -> Ask:
    return Ask(None, _spec(case, TaskSpec).prompt)  # PVYai's prompt, as the suite words it


def _spec(case: Case, expected: type[_SpecT]) -> _SpecT:
    spec = case.spec
    if not isinstance(spec, expected):
        raise TypeError(f"{case.id}: a {case.kind} case with a {type(spec).__name__}")
    return spec


ASKS: Mapping[CaseKind, KindAsk] = MappingProxyType(
    {
        "review": KindAsk(_review, Answer(FINDINGS_SHAPE)),
        "verify": KindAsk(_verify, Answer(VERDICT_SHAPE)),
        "rubric": KindAsk(_rubric, Answer(FINDINGS_SHAPE, written_review=True), shows_diff=True),
        "task": KindAsk(_task, Answer(None)),
    }
)


def ask_for(case: Case, shown: Shown) -> Ask:
    """What `case` asks of the agent, shown as the runtime shows it."""
    return ASKS[case.kind].task(case, shown)
