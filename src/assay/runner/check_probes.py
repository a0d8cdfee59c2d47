"""The answers `assay check` grades each case with: one that must pass, ones that must fail.

Each is an agent's answer made up from the case itself, graded by the run's own sandbox
and grader (`runner/check.py` runs them through `run_attempt`):

- review: the golden answer (each `should_find` as a finding at the fixture's first file,
  with its required severity) must pass; an empty answer must fail when a `should_find` is
  required, and an answer made of the `should_not_find` items must fail when there are any;
- verify: the expected verdict must pass, the opposite one must fail;
- rubric: a review made of the rubric's own words must score at least 4, an empty review
  at most 2;
- task: the reference solution must pass every check and a no-op agent must fail one. The
  reference lives beside the suite file, which stays PVYai's own (PVYai refuses unknown
  fields): `reference/<task id>.patch`, applied to the workspace with `git apply`, or
  `reference/<task id>`, an executable run like an agent command in the workspace. A patch
  and the no-op answer carry the task's `requiredTraceEvents` as their trace (a trace is
  the agent's account of itself, which any agent can print), so what tells them apart is
  the workspace; an executable reference's trace is what it prints, as an agent's is.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from assay.core.paths import is_inside
from assay.errors import AgentError
from assay.isolation.git import git_message, run_git
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, ReviewSpec, RubricSpec, TaskSpec, VerifySpec

if TYPE_CHECKING:
    from assay.agents.base import Agent

__all__ = [
    "GOLDEN_MIN_SCORE",
    "EMPTY_MAX_SCORE",
    "REFERENCE_DIR",
    "FixedAnswer",
    "PatchReference",
    "Probe",
    "probes_for",
    "reference_for",
]

REFERENCE_DIR = "reference"
"""The directory beside a task suite file holding each task's reference solution."""
GOLDEN_MIN_SCORE = 4
"""The judge's score (1-5) a review made of the rubric's words must reach."""
EMPTY_MAX_SCORE = 2
"""The judge's score an empty review must stay at or under."""
_DEFAULT_SEVERITY = "medium"
"""A golden finding's severity when its should_find names none (any would do)."""
_TITLE_CHARS = 80


@dataclass(frozen=True)
class FixedAnswer:
    """An agent that answers what it was given, running nothing."""

    output: AgentOutput

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        return AgentOutput(
            findings=[dict(finding) for finding in self.output.findings],
            verdict=self.output.verdict,
            verdict_reason=self.output.verdict_reason,
            review_text=self.output.review_text,
            trace_events=list(self.output.trace_events),
            exit_code=self.output.exit_code,
        )


@dataclass(frozen=True)
class PatchReference:
    """A task's reference patch applied to the attempt's workspace by `git apply` (which
    refuses paths outside the work tree and writes through no symlink), then the task's
    required trace. A patch that does not apply is the reference failing (AgentError)."""

    patch: Path
    trace_events: tuple[str, ...]

    async def run(self, ctx: AttemptContext) -> AgentOutput:

        try:
            data = self.patch.read_bytes()
        except OSError as exc:
            raise AgentError(f"reference {self.patch}: {exc.strerror or exc}") from None
        # The workspace's repository is assay's own here: no agent has run in it.
        result = await asyncio.to_thread(
            run_git,
            ["apply", "--whitespace=nowarn", "-"],
            cwd=Path(ctx.sandbox.path),
            stdin=data,
            timeout_s=ctx.timeout_s,
        )
        if result.returncode != 0:
            raise AgentError(
                f"reference {self.patch.name} does not apply to the workspace: "
                f"{git_message(result)}"
            )
        return AgentOutput(trace_events=list(self.trace_events), exit_code=0)


@dataclass(frozen=True)
class Probe:
    """One answer to grade and what its grade must be."""

    answer: str
    """What the answer is, as the output names it (`golden`, `empty`, `reference`, ...)."""
    must: Literal["pass", "fail"]
    agent: Agent | None
    """The agent giving the answer; None: the case's command runtime runs `command`."""
    command: tuple[str, ...] | None = None
    """An executable reference's argv (its absolute path), run as the agent command."""
    min_score: int | None = None
    """Rubric: the judge's score must be at least this (a `pass` probe)."""
    max_score: int | None = None
    """Rubric: the judge's score must be at most this (a `fail` probe)."""


@dataclass(frozen=True)
class Probes:
    """A case's probes, and what keeps any of them from being made."""

    probes: tuple[Probe, ...]
    no_reference: bool = False
    """A task without a reference: only its no-op answer is graded."""
    problem: str | None = None
    """Why the case cannot be checked at all (an unusable reference)."""


def probes_for(case: Case) -> Probes:
    """The answers `case` is graded with."""
    spec = case.spec
    if isinstance(spec, ReviewSpec):
        return Probes(_review_probes(spec))
    if isinstance(spec, VerifySpec):
        other: Literal["keep", "reject"] = "reject" if spec.expect_verdict == "keep" else "keep"
        return Probes(
            (
                Probe(
                    f"verdict {spec.expect_verdict}", "pass", _fixed(verdict=spec.expect_verdict)
                ),
                Probe(f"verdict {other}", "fail", _fixed(verdict=other)),
            )
        )
    if isinstance(spec, RubricSpec):
        return Probes(
            (
                Probe(
                    "rubric's words",
                    "pass",
                    _fixed(review_text=spec.rubric),
                    min_score=GOLDEN_MIN_SCORE,
                ),
                Probe("empty review", "fail", _fixed(review_text=""), max_score=EMPTY_MAX_SCORE),
            )
        )
    return _task_probes(case, spec)


def _review_probes(spec: ReviewSpec) -> tuple[Probe, ...]:
    path = spec.files[0].dest if spec.files else "."
    golden = [
        _finding(expectation.finding, expectation.severity or _DEFAULT_SEVERITY, path)
        for expectation in spec.should_find
    ]
    probes = [Probe("golden", "pass", _fixed(findings=golden))]
    if any(expectation.required for expectation in spec.should_find):
        probes.append(Probe("empty", "fail", _fixed(findings=[])))
    if spec.should_not_find:
        unwanted = [_finding(text, _DEFAULT_SEVERITY, path) for text in spec.should_not_find]
        probes.append(Probe("should_not_find", "fail", _fixed(findings=unwanted)))
    return tuple(probes)


def _task_probes(case: Case, spec: TaskSpec) -> Probes:
    trace = spec.required_trace_events
    noop = Probe("no-op", "fail", _fixed(trace_events=list(trace), exit_code=0))
    found = reference_for(case)
    if found is None:
        return Probes((noop,), no_reference=True)
    directory = case.source_path.parent / REFERENCE_DIR
    if not is_inside(found, directory):
        return Probes((noop,), problem=f"reference {found} leads out of {directory}")
    if found.suffix == ".patch":
        return Probes((Probe("reference", "pass", PatchReference(found, trace)), noop))
    if not os.access(found, os.X_OK):
        return Probes(
            (noop,),
            problem=f"reference {found} is not executable (chmod +x it, or name a patch .patch)",
        )
    return Probes((Probe("reference", "pass", None, command=(str(found),)), noop))


def reference_for(case: Case) -> Path | None:
    """The reference solution of task `case`: `reference/<task id>.patch`, else the
    executable `reference/<task id>`, beside its suite file; None when there is neither.
    A task id with a `/` names a file in a subdirectory; one that would climb out of
    `reference/` names none."""
    directory = case.source_path.parent / REFERENCE_DIR
    for name in (f"{case.local_id}.patch", case.local_id):
        candidate = directory / name
        if ".." not in Path(name).parts and candidate.is_file():
            return candidate.absolute()
    return None


def _finding(text: str, severity: str, path: str) -> dict[str, Any]:
    title = text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 3].rstrip() + "..."
    return {
        "severity": severity,
        "confidence": "high",
        "title": title,
        "description": text,
        "location": {"path": path, "startLine": 1},
    }


def _fixed(**answer: Any) -> FixedAnswer:
    return FixedAnswer(AgentOutput(**answer))
