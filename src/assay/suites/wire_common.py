"""Building blocks shared by the pydantic models of every suite format.

The models describe the files exactly as users write them (field names included, camelCase
for PVYai); they are the boundary. Loaders turn them into the frozen `Case` dataclasses.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainValidator,
    ValidationInfo,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from assay.core.severities import WARDEN_SEVERITY_WORDS, warden_severity
from assay.core.text import CONTROL_CHARACTERS
from assay.registry.runtimes import unknown_runtime
from assay.suites.drafts import is_unedited_draft, unedited_draft_message

__all__ = [
    "ACCEPT_SUSPICIOUS",
    "SUSPICIOUS",
    "AgentCommandValue",
    "CaseName",
    "Runtime",
    "SeverityValue",
    "SuiteModel",
    "FilledText",
    "LenientText",
    "Text",
    "WardenCaseName",
    "any_case",
    "lowercase",
    "not_a_scaffold_stub",
    "not_an_unedited_draft",
]


class SuiteModel(BaseModel):
    """Base of every suite-file model: unknown keys are reported, types are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


def _require_text(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("empty_text", "must not be empty")
    return value


Text = Annotated[
    str, AfterValidator(_require_text), WithJsonSchema({"type": "string", "minLength": 1})
]
"""A string with something other than whitespace in it."""

SUSPICIOUS = frozenset({"scaffold_stub", "scaffold_draft", "blank_text", "name_with_slash"})
"""Error types of input the suites' own tools accept but that is most likely a mistake
(`validation.validate_model` reports them as warnings, errors under `--strict`)."""
ACCEPT_SUSPICIOUS = "assay.accept_suspicious"
"""The validation context key that lets `SUSPICIOUS` input through, once it was reported.
Validated without it (as `assay scaffold` does), such input is an error of its type."""


def _suspicious(info: ValidationInfo, kind: str, message: str) -> None:
    if not (isinstance(info.context, dict) and info.context.get(ACCEPT_SUSPICIOUS)):
        raise PydanticCustomError(kind, message)


def not_a_scaffold_stub(value: str, info: ValidationInfo) -> str:
    """The scaffolder's placeholder (`TODO: describe ...`): what the suite author still has
    to write. Only text starting with `TODO:` is one; "TODO comments must be flagged" is not."""
    if value.lstrip().startswith("TODO:"):
        _suspicious(
            info,
            "scaffold_stub",
            "still the scaffold's TODO placeholder: replace it with what the judge must check "
            "(the exact finding, or the rubric); notes.source / source.json names the PR",
        )
    return value


def not_an_unedited_draft(
    info: ValidationInfo, *, marker: object, digest: str, what: str, key: str
) -> None:
    """A model's draft nobody has edited yet (`suites/drafts.py`): a warning, an error
    under --strict, like the TODO placeholder it replaces."""
    if is_unedited_draft(marker, digest):
        _suspicious(info, "scaffold_draft", unedited_draft_message(what, key))


def _blank_is_suspicious(value: str, info: ValidationInfo) -> str:
    if not value.strip():
        _suspicious(info, "blank_text", "empty; Warden accepts it, but the judge gets no text")
    return value


LenientText = Annotated[
    str, AfterValidator(_blank_is_suspicious), WithJsonSchema({"type": "string"})
]
"""A string Warden's schema takes even empty: an empty one is a warning."""

FilledText = Annotated[LenientText, AfterValidator(not_a_scaffold_stub)]
"""Text a judge reads (a should_find finding): empty or a scaffold stub's `TODO:`
placeholder is a warning (an error under --strict)."""

_BAD_NAME = re.compile(f"[/{CONTROL_CHARACTERS}]")


def _check_name(value: str) -> str:
    _require_text(value)
    if _BAD_NAME.search(value):
        raise PydanticCustomError(
            "case_name", "must not contain '/' or control characters (it is part of the case id)"
        )
    return value


CaseName = Annotated[
    str,
    AfterValidator(_check_name),
    WithJsonSchema({"type": "string", "minLength": 1, "pattern": "^[^/\\u0000-\\u001f\\u007f]+$"}),
]
"""The case part of a case id (`<suite>/<name>`)."""

_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")


def _check_warden_name(value: str, info: ValidationInfo) -> str:
    if _CONTROL.search(value):
        raise PydanticCustomError(
            "case_name", "must not contain control characters (it is part of the case id)"
        )
    if not value.strip():
        _suspicious(info, "blank_text", "empty; Warden accepts it, and the case id ends in '/'")
    elif "/" in value:
        _suspicious(
            info,
            "name_with_slash",
            "contains '/'; Warden accepts it, and the case id then has more parts than "
            "<skill>/<name>",
        )
    return value


WardenCaseName = Annotated[
    str,
    AfterValidator(_check_warden_name),
    WithJsonSchema({"type": "string", "pattern": "^[^\\u0000-\\u001f\\u007f]*$"}),
]
"""A Warden scenario's name: any string Warden's schema takes (an empty one, or one with
`/`, is a warning); control characters are refused."""


def lowercase(value: Any) -> Any:
    """Accept `High` for `high`: Warden normalises severities and verdicts the same way."""
    return value.strip().lower() if isinstance(value, str) else value


def any_case(*words: str) -> WithJsonSchema:
    """The JSON Schema of a word `lowercase` accepts: editors must not flag `High`."""
    spellings = [form for word in words for form in (word, word.title(), word.upper())]
    return WithJsonSchema({"type": "string", "enum": spellings})


def _warden_severity(value: Any) -> Any:
    severity = warden_severity(value)
    if severity is None:
        raise PydanticCustomError(
            "severity",
            "must be high, medium or low, lowercase (Warden reads critical as high and info "
            "as low, and refuses anything else), got {got}",
            {"got": repr(value)},
        )
    return severity


SeverityValue = Annotated[
    Literal["high", "medium", "low"],
    PlainValidator(_warden_severity),
    WithJsonSchema({"type": "string", "enum": list(WARDEN_SEVERITY_WORDS)}),
]
"""A Warden severity, normalised as Warden's schema does it (`critical` -> `high`)."""


def _check_runtime(value: Any) -> str:
    if not isinstance(value, str):
        raise PydanticCustomError("runtime", "must be a string naming a runtime")
    problem = unknown_runtime(value)
    if problem is not None:
        raise PydanticCustomError("runtime", problem)
    return value


Runtime = Annotated[
    str,
    PlainValidator(_check_runtime),
    WithJsonSchema(
        {
            "type": "string",
            "description": (
                "An agent runtime: builtin (assay's own reviewer; claude and pi are Warden's "
                "names for it), command (runs agent_command), or one a plugin registers in "
                "the assay.runtimes entry point group."
            ),
            "examples": ["builtin", "command", "claude", "pi"],
        }
    ),
]
"""A runtime name from the runtime registry (`assay.registry.runtimes`)."""


def _check_agent_command(value: Any) -> Any:
    if isinstance(value, str):
        if not value.strip():
            raise PydanticCustomError("agent_command", "must not be empty")
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return value
    raise PydanticCustomError(
        "agent_command",
        "must be a command line string or a non-empty list of non-empty argv strings",
    )


AgentCommandValue = Annotated[str | list[str], BeforeValidator(_check_agent_command)]
