"""Shared pytest setup: offline by default, `--live` opts into real model calls."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--live", action="store_true", help="run tests marked `live` (real model calls)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    live = config.getoption("--live") and (
        os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ASSAY_ANTHROPIC_API_KEY")
    )
    skip = pytest.mark.skip(reason="live model test: pass --live with ANTHROPIC_API_KEY set")
    for item in items:
        if "live" in item.keywords and not live:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _offline_environment(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's real keys, tokens or GitHub environment (live tests aside)."""
    if "live" in request.node.keywords:
        return
    for name in list(os.environ):
        if (
            name.endswith("_API_KEY")
            or name in {"GITHUB_TOKEN", "GH_TOKEN"}
            or (
                name.startswith("GITHUB_") or name.startswith("INPUT_") or name.startswith("ASSAY_")
            )
        ):
            monkeypatch.delenv(name, raising=False)
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "RUNNER_TEMP"):
        monkeypatch.delenv(name, raising=False)
    # Nor the cloud credentials and endpoints of the bedrock, vertex and gemini providers.
    for name in list(os.environ):
        if name.startswith(
            ("AWS_", "ANTHROPIC_BEDROCK_", "ANTHROPIC_VERTEX_", "GOOGLE_", "GEMINI_")
        ):
            monkeypatch.delenv(name, raising=False)
    for name in ("CLOUD_ML_REGION", "GCLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    # Most tests' agents talk to the test through files beside the suite, which the OS
    # sandbox hides by design; tests/isolation/test_isolation.py runs the sandbox itself.
    monkeypatch.setenv("ASSAY_ISOLATION", "none")


@pytest.fixture(autouse=True)
def _private_state_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Signing keys of test runs' report directories go to a temp dir, not ~/.local/state."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(autouse=True)
def _forget_remembered_secrets() -> None:
    """Secrets one test's Action run remembered are not redacted from the next test's text."""
    from assay._util import secrets

    secrets._remembered.clear()
