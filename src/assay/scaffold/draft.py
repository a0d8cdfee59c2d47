"""`assay scaffold --draft`: a model drafts what the case asserts, instead of the TODO.

The model reads the pull request's fix (title, description, each file's patch) and the
files the scaffold captured, and answers through a typed tool (`ReviewDraft` or
`RubricDraft`): a forced tool call validated against the schema and the model, with one
retry, as the judges are asked (`grading/judging.py`), through `models.generate`, so
`--cache` records and replays it and `--offline` never calls out. The planned case file
is then rewritten with the draft and a marker holding its digest (`suites/drafts.py`):
`assay validate` warns until a person edits the drafted text, `--strict` refuses it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from dataclasses import dataclass
from importlib import resources
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay._util.prompt_text import cap_diff, fenced
from assay.core.usage import Usage
from assay.errors import ConfigError, JudgeError, ModelError, ModelUnavailable
from assay.grading.judging import JudgeCall
from assay.options import RunOptions
from assay.scaffold.cases import PlannedCase
from assay.scaffold.change import Change, ChangeSource
from assay.scaffold.stub import MAX_BODY_CHARS, dump_json
from assay.suites.drafts import DRAFT_MARKER_KEY, review_draft_digest, rubric_draft_digest

__all__ = ["DraftOptions", "Drafted", "ReviewDraft", "RubricDraft", "draft_case"]

PROMPT_VERSION = "draft-case.v1"
MAX_FILES_CHARS = 60_000
"""How much of the captured files the model is shown, all together (the diff has its own cap)."""
MAX_DRAFT_TOKENS = 2048


class DraftedFinding(BaseModel):
    """One problem the reviewer must report."""

    model_config = ConfigDict(extra="forbid")
    finding: Annotated[str, Field(min_length=10, max_length=1000)]
    """What is wrong, where (file, function or line) and why it matters, in plain words."""
    severity: Literal["high", "medium", "low"]
    """How serious it is: high (security, data loss, a crash on a normal path), medium
    (wrong behaviour in some cases), low (minor)."""


class ReviewDraft(BaseModel):
    """The review case's assertions, drafted from the pull request's fix."""

    model_config = ConfigDict(extra="forbid")
    should_find: Annotated[list[DraftedFinding], Field(min_length=1, max_length=3)]
    """The problems the fix repairs, usually one."""
    should_not_find: Annotated[
        list[Annotated[str, Field(min_length=5, max_length=500)]], Field(max_length=3)
    ]
    """One or two plausible but wrong findings about this code that a careless reviewer
    might report."""


class RubricDraft(BaseModel):
    """The rubric a judge scores a review of the diff against, drafted from the pull request."""

    model_config = ConfigDict(extra="forbid")
    rubric: Annotated[str, Field(min_length=20, max_length=4000)]
    """What a good review of the diff must catch, named precisely, and what it must not flag."""


_REVIEW_CALL = JudgeCall("draft_review_case", ReviewDraft, max_tokens=MAX_DRAFT_TOKENS)
_RUBRIC_CALL = JudgeCall("draft_rubric", RubricDraft, max_tokens=MAX_DRAFT_TOKENS)


@dataclass(frozen=True, kw_only=True)
class DraftOptions:
    model: str
    """The model that drafts (`provider/name`)."""
    run_options: RunOptions = dataclasses.field(default_factory=RunOptions)
    """Where its call is recorded or replayed (`cache_dir`, `offline`)."""


@dataclass(frozen=True)
class Drafted:
    """What the drafting did, for the scaffold's report."""

    model: str
    usage: Usage


def draft_case(
    planned: PlannedCase,
    change: Change,
    source: ChangeSource,
    *,
    format: Literal["review", "rubric"],
    case_name: str,
    options: DraftOptions,
) -> tuple[PlannedCase, Drafted]:
    """`planned` with its TODO placeholder replaced by the model's draft, marked as one.

    Raises ConfigError (nothing is written then) when the model cannot be called or
    answers outside its schema twice.
    """
    prompt = _prompt(change, source, planned, format=format)
    call: JudgeCall[Any] = _RUBRIC_CALL if format == "rubric" else _REVIEW_CALL
    try:
        answer = asyncio.run(
            call.ask(
                model=options.model,
                system=_system_prompt(),
                prompt=prompt,
                options=options.run_options,
            )
        )
    except ModelUnavailable as exc:
        raise ConfigError(f"--draft: {options.model} cannot be called: {exc}; {_NOTHING}") from None
    except (ModelError, JudgeError) as exc:
        raise ConfigError(
            f"--draft: {options.model} gave no usable draft: {exc}; {_NOTHING}"
        ) from None
    marker = {"model": options.model, "sha256": ""}
    files = dict(planned.plan.files)
    document = json.loads(files[planned.case_file])
    if format == "rubric":
        draft: RubricDraft = answer.verdict
        entry = _new_entry(document, case_name)
        entry["rubric"] = draft.rubric
        marker["sha256"] = rubric_draft_digest(draft.rubric)
        entry[DRAFT_MARKER_KEY] = marker
    else:
        review: ReviewDraft = answer.verdict
        document["should_find"] = [
            {"finding": f.finding, "severity": f.severity} for f in review.should_find
        ]
        document["should_not_find"] = list(review.should_not_find)
        marker["sha256"] = review_draft_digest(
            ((f.finding, f.severity, True) for f in review.should_find), review.should_not_find
        )
        document.setdefault("notes", {})[DRAFT_MARKER_KEY] = marker
    files[planned.case_file] = dump_json(document)
    plan = dataclasses.replace(planned.plan, files=files)
    return dataclasses.replace(planned, plan=plan), Drafted(options.model, answer.usage)


_NOTHING = "nothing was written (run without --draft to write the TODO stub)"


def _new_entry(manifest: dict[str, Any], case_name: str) -> dict[str, Any]:
    """The manifest's case the scaffold just added (the one with its id: any other is a
    conflict the write refuses)."""
    for case in manifest.get("cases", []):
        if isinstance(case, dict) and case.get("id") == case_name:
            return case
    raise AssertionError(f"the planned manifest has no case {case_name!r}")  # planned above


def _system_prompt() -> str:
    return (
        resources.files("assay.scaffold")
        .joinpath("prompts", f"{PROMPT_VERSION}.md")
        .read_text("utf-8")
    )


def _prompt(
    change: Change,
    source: ChangeSource,
    planned: PlannedCase,
    *,
    format: Literal["review", "rubric"],
) -> str:
    body = change.body[:MAX_BODY_CHARS]
    parts = [
        f"Draft the {'rubric' if format == 'rubric' else 'should_find and should_not_find'} "
        f"of a {format} case scaffolded from {change.source}.",
        "Pull request title:",
        fenced(change.title),
        "Pull request description:",
        fenced(body or "(none)"),
        "The fix (each changed file's patch):",
        fenced(cap_diff(_fix_diff(change, source)), "diff"),
        "The files the case captured:",
        _captured_files(planned),
    ]
    tool = _RUBRIC_CALL.tool_name if format == "rubric" else _REVIEW_CALL.tool_name
    parts.append(f"Answer by calling {tool}.")
    return "\n\n".join(parts)


def _fix_diff(change: Change, source: ChangeSource) -> str:
    sections = []
    for changed in change.files:
        before = changed.path_on("base") or "/dev/null"
        after = changed.path_on("head") or "/dev/null"
        patch = source.patch(changed)
        shown = "(no text patch: binary or too large)" if patch is None else patch
        sections.append(f"--- {before}\n+++ {after} ({changed.status})\n{shown}".rstrip("\n"))
    return "\n".join(sections)


def _captured_files(planned: PlannedCase) -> str:
    left = MAX_FILES_CHARS
    shown: list[str] = []
    for captured in planned.captured:
        text = captured.content.decode("utf-8", "replace")
        if left <= 0:
            shown.append(f"{captured.source_path}: (left out: the files shown are long enough)")
            continue
        cut = text[:left]
        left -= len(cut)
        note = "" if len(cut) == len(text) else f"\n[cut at {len(cut)} of {len(text)} characters]"
        shown.append(f"{captured.source_path}:\n{fenced(cut)}{note}")
    return "\n\n".join(shown) or "(none)"
