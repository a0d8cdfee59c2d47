"""The Action's inputs, read from the environment (input_text.py) and validated.

The defaults here are the defaults in action.yml; tests/test_action_yml.py keeps them equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from assay.action.input_text import (
    DEFAULT_LABEL,
    DEFAULT_TRIGGER_PATHS,
    input_location,
    raw_input,
    split_list,
)
from assay.core.numbers import read_number
from assay.errors import ConfigError, ConfigErrors
from assay.options import DEFAULT_THRESHOLD

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

__all__ = [
    "ACTION_ONLY_INPUTS",
    "DEFAULT_TRIGGER_PATHS",
    "MODEL_KEY_VARIABLES",
    "ActionInputs",
    "secret_inputs",
    "raw_input",
    "read_inputs",
]

ACTION_ONLY_INPUTS = ("python-version", "isolation")
"""Inputs consumed by action.yml itself, never read by `assay ci` as inputs: the interpreter,
and `isolation`, which action.yml both acts on (the bwrap step) and passes on as
ASSAY_ISOLATION, the `assay run --isolation` option."""

MODEL_KEY_VARIABLES = {
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "openai_api_key": "OPENAI_API_KEY",
    "openai_base_url": "OPENAI_BASE_URL",
    "openrouter_api_key": "OPENROUTER_API_KEY",
    "gemini_api_key": "GEMINI_API_KEY",
}
"""Each model input and the variable the providers read it from (bridged for the run)."""


class ActionInputs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    paths: tuple[str, ...] = ()
    """Suite files or directories, comma- or newline-separated; empty = the configured paths."""
    threshold: float = Field(default=DEFAULT_THRESHOLD, ge=0.0, le=1.0)
    """The gate: the run fails when the aggregate score is below this."""
    label: str = Field(default=DEFAULT_LABEL, min_length=1)
    """A pull request carrying this label runs the evals whatever files it changes."""
    trigger_paths: tuple[str, ...] = DEFAULT_TRIGGER_PATHS
    """Globs (`**` spans directories); a pull request changing a matching file runs the evals."""
    anthropic_api_key: SecretStr | None = None
    """Anthropic's key; bridged to ANTHROPIC_API_KEY for this run only."""
    openai_api_key: SecretStr | None = None
    """A key for OpenAI or any OpenAI-compatible server; bridged to OPENAI_API_KEY."""
    openai_base_url: str | None = None
    """An OpenAI-compatible server (vLLM, Ollama, a gateway); bridged to OPENAI_BASE_URL."""
    openrouter_api_key: SecretStr | None = None
    """OpenRouter's key; bridged to OPENROUTER_API_KEY."""
    gemini_api_key: SecretStr | None = None
    """A Gemini API key (Google AI Studio) for `gemini/` models; bridged to GEMINI_API_KEY."""
    github_token: SecretStr | None = None
    """Token for listing PR files, the sticky comment and the check run."""
    model: tuple[str, ...] = ()
    """Subject model(s), comma-separated for a matrix; empty = each suite's own model."""
    judge_model: str | None = None
    """Model for the judge; empty = the subject's model."""
    concurrency: int | None = Field(default=None, ge=1)
    """Case attempts run at once; empty = `[tool.assay]` concurrency, else 8 (with task
    cases one at a time; set, it applies to task cases too)."""
    repeat: int | Literal["auto"] | None = None
    """Attempts per case (the case score is their mean), or `auto`; empty = 1."""
    gate: Literal["threshold", "regression"] | None = None
    """`threshold` (default) or `regression`: significantly worse than `baseline-report`."""
    inconclusive: Literal["score", "fail", "pass", "neutral"] | None = None
    """The gate when the interval straddles the threshold; `neutral`: a notice, exit 0."""
    hidden_changes: Literal["warn", "fail"] | None = None
    """A task whose agent hid changes from git status (its own ignore rules): `warn`
    (PVYai's verdict, with a warning everywhere) or `fail` the task; empty = `[tool.assay]`,
    else warn."""
    select: Literal["affected", "all"] = "all"
    """`affected`: on a pull request, only the cases whose inputs it changes (`--affected-by`
    the base commit); `all` (default), and every push, runs every case."""
    affects_all: tuple[str, ...] = ()
    """Globs whose change makes `select: affected` run every case (the agent's code, prompts)."""
    max_errors: int | None = Field(default=None, ge=0)
    """Cases allowed to end in `error` before the gate fails; empty = `[tool.assay]`, else 0."""
    comment: bool = True
    """Keep one sticky comment with the results on the pull request."""
    check_run: bool = False
    """Also publish an "Evaluation Results" check run (needs `checks: write`)."""
    max_annotations: int = Field(default=10, ge=0)
    """Failed cases annotated on their suite file; the rest are counted in one notice."""
    report_dir: str | None = None
    """Where report.json and friends go; empty = $RUNNER_TEMP/assay-report."""
    shard: str | None = None
    """`I/N`: run only shard I of N (1-based), one per job of a matrix; empty = every case."""
    baseline_report: str | None = None
    """A report.json (or a directory holding one) to compare with, or `auto` for the newest
    `baseline-artifact` of a successful run on the default branch; empty = no comparison."""
    baseline_artifact: str = Field(default="assay-report", min_length=1)
    """The name of the report artifact `baseline-report: auto` looks for."""
    keep_history: bool = True
    """Restore the run history from `history-artifact` before the evals (action.yml uploads
    it after them), so the trend spans workflow runs; false: the history stays in the job."""
    history_artifact: str = Field(default="assay-history", min_length=1)
    """The artifact the history is restored from (the default branch's newest) and kept as."""

    @field_validator("paths", "trigger_paths", "model", "affects_all", mode="before")
    @classmethod
    def _split(cls, value: Any) -> tuple[str, ...]:
        return split_list(value)

    @field_validator("trigger_paths")
    @classmethod
    def _valid_globs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # Checked here, so a bad glob is an input error even on events that never match.
        # lazy: start-up (not loaded with this module)
        from assay.action.globs import check_patterns

        check_patterns(value)
        return value

    @field_validator("label", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        # `label: |` in YAML leaves a newline, and no label name has surrounding spaces.
        return value.strip() if isinstance(value, str) else value

    @field_validator(
        "judge_model",
        "openai_base_url",
        "report_dir",
        "concurrency",
        "repeat",
        "gate",
        "inconclusive",
        "hidden_changes",
        "max_errors",
        "shard",
        "baseline_report",
        mode="before",
    )
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return value.strip() or None if isinstance(value, str) else value

    @field_validator("threshold", "concurrency", "max_errors", "max_annotations", mode="before")
    @classmethod
    def _typed_number(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic reads `1_0` as 10, as Python does; in a workflow file it is a typo.
        if isinstance(value, str) and value.strip():
            return read_number(value.strip(), float if info.field_name == "threshold" else int)
        return value

    @field_validator("repeat", mode="before")
    @classmethod
    def _repeat(cls, value: Any) -> Any:
        # One message for a bad value, not one per member of the union.
        if isinstance(value, str):
            value = value.strip() or None
        if value is None or value == "auto":
            return value
        try:
            count = value if isinstance(value, int) else int(read_number(str(value), int))
        except (TypeError, ValueError):
            raise ValueError(f"expected a whole number or auto, got {value!r}") from None
        if count < 1:
            raise ValueError(f"Input should be greater than or equal to 1 (got {value!r})")
        return count

    @field_validator("shard")
    @classmethod
    def _valid_shard(cls, value: str | None) -> str | None:
        if value is None:
            return None
        # lazy: start-up (not loaded with this module)
        from assay.core.shards import ShardSyntaxError, format_shard, parse_shard

        try:
            return format_shard(parse_shard(value))
        except ShardSyntaxError:
            raise ValueError("must look like I/N with 1 <= I <= N, e.g. 2/4") from None

    @property
    def model_environment(self) -> dict[str, str]:
        """The model inputs that were given, as the variables the providers read."""
        values: dict[str, str] = {}
        for field, variable in MODEL_KEY_VARIABLES.items():
            value = getattr(self, field)
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            if value and value.strip():
                values[variable] = value.strip()
        return values

    @property
    def token(self) -> str | None:
        return self.github_token.get_secret_value() if self.github_token else None


def secret_inputs() -> tuple[str, ...]:
    """The inputs holding secrets (the model keys, the token), kebab-case: masked first."""
    return tuple(
        name.replace("_", "-")
        for name, field in ActionInputs.model_fields.items()
        if SecretStr in get_args(field.annotation)
    )


def input_names() -> tuple[str, ...]:
    """Every input `assay ci` reads, kebab-case as in action.yml."""
    return tuple(name.replace("_", "-") for name in ActionInputs.model_fields)


def read_inputs(env: Mapping[str, str], *, workflow_file: Path | None = None) -> ActionInputs:
    """Validate the inputs; every bad one is reported, located in `workflow_file` when found."""
    values: dict[str, str] = {}
    for name in input_names():
        value = raw_input(env, name)
        if value is not None:
            values[name.replace("-", "_")] = value
    if "github_token" not in values and env.get("GITHUB_TOKEN", "").strip():
        values["github_token"] = env["GITHUB_TOKEN"]
    try:
        return ActionInputs.model_validate(values)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = str(err["loc"][0]) if err["loc"] else ""
            name = field.replace("_", "-")
            shown = (
                "" if "api_key" in field or "token" in field else f" (got {values.get(field)!r})"
            )
            problems.append(
                ConfigError(
                    f"input `{name}`: {_problem(err)}{shown}",
                    input_location(workflow_file, name),
                )
            )
        raise ConfigErrors(problems) from None


def _problem(err: ErrorDetails) -> str:
    """pydantic's message, without the "Value error, " it puts before our validators' own."""
    if err["type"] == "value_error" and "error" in err.get("ctx", {}):
        return str(err["ctx"]["error"])
    return err["msg"]
