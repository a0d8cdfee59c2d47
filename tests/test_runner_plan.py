"""Planning: shards, the model matrix, runtime/command/model resolution, credential skips."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from assay.errors import ConfigError, ConfigErrors
from assay.models.names import DEFAULT_MODEL
from assay.options import RunSettings
from assay.runner.arguments import parse_models, parse_shard
from assay.runner.plan import plan_runs, shard_cases
from assay.runner.resolve import (
    resolve_agent_command,
    resolve_judge_model,
    resolve_runtime,
    subject_models,
)
from assay.runner.settings import check_settings
from assay.suites.case import Case, FixtureFile, ReviewSpec, TaskSpec, VerifySpec


@dataclass(frozen=True)
class Config:
    """The fields of assay.suites.config.AssayConfig that resolution reads."""

    path: Path = Path("/project/pyproject.toml")
    agent_command: tuple[str, ...] | None = None
    runtime: str | None = None
    model: str | None = None
    judge_model: str | None = None


def task_case(name: str = "t1", **changes: object) -> Case:
    spec = TaskSpec(prompt="do it", workspace=Path("/fixture"), commands=())
    case = Case(
        id=f"tasks/{name}",
        suite="tasks",
        name=name,
        kind="task",
        format="task-suite",
        source_path=Path("/suite.json"),
        source_line=3,
        spec=spec,
    )
    return replace(case, **changes)  # type: ignore[arg-type]


def review_case(name: str = "r1", **changes: object) -> Case:
    spec = ReviewSpec(given="a bug", files=(FixtureFile(Path("/f.py"), "f.py"),))
    case = Case(
        id=f"review/{name}",
        suite="review",
        name=name,
        kind="review",
        format="review-yaml",
        source_path=Path("/review.yaml"),
        source_line=7,
        spec=spec,
    )
    return replace(case, **changes)  # type: ignore[arg-type]


def verify_case(name: str = "v1") -> Case:
    spec = VerifySpec(given="x", files=(), candidate={"title": "t"}, expect_verdict="keep")
    return Case(
        id=f"verification/{name}",
        suite="verification",
        name=name,
        kind="verify",
        format="verification",
        source_path=Path("/v.json"),
        source_line=1,
        spec=spec,
    )


# -- shard -------------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [("1/1", (1, 1)), ("2/4", (2, 4)), (" 3/3 ", (3, 3))])
def test_parse_shard_accepts_i_of_n(text: str, expected: tuple[int, int]) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["", "2", "0/3", "4/3", "a/b", "1/0", "-1/2", "1/2/3"])
def test_parse_shard_rejects_anything_else(text: str) -> None:
    with pytest.raises(ConfigError, match="--shard"):
        parse_shard(text)


def test_shards_partition_the_cases_and_ignore_their_order() -> None:
    cases = [task_case(f"t{i:02d}") for i in range(11)]
    shards = [shard_cases(cases, (i, 3)) for i in (1, 2, 3)]
    ids = [c.id for shard in shards for c in shard]
    assert sorted(ids) == sorted(c.id for c in cases)
    assert len(set(ids)) == len(ids)
    assert sorted(len(s) for s in shards) == [3, 4, 4]  # balanced
    reordered = list(reversed(cases))
    assert {c.id for c in shard_cases(reordered, (2, 3))} == {c.id for c in shards[1]}
    assert shard_cases(cases, None) == cases


# -- resolution ----------------------------------------------------------------------------


def test_parse_models_flattens_dedupes_and_keeps_order() -> None:
    assert parse_models(["a", "b,c", " a , d", ""]) == ("a", "b", "c", "d")


def test_task_cases_always_use_the_command_runtime() -> None:
    options = RunSettings(runtime="builtin")
    assert resolve_runtime(task_case(), options=options, config=None) == "command"


def test_runtime_precedence_for_review_cases() -> None:
    case = review_case(runtime="pi")
    assert resolve_runtime(case, options=RunSettings(runtime="command"), config=None) == "command"
    assert resolve_runtime(case, options=RunSettings(), config=None) == "builtin"  # alias
    plain = review_case()
    assert resolve_runtime(plain, options=RunSettings(), config=Config(runtime="command")) == (
        "command"
    )
    # An agent command from the command line switches to `command`; one from config does not.
    assert resolve_runtime(plain, options=RunSettings(agent_command=("x",)), config=None) == (
        "command"
    )
    config = Config(agent_command=("x",))
    assert resolve_runtime(plain, options=RunSettings(), config=config) == "builtin"
    # ... and beats the suite's `runtime: pi` default: the named agent is the one under test.
    assert resolve_runtime(case, options=RunSettings(agent_command=("x",)), config=None) == (
        "command"
    )


def test_agent_command_precedence() -> None:
    case = task_case(agent_command=("case",))
    config = Config(agent_command=("config",))
    cli = RunSettings(agent_command=("cli",))
    assert resolve_agent_command(case, options=cli, config=config) == ("cli",)
    assert resolve_agent_command(case, options=RunSettings(), config=config) == ("case",)
    assert resolve_agent_command(task_case(), options=RunSettings(), config=config) == ("config",)
    assert resolve_agent_command(task_case(), options=RunSettings(), config=None) is None


def test_subject_models() -> None:
    config = Config(model="config-model")
    matrix = RunSettings(models=("a", "b"))
    case = review_case(model="case-model")
    assert subject_models(case, runtime="builtin", options=matrix, config=config) == ("a", "b")
    assert subject_models(case, runtime="builtin", options=RunSettings(), config=config) == (
        "case-model",
    )
    plain = review_case()
    assert subject_models(plain, runtime="builtin", options=RunSettings(), config=config) == (
        "config-model",
    )
    assert subject_models(plain, runtime="builtin", options=RunSettings(), config=None) == (
        DEFAULT_MODEL,
    )
    # The command runtime gets no model unless one is asked for.
    assert subject_models(task_case(), runtime="command", options=RunSettings(), config=config) == (
        None,
    )


def test_judge_model_precedence() -> None:
    case = review_case(model="case-model")
    config = Config(judge_model="config-judge")
    kwargs = {"case": case, "subject": "subject"}
    assert resolve_judge_model(**kwargs, options=RunSettings(judge_model="j"), config=config) == "j"
    assert resolve_judge_model(**kwargs, options=RunSettings(), config=config) == "config-judge"
    assert resolve_judge_model(**kwargs, options=RunSettings(), config=None) == "subject"
    assert resolve_judge_model(case, subject=None, options=RunSettings(), config=None) == (
        "case-model"
    )
    assert resolve_judge_model(review_case(), subject=None, options=RunSettings(), config=None) == (
        DEFAULT_MODEL
    )


# -- plan ----------------------------------------------------------------------------------


def test_plan_skips_model_cases_without_credentials_and_keeps_the_rest() -> None:
    runs = plan_runs(
        [task_case(), review_case(), verify_case()], options=RunSettings(), config=None
    )
    by_id = {r.case.id: r for r in runs}
    assert by_id["tasks/t1"].skip_reason is None
    assert by_id["tasks/t1"].judge_model is None
    assert "ANTHROPIC_API_KEY" in (by_id["review/r1"].skip_reason or "")
    assert "ANTHROPIC_API_KEY" in (by_id["verification/v1"].skip_reason or "")  # builtin subject


def test_plan_checks_the_judge_key_for_command_review_cases(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options = RunSettings(agent_command=(sys.executable,), judge_model="openai/gpt-x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    (run,) = plan_runs([review_case()], options=options, config=None)
    assert run.runtime == "command" and run.model is None
    assert run.skip_reason == "judge: no credentials for openai/gpt-x: set OPENAI_API_KEY"


def test_plan_leaves_credentials_to_the_cache_when_one_is_used() -> None:
    options = RunSettings(cache_dir=Path("/cache"), offline=True)
    (run,) = plan_runs([review_case()], options=options, config=None)
    assert run.skip_reason is None


def test_plan_expands_the_model_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    options = RunSettings(models=("claude-a", "claude-b"))
    runs = plan_runs([task_case(), review_case()], options=options, config=None)
    assert [(r.case.id, r.model) for r in runs] == [
        ("tasks/t1", "claude-a"),
        ("tasks/t1", "claude-b"),
        ("review/r1", "claude-a"),
        ("review/r1", "claude-b"),
    ]
    assert [r.judge_model for r in runs[2:]] == ["claude-a", "claude-b"]


def test_plan_rejects_unknown_runtimes_with_the_case_location() -> None:
    with pytest.raises(ConfigErrors) as caught:
        plan_runs([review_case(runtime="gemini")], options=RunSettings(), config=None)
    assert str(caught.value).startswith("/review.yaml:7: review/r1: unknown runtime 'gemini'")


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"concurrency": 0}, "--concurrency must be at least 1"),
        ({"repeat": 0}, "--repeat must be between 1 and 1000"),
        ({"repeat": 1001}, "--repeat must be between 1 and 1000, got 1001"),
        ({"threshold": 1.5}, "--threshold must be between 0 and 1"),
        ({"threshold": float("nan")}, "--threshold"),
        ({"timeout_s": 0.0}, "--timeout must be a positive"),
        ({"max_errors": -1}, "--max-errors"),
        ({"max_cost_usd": -2.0}, "--max-cost"),
        ({"offline": True}, "--offline replays recorded model calls: it needs --cache"),
        ({"shard": (3, 2)}, "--shard"),
    ],
)
def test_check_options_names_the_bad_flag(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_settings(RunSettings(**changes))  # type: ignore[arg-type]


def test_check_options_accepts_the_defaults() -> None:
    check_settings(RunSettings())
