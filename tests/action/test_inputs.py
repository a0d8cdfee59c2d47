"""Reading the Action's inputs from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.action.environment import RunnerEnvironment
from assay.action.inputs import DEFAULT_TRIGGER_PATHS, read_inputs
from assay.errors import ConfigErrors


def test_defaults_without_any_input() -> None:
    inputs = read_inputs({})
    assert inputs.threshold == 0.75 and inputs.label == "run-evals"
    assert inputs.trigger_paths == DEFAULT_TRIGGER_PATHS
    assert inputs.comment is True and inputs.check_run is False and inputs.max_annotations == 10
    assert inputs.concurrency is None and inputs.repeat is None and inputs.max_errors is None
    assert inputs.model_environment == {} and inputs.token is None and inputs.report_dir is None


def test_every_spelling_is_accepted_in_order() -> None:
    env = {
        "INPUT_MAX-ERRORS": "3",  # how GitHub names inputs for JavaScript/Docker actions
        "INPUT_MAX_ERRORS": "4",
        "ASSAY_MAX_ERRORS": "5",
        "INPUT_JUDGE_MODEL": "anthropic/claude-haiku-4-5",
        "ASSAY_REPEAT": "2",
        "INPUT_CONCURRENCY": "",  # unset inputs arrive empty
        "ASSAY_CONCURRENCY": "6",
    }
    inputs = read_inputs(env)
    assert inputs.max_errors == 3
    assert inputs.judge_model == "anthropic/claude-haiku-4-5"
    assert inputs.repeat == 2 and inputs.concurrency == 6


def test_lists_booleans_and_secrets() -> None:
    inputs = read_inputs(
        {
            "INPUT_PATHS": "evals/a.yaml\nevals/b\n\n",
            "INPUT_MODEL": "anthropic/claude-sonnet-4-6, openai/gpt-4o",
            "INPUT_TRIGGER_PATHS": "src/**,!src/**/*.md",
            "INPUT_COMMENT": "false",
            "INPUT_CHECK_RUN": "TRUE",
            "INPUT_ANTHROPIC_API_KEY": "sk-secret",
            "GITHUB_TOKEN": "ghs_env_token",
        }
    )
    assert inputs.paths == ("evals/a.yaml", "evals/b")
    assert inputs.model == ("anthropic/claude-sonnet-4-6", "openai/gpt-4o")
    assert inputs.trigger_paths == ("src/**", "!src/**/*.md")
    assert inputs.comment is False and inputs.check_run is True
    assert inputs.model_environment == {"ANTHROPIC_API_KEY": "sk-secret"}
    assert "sk-secret" not in repr(inputs)
    assert inputs.token == "ghs_env_token"


def test_every_bad_input_is_reported_and_secrets_are_not_echoed(tmp_path: Path) -> None:
    workflow = tmp_path / "evals.yml"
    workflow.write_text("steps:\n  - with:\n      repeat: 0\n      comment: maybe\n")
    with pytest.raises(ConfigErrors) as caught:
        read_inputs(
            {
                "INPUT_REPEAT": "0",
                "INPUT_COMMENT": "maybe",
                "INPUT_THRESHOLD": "nan",
                "INPUT_LABEL": " ",
            },
            workflow_file=workflow,
        )
    messages = [str(e) for e in caught.value.errors]
    assert len(messages) == 3  # a blank label is "not given", so its default applies
    assert any(m.startswith(f"{workflow}:3:7: input `repeat`") for m in messages)
    assert any(
        m.startswith(f"{workflow}:4:7: input `comment`") and "'maybe'" in m for m in messages
    )
    assert any("input `threshold`" in m and "'nan'" in m for m in messages)


def test_workflow_file_comes_from_the_workflow_ref(tmp_path: Path) -> None:
    env = RunnerEnvironment.from_environ(
        {
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_REPOSITORY": "acme/widgets",
            "GITHUB_WORKSPACE": str(tmp_path),
            "GITHUB_WORKFLOW_REF": "acme/widgets/.github/workflows/evals.yml@refs/heads/main",
        }
    )
    assert env.workflow_file == tmp_path / ".github" / "workflows" / "evals.yml"
    other = RunnerEnvironment.from_environ(
        {
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_REPOSITORY": "acme/widgets",
            "GITHUB_WORKFLOW_REF": "acme/shared/.github/workflows/reusable.yml@v1",
        }
    )
    assert other.workflow_file is None  # a reusable workflow from another repository
    assert other.api_url == "https://api.github.com"


@pytest.mark.parametrize("given", ["run-evals\n", " run-evals ", "\trun-evals\r\n"])
def test_the_label_is_stripped(given: str) -> None:
    # `label: |` in YAML, or stray spaces, would otherwise never match a label.
    assert read_inputs({"INPUT_LABEL": given}).label == "run-evals"


def test_an_invalid_trigger_path_is_reported_where_it_is_set(tmp_path: Path) -> None:
    workflow = tmp_path / "evals.yml"
    workflow.write_text("steps:\n  - with:\n      trigger-paths: |\n        evals/[z-a]*\n")
    with pytest.raises(ConfigErrors) as caught:
        read_inputs({"INPUT_TRIGGER_PATHS": "evals/**\nevals/[z-a]*\n"}, workflow_file=workflow)
    (message,) = [str(e) for e in caught.value.errors]
    assert message.startswith(
        f"{workflow}:3:7: input `trigger-paths`: invalid pattern 'evals/[z-a]*': "
        "bad character range z-a"
    )


def test_every_model_input_is_bridged_to_its_provider_variable() -> None:
    inputs = read_inputs(
        {
            "INPUT_ANTHROPIC_API_KEY": " sk-ant ",
            "INPUT_OPENAI_API_KEY": "sk-openai",
            "INPUT_OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
            "INPUT_OPENROUTER_API_KEY": "sk-or",
            "INPUT_GEMINI_API_KEY": "AIza-gemini",
        }
    )
    assert inputs.model_environment == {
        "ANTHROPIC_API_KEY": "sk-ant",
        "OPENAI_API_KEY": "sk-openai",
        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
        "OPENROUTER_API_KEY": "sk-or",
        "GEMINI_API_KEY": "AIza-gemini",
    }
    for secret in ("sk-ant", "sk-openai", "sk-or", "AIza-gemini"):
        assert secret not in repr(inputs)


def test_each_providers_action_input_is_read_and_bridged_to_one_of_its_keys() -> None:
    from assay.action.inputs import MODEL_KEY_VARIABLES, input_names, secret_inputs
    from assay.models.providers import PROVIDERS

    given = {
        name: spec.action_input
        for name in PROVIDERS.names()
        if (spec := PROVIDERS.get(name)) is not None and spec.action_input is not None
    }
    assert given == {
        "anthropic": "anthropic-api-key",
        "openai": "openai-api-key",
        "openrouter": "openrouter-api-key",
        "gemini": "gemini-api-key",
    }
    for provider, name in given.items():
        spec = PROVIDERS.get(provider)
        assert spec is not None and name in input_names() and name in secret_inputs()
        assert MODEL_KEY_VARIABLES[name.replace("-", "_")] in spec.keys, provider
    assert set(secret_inputs()) == {*given.values(), "github-token"}


@pytest.mark.parametrize(
    ("name", "value"),
    [("THRESHOLD", "0_8"), ("CONCURRENCY", "1_6"), ("MAX_ERRORS", "1_0"), ("REPEAT", "1_0")],
)
def test_a_number_with_digit_separators_is_refused(name: str, value: str) -> None:
    """pydantic, like int() and float(), reads `1_6` as 16; in a workflow file it is a typo."""
    with pytest.raises(ConfigErrors, match=name.lower().replace("_", "-")):
        read_inputs({f"INPUT_{name}": value})


def test_numbers_as_typed_are_read() -> None:
    inputs = read_inputs(
        {"INPUT_THRESHOLD": "1e-1", "INPUT_CONCURRENCY": " 4 ", "INPUT_REPEAT": "3"}
    )
    assert (inputs.threshold, inputs.concurrency, inputs.repeat) == (0.1, 4, 3)
