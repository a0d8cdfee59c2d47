"""The model bridge end to end: fake `claude`, `codex`, `gemini`, `opencode` and `aider` CLIs
calling their real SDKs.

The CLIs (tests/fakes/sdk_agent_cli.py) run a tool-use loop against the base URL in their
environment; assay points it at the attempt's bridge, which forwards every call through
its model layer to the loopback fake provider. A review case and a task case run: the
tokens and cost in report.json are the bridge's (not what the CLI claims), a second run
with `--cache --offline` replays without a single call to the fake and gives the same
verdicts, and the real key never reaches the CLI's environment (its token does).
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.core.usage import Usage
from assay.isolation.bwrap import probe_bwrap
from assay.models.pricing import cost_usd
from assay.report.model import CaseResult, Report
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.corpus_responder import corpus_responder
from tests.fakes.gemini_api import FakeGemini, messages_responder
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.sdk_agent_cli import CLI_USAGE
from tests.fakes.sdk_clis import anthropic_agent, install_sdk_cli, openai_agent

pytestmark = pytest.mark.slow  # real processes and servers per test: seconds each

ROOT = Path(__file__).resolve().parents[2]
REAL_ANTHROPIC_KEY = "sk-ant-real-key-never-in-the-sandbox-0123456789"
REAL_OPENAI_KEY = "sk-proj-real-openai-key-never-in-the-sandbox-0123"
REAL_GEMINI_KEY = "AIzaSy-real-gemini-key-never-in-the-sandbox-01234"
REAL_OPENROUTER_KEY = "sk-or-v1-real-openrouter-key-never-in-the-sandbox-0"
REVIEW_CASE = "bug-detection/null-property-access"
TASK_CASE = "assay-python-tasks/slugify-unicode"
MODELS = {
    "claude-code": "anthropic/claude-sonnet-4-6",
    "codex": "openai/gpt-5",
    "gemini-cli": "gemini/gemini-2.5-pro",
}
# What the fake model's turns cost (tests/fakes: a tool call, then a text answer).
AGENT_TURNS = {
    "claude-code": Usage(input_tokens=40 + 25, output_tokens=20 + 10),
    "codex": Usage(input_tokens=40 + 25, output_tokens=20 + 10),
}


@pytest.fixture(autouse=True)
def in_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def providers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeAnthropic, FakeOpenAI]]:
    """The fake Anthropic (agent calls of claude, and the judge) and OpenAI (codex's)."""
    judge = corpus_responder
    with (
        FakeAnthropic(api_key=REAL_ANTHROPIC_KEY, responder=anthropic_agent(judge)) as claude,
        FakeOpenAI(api_key=REAL_OPENAI_KEY, responder=openai_agent(_no_judge)) as gpt,
    ):
        monkeypatch.setenv("ANTHROPIC_API_KEY", REAL_ANTHROPIC_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        monkeypatch.setenv("OPENAI_API_KEY", REAL_OPENAI_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", gpt.base_url)
        yield claude, gpt


@pytest.fixture
def gemini_upstream(
    monkeypatch: pytest.MonkeyPatch, providers: tuple[FakeAnthropic, FakeOpenAI]
) -> Iterator[FakeGemini]:
    """The fake Gemini API (gemini-cli's agent calls, and opencode's `google/` ones), where
    assay's own `gemini/` provider finds it; the judge stays Anthropic's."""
    with FakeGemini(api_key=REAL_GEMINI_KEY, responder=messages_responder(anthropic_agent(
            _no_judge))) as gemini:  # fmt: skip
        monkeypatch.setenv("GEMINI_API_KEY", REAL_GEMINI_KEY)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.url)
        yield gemini


@pytest.fixture
def openrouter_upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A fake OpenRouter (Chat Completions; opencode's and aider's `openrouter/` models),
    where assay's own `openrouter/` provider finds it."""
    with FakeOpenAI(api_key=REAL_OPENROUTER_KEY, responder=openai_agent(_no_judge)) as fake:
        monkeypatch.setenv("OPENROUTER_API_KEY", REAL_OPENROUTER_KEY)
        monkeypatch.setenv("OPENROUTER_BASE_URL", fake.base_url)
        yield fake


def _no_judge(request: dict[str, Any]) -> Any:
    raise ValueError("the judge is Anthropic's in these runs")


def cli_on_path(tmp_path: Path, preset: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_sdk_cli(tmp_path / "bin", preset)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{Path(sys.executable).parent}:/usr/bin:/bin")
    dump = tmp_path / "cli-env.jsonl"
    monkeypatch.setenv("FAKE_CLI_ENV", str(dump))
    return dump


def run(
    tmp_path: Path,
    name: str,
    preset: str,
    *extra: str,
    model: str | None = None,
    cases: tuple[str, ...] = (REVIEW_CASE, TASK_CASE),
) -> tuple[int, Report]:
    """`assay run` of `cases` with `preset` (its model `MODELS[preset]` unless `model`
    says), judged by Anthropic's fake, into `tmp_path / name`."""
    report = tmp_path / name
    selected = [arg for case in cases for arg in ("-t", case)]
    code = main(
        [
            *("run", "evals", "--runtime", preset, "--model", model or MODELS[preset]),
            *("--judge-model", "anthropic/claude-sonnet-4-6", *selected),
            *("--report-dir", str(report), "--work-root", str(tmp_path / "work"), *extra),
        ]
    )
    return code, Report.model_validate_json((report / "report.json").read_text())


def assert_counted_by_the_bridge(
    tmp_path: Path, case: CaseResult, model: str, calls: list[tuple[str, bool]]
) -> None:
    """The review's two agent calls went through the bridge (`calls`: each one's API and
    whether it streamed), whose count and price are its agent's usage: the CLI's own
    claim ($0.50) is kept beside it, never added."""
    lines = _model_calls(tmp_path / "first", case.id)
    assert [(line["api"], line["stream"]) for line in lines[:-1]] == calls
    expected = Usage(input_tokens=40 + 25, output_tokens=20 + 10)
    price = cost_usd(model.split("/", 1)[1], expected)
    assert price is not None
    summary = lines[-1]["summary"]
    assert summary["calls"] == 2
    assert summary["usage"]["input_tokens"] == expected.input_tokens
    assert summary["usage"]["cost_usd"] == pytest.approx(price)
    assert summary["cli_reported_usage"]["input_tokens"] == CLI_USAGE["input"]
    # The case adds its judge's calls to the bridge's count.
    assert case.usage.input_tokens > expected.input_tokens
    assert price < (case.usage.cost_usd or 0) < CLI_USAGE["cost"]


def agent_calls(fake: FakeAnthropic | FakeOpenAI | FakeGemini) -> int:
    return sum(1 for body in fake.bodies() if "read_file" in json.dumps(body.get("tools")))


@pytest.mark.parametrize("preset", ["claude-code", "codex"])
def test_a_preset_runs_through_the_bridge_and_replays_offline(
    preset: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    providers: tuple[FakeAnthropic, FakeOpenAI],
) -> None:
    dump = cli_on_path(tmp_path, preset, monkeypatch)
    claude, gpt = providers
    upstream = claude if preset == "claude-code" else gpt
    cache = str(tmp_path / "cache")
    code, report = run(tmp_path, "first", preset, "--cache", cache)
    results = {case.id: case for case in report.cases}
    assert results[REVIEW_CASE].status == "pass", results[REVIEW_CASE].reason
    task = results[TASK_CASE]
    assert all(c.status == "pass" for c in task.checks if c.kind != "trace"), task.reason
    # Two model calls per case (a tool call, then the answer), through the bridge.
    assert agent_calls(upstream) == 4
    expected = AGENT_TURNS[preset]
    price = cost_usd(MODELS[preset].split("/", 1)[1], expected)
    assert price is not None
    # A task has no judge: its usage is the bridge's count, priced by assay, not the CLI's.
    usage = task.usage
    assert (usage.input_tokens, usage.output_tokens) == (expected.input_tokens, 30)
    assert usage.cost_usd == pytest.approx(price)
    # A review adds its judge's calls to the agent's (the bridge's, not the CLI's $0.50).
    review = results[REVIEW_CASE].usage
    assert review.input_tokens > expected.input_tokens
    assert price < (review.cost_usd or 0) < CLI_USAGE["cost"]
    for case_id in (REVIEW_CASE, TASK_CASE):
        lines = _model_calls(tmp_path / "first", case_id)
        assert [line["stream"] for line in lines[:-1]] == [True, True]
        assert lines[0]["response"]["stop_reason"] == "tool_use"
        summary = lines[-1]["summary"]
        assert summary["calls"] == 2
        assert summary["usage"]["input_tokens"] == expected.input_tokens
        assert summary["usage"]["cost_usd"] == pytest.approx(price)
        assert summary["cli_reported_usage"]["input_tokens"] == CLI_USAGE["input"]
    # report.html shows the model calls beside the CLI's own trace.
    page = (tmp_path / "first" / "report.html").read_text()
    assert "model calls (through assay's bridge)" in page
    assert page.count('"model_calls":{"messages":') == 2, "one per attempt"
    # The real key never entered the CLI's environment; the attempt's token did.
    dumps = [json.loads(line) for line in dump.read_text().splitlines()]
    assert len(dumps) == 2
    for env in dumps:
        assert REAL_ANTHROPIC_KEY not in json.dumps(env)
        assert REAL_OPENAI_KEY not in json.dumps(env)
        key = env["ANTHROPIC_API_KEY" if preset == "claude-code" else "OPENAI_API_KEY"]
        assert key.startswith("assay-bridge-")
    calls_before = (claude.calls, gpt.calls)
    code2, replayed = run(tmp_path, "second", preset, "--cache", cache, "--offline")
    assert (claude.calls, gpt.calls) == calls_before, "the offline run called the provider"
    again = {case.id: case for case in replayed.cases}
    assert {k: v.status for k, v in again.items()} == {k: v.status for k, v in results.items()}
    for case_id in results:
        assert again[case_id].usage == results[case_id].usage
    assert code2 == code


def test_gemini_cli_runs_through_the_bridge_and_replays_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gemini_upstream: FakeGemini
) -> None:
    """gemini-cli speaks Gemini's own API (streamGenerateContent with `alt=sse`, its key as
    `x-goog-api-key`): its calls go through the bridge to assay's `gemini/` provider, the
    case's usage is the bridge's count, its real key stays out of the CLI's environment,
    and a rerun with `--cache --offline` makes no call at all, though the CLI's session
    context names another date form and another project directory each run."""
    dump = cli_on_path(tmp_path, "gemini-cli", monkeypatch)
    monkeypatch.setenv("GOOGLE_API_KEY", REAL_GEMINI_KEY)  # the SDK's other name for it
    cache = str(tmp_path / "cache")

    def review(name: str, *extra: str) -> tuple[int, Report]:
        return run(tmp_path, name, "gemini-cli", *extra, cases=(REVIEW_CASE,))

    code, report = review("first", "--cache", cache)
    (case,) = report.cases
    assert case.status == "pass", case.reason
    assert agent_calls(gemini_upstream) == 2  # a function call, then the answer
    assert_counted_by_the_bridge(
        tmp_path, case, MODELS["gemini-cli"], [("gemini-generate-content", True)] * 2
    )
    first_call = _model_calls(tmp_path / "first", REVIEW_CASE)[0]
    assert first_call["response"]["stop_reason"] == "tool_use"
    # The function call's id went back with its response: the second call answered it.
    second = gemini_upstream.bodies()[-1]
    answered = [p for c in second["contents"] for p in c["parts"] if "functionResponse" in p]
    assert answered and answered[0]["functionResponse"]["name"] == "read_file"
    (env,) = [json.loads(line) for line in dump.read_text().splitlines()]
    assert REAL_GEMINI_KEY not in json.dumps(env)
    assert env["GEMINI_API_KEY"].startswith("assay-bridge-")
    assert env["GOOGLE_GEMINI_BASE_URL"].startswith("http://127.0.0.1:")
    assert "GOOGLE_API_KEY" not in env
    calls_before = gemini_upstream.calls
    code2, replayed = review("second", "--cache", cache, "--offline")
    assert gemini_upstream.calls == calls_before, "the offline run called the provider"
    (again,) = replayed.cases
    assert again.status == case.status and again.usage == case.usage
    assert code2 == code


# opencode and aider run many providers' models: Anthropic's and OpenAI's go through the
# bridge, each on the API the CLI speaks for it (and the bridge's API named in the calls file).
MANY_PROVIDERS = [
    ("opencode", "anthropic/claude-sonnet-4-6", "anthropic-messages", True),
    ("opencode", "openai/gpt-5", "openai-responses", True),
    ("aider", "anthropic/claude-sonnet-4-6", "anthropic-messages", False),  # --no-stream
    ("aider", "openai/gpt-5", "openai-chat", False),
    # opencode's `google/` models: Gemini's API, with no ids on its calls (the AI SDK's way)
    ("opencode", "gemini/gemini-2.5-pro", "gemini-generate-content", True),
    # aider's: Gemini's API at the `api_base` of its model-settings file, whole, no ids
    ("aider", "gemini/gemini-2.5-pro", "gemini-generate-content", False),
    # OpenRouter's models: Chat Completions under the bridge's OpenRouter path, with
    # OpenRouter's own fields (`usage`, aider's `transforms`) and app headers
    ("opencode", "openrouter/anthropic/claude-sonnet-4.5", "openrouter-chat", True),
    ("aider", "openrouter/anthropic/claude-sonnet-4.5", "openrouter-chat", False),
]


@pytest.mark.parametrize(("preset", "model", "api", "streamed"), MANY_PROVIDERS)
def test_opencode_and_aider_run_through_the_bridge_and_replay_offline(
    preset: str,
    model: str,
    api: str,
    streamed: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    providers: tuple[FakeAnthropic, FakeOpenAI],
    gemini_upstream: FakeGemini,
    openrouter_upstream: FakeOpenAI,
) -> None:
    """The fake CLIs read their base URL and key where the real ones do (opencode: its
    inline config; aider: LiteLLM's variables): a review case's calls go through the
    bridge, its usage is the bridge's count, and a rerun with `--cache --offline` makes
    no call at all."""
    dump = cli_on_path(tmp_path, preset, monkeypatch)
    monkeypatch.setenv("GOOGLE_API_KEY", REAL_GEMINI_KEY)  # LiteLLM's other name for it
    claude, gpt = providers
    upstream: FakeAnthropic | FakeOpenAI | FakeGemini = {
        "anthropic": claude,
        "openai": gpt,
        "gemini": gemini_upstream,
        "openrouter": openrouter_upstream,
    }[model.split("/", 1)[0]]

    def review(name: str, *extra: str) -> tuple[int, Report]:
        return run(tmp_path, name, preset, *extra, model=model, cases=(REVIEW_CASE,))

    cache = str(tmp_path / "cache")
    code, report = review("first", "--cache", cache)
    (case,) = report.cases
    assert case.status == "pass", case.reason
    assert agent_calls(upstream) == 2  # a tool call, then the answer, through the bridge
    assert_counted_by_the_bridge(tmp_path, case, model, [(api, streamed)] * 2)
    (env,) = [json.loads(line) for line in dump.read_text().splitlines()]
    for real in (REAL_ANTHROPIC_KEY, REAL_OPENAI_KEY, REAL_GEMINI_KEY, REAL_OPENROUTER_KEY):
        assert real not in json.dumps(env)
    gemini_key = {"opencode": "GOOGLE_GENERATIVE_AI_API_KEY", "aider": "GEMINI_API_KEY"}[preset]
    key = {
        "anthropic": "ANTHROPIC_API_KEY",
        "openai": "OPENAI_API_KEY",
        "openrouter": "OPENROUTER_API_KEY",
    }.get(model.split("/", 1)[0], gemini_key)
    assert env[key].startswith("assay-bridge-")
    if model.startswith("openrouter/"):
        # OpenRouter's model id reached OpenRouter (assay's `openrouter/` provider), with
        # none of OpenRouter's own fields the CLI sent (the bridge drops them).
        bodies = [body for body in openrouter_upstream.bodies() if body.get("tools")]
        assert {body["model"] for body in bodies} == {"anthropic/claude-sonnet-4.5"}
        assert not any("transforms" in body or "provider" in body for body in bodies)
    if preset == "aider" and model.startswith("gemini/"):
        # Its model settings are in the attempt's scratch directory, not in the workspace,
        # and hold the bridge's URL, never a key.
        (read,) = [json.loads(line) for line in Path(f"{dump}.settings").read_text().splitlines()]
        assert Path(read["path"]).parent.name == "scratch"
        assert not Path(read["path"]).is_relative_to(read["cwd"])  # not in the workspace
        (entry,) = json.loads(read["text"])
        assert entry["name"] == "aider/extra_params"
        assert entry["extra_params"]["api_base"].endswith("/v1beta/models/gemini-2.5-pro")
        assert env[key] not in read["text"]
    calls_before = (claude.calls, gpt.calls, gemini_upstream.calls, openrouter_upstream.calls)
    code2, replayed = review("second", "--cache", cache, "--offline")
    after = (claude.calls, gpt.calls, gemini_upstream.calls, openrouter_upstream.calls)
    assert after == calls_before, "the offline run called the provider"
    (again,) = replayed.cases
    assert again.status == case.status and again.usage == case.usage
    assert code2 == code


def test_aider_gemini_through_the_bridge_with_litellm_before_its_api_base_change(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    providers: tuple[FakeAnthropic, FakeOpenAI],
    gemini_upstream: FakeGemini,
    openrouter_upstream: FakeOpenAI,
) -> None:
    """LiteLLM releases before its PR 14604 (September 2025) call a Gemini `api_base` as the
    whole model URL (`<api_base>:generateContent`, the key as a Bearer token): aider's
    calls reach the bridge all the same, and replay offline."""
    monkeypatch.setenv("FAKE_LITELLM", "before-14604")
    test_opencode_and_aider_run_through_the_bridge_and_replay_offline(
        "aider",
        "gemini/gemini-2.5-pro",
        "gemini-generate-content",
        False,
        tmp_path,
        monkeypatch,
        providers,
        gemini_upstream,
        openrouter_upstream,
    )


def test_opencode_and_aider_keep_other_providers_models_direct() -> None:
    """The bridge speaks neither Bedrock's API nor Vertex's: a CLI running those keeps its
    direct calls and its provider's own key, as does a CLI on its own default model.
    Both bridge Gemini's models (opencode's config takes Google's base URL; aider's
    model-settings file an `api_base` for LiteLLM) and OpenRouter's (its Chat Completions
    under the bridge's OpenRouter path)."""
    from assay.agents.presets.aider import Aider
    from assay.agents.presets.opencode import Opencode
    from assay.bridge.attempt import bridged_api
    from assay.options import RunOptions

    options = RunOptions(bridge=True)  # asked for by name: bridged wherever it can be
    for preset in (Opencode("opencode"), Aider("aider")):
        assert bridged_api(preset, options, "anthropic/claude-sonnet-4-6") == "anthropic"
        assert bridged_api(preset, options, "openai/gpt-5") == "openai"
        for model in (
            "vertex/claude-sonnet-4-6@20260115",
            "bedrock/us.anthropic.claude-haiku-4-5-v1:0",
        ):
            assert bridged_api(preset, options, model) is None
        assert bridged_api(preset, options, None) is None
        assert bridged_api(preset, RunOptions(bridge=False), "openai/gpt-5") is None
    assert bridged_api(Opencode("opencode"), options, "gemini/gemini-2.5-pro") == "gemini"
    assert bridged_api(Aider("aider"), options, "gemini/gemini-2.5-pro") == "gemini"
    for preset in (Opencode("opencode"), Aider("aider")):
        assert bridged_api(preset, options, "openrouter/openai/gpt-5") == "openrouter"
        assert bridged_api(preset, RunOptions(bridge=False), "openrouter/openai/gpt-5") is None


def test_opencode_keeps_the_users_own_inline_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """OPENCODE_CONFIG_CONTENT is where opencode reads the bridge's URL: a user's own inline
    config stays in it, but its provider's base URL and key are the bridge's."""
    from assay.agents.presets.opencode import Opencode

    own = {"permission": {"bash": "allow"}, "provider": {"anthropic": {"options": {
        "baseURL": "https://elsewhere.example/v1", "timeout": 5}}}}  # fmt: skip
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", json.dumps(own))
    env = Opencode("opencode").bridge_environ("http://127.0.0.1:9", "assay-bridge-t", "anthropic")
    config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    assert config["permission"] == {"bash": "allow"}
    assert config["provider"]["anthropic"]["options"] == {
        "baseURL": "http://127.0.0.1:9/v1",
        "apiKey": "assay-bridge-t",
        "timeout": 5,
    }
    assert env["ANTHROPIC_API_KEY"] == "assay-bridge-t"


def _model_calls(report_dir: Path, case_id: str) -> list[dict[str, Any]]:
    """The attempt's model-calls file (its lines; the last one is the summary)."""
    (path,) = report_dir.joinpath("cases", *case_id.split("/")).rglob("model-calls.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


BWRAP, WHY_NOT = probe_bwrap()


@pytest.mark.skipif(BWRAP is None, reason=f"no working bwrap ({WHY_NOT})")
def test_the_bridge_is_reachable_from_inside_the_os_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, providers: tuple[FakeAnthropic, FakeOpenAI]
) -> None:
    """bwrap with the agent's network on shares the host's network namespace: the CLI
    reaches the bridge on 127.0.0.1, and its environment holds the token, not the key."""
    cli_on_path(tmp_path, "claude-code", monkeypatch)
    monkeypatch.setenv("FAKE_CLI_ENV", "scratch")
    monkeypatch.setenv("ASSAY_ISOLATION", "bwrap")
    claude, _ = providers
    code, report = run(tmp_path, "boxed", "claude-code", "--keep-workspaces")
    review = next(case for case in report.cases if case.id == REVIEW_CASE)
    assert review.status == "pass", review.reason
    assert report.run.isolation is not None and report.run.isolation.mode == "bwrap"
    assert agent_calls(claude) == 4
    scratch = Path(review.workspace or "").parent / "scratch"
    (env,) = [json.loads(line) for line in (scratch / "cli-env.jsonl").read_text().splitlines()]
    assert REAL_ANTHROPIC_KEY not in json.dumps(env)
    assert env["ANTHROPIC_API_KEY"].startswith("assay-bridge-")
    assert env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")


@pytest.mark.skipif(BWRAP is None, reason=f"no working bwrap ({WHY_NOT})")
@pytest.mark.parametrize(
    ("flags", "relayed"),
    [([], True), (["--agent-network", "off"], True), (["--agent-network", "on"], False)],
    ids=["default", "network-off", "network-on"],
)
def test_a_sandboxed_cli_reaches_its_bridge_and_nothing_else(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    providers: tuple[FakeAnthropic, FakeOpenAI],
    flags: list[str],
    relayed: bool,
) -> None:
    """Issue 37: a bridged CLI in the OS sandbox has a network namespace of its own, where
    the exec shim relays 127.0.0.1:<the bridge's port> to the bridge's Unix socket: the
    CLI's calls go through, and a port another program listens on at the host's loopback
    is out of reach. `--agent-network on` by name shares the host's network (the probe
    connects: it is no probe that always fails)."""
    cli_on_path(tmp_path, "claude-code", monkeypatch)
    monkeypatch.setenv("FAKE_CLI_ENV", "scratch")
    monkeypatch.setenv("ASSAY_ISOLATION", "bwrap")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        monkeypatch.setenv("FAKE_CLI_PROBE", str(listener.getsockname()[1]))
        claude, _ = providers
        _, report = run(tmp_path, "boxed", "claude-code", "--keep-workspaces", *flags)
    review = next(case for case in report.cases if case.id == REVIEW_CASE)
    assert review.status == "pass", review.reason
    assert agent_calls(claude) == 4
    scratch = Path(review.workspace or "").parent / "scratch"
    (env,) = [json.loads(line) for line in (scratch / "cli-env.jsonl").read_text().splitlines()]
    assert env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
    assert env["ANTHROPIC_API_KEY"].startswith("assay-bridge-")
    probe = (scratch / "probe.txt").read_text()
    if relayed:
        assert probe.startswith("ConnectionRefusedError"), probe
    else:
        assert probe == "connected"
    # report.json says the bridged CLI had the relay alone, whatever agent_network says.
    isolation = report.run.isolation
    assert isolation is not None and isolation.agent_network is (flags[-1:] != ["off"])
    assert isolation.agent_network_relay == ("bridge" if relayed else None)
    written = json.loads((tmp_path / "boxed" / "report.json").read_text())["run"]["isolation"]
    assert written.get("agent_network_relay") == isolation.agent_network_relay


@pytest.mark.skipif(BWRAP is None, reason=f"no working bwrap ({WHY_NOT})")
def test_aider_reads_its_gemini_settings_and_reaches_the_bridge_inside_the_os_sandbox(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    providers: tuple[FakeAnthropic, FakeOpenAI],
    gemini_upstream: FakeGemini,
) -> None:
    """aider's model-settings file, in the attempt's scratch directory, is readable inside
    the OS sandbox at the path it is named by, and its `api_base` (127.0.0.1:<the bridge's
    port>) reaches the bridge through the relay."""
    cli_on_path(tmp_path, "aider", monkeypatch)
    monkeypatch.setenv("FAKE_CLI_ENV", "scratch")
    monkeypatch.setenv("ASSAY_ISOLATION", "bwrap")
    report_dir = tmp_path / "boxed"
    argv = ["run", "evals", "--runtime", "aider", "--model", "gemini/gemini-2.5-pro"]
    judge = ["--judge-model", "anthropic/claude-sonnet-4-6", "-t", REVIEW_CASE]
    where = ["--report-dir", str(report_dir), "--work-root", str(tmp_path / "work")]
    main([*argv, *judge, *where, "--keep-workspaces"])
    report = Report.model_validate_json((report_dir / "report.json").read_text())
    (review,) = report.cases
    assert review.status == "pass", review.reason
    assert agent_calls(gemini_upstream) == 2
    assert report.run.isolation is not None and report.run.isolation.agent_network_relay
    scratch = Path(review.workspace or "").parent / "scratch"
    (env,) = [json.loads(line) for line in (scratch / "cli-env.jsonl").read_text().splitlines()]
    assert REAL_GEMINI_KEY not in json.dumps(env)
    assert env["GEMINI_API_KEY"].startswith("assay-bridge-")
    (entry,) = json.loads((scratch / "aider-model-settings.yml").read_text())
    assert entry["extra_params"]["api_base"].startswith("http://127.0.0.1:")


def test_bridge_off_keeps_the_clis_direct_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, providers: tuple[FakeAnthropic, FakeOpenAI]
) -> None:
    """`--bridge off`: the CLI calls the provider itself with the real key, as before, and
    its own report is the case's usage."""
    dump = cli_on_path(tmp_path, "claude-code", monkeypatch)
    monkeypatch.setenv("FAKE_CLI_STREAM", "0")
    claude, _ = providers
    code, report = run(tmp_path, "direct", "claude-code", "--bridge", "off")
    task = next(case for case in report.cases if case.id == TASK_CASE)
    assert all(c.status == "pass" for c in task.checks if c.kind != "trace"), task.reason
    assert agent_calls(claude) == 4
    assert task.usage.input_tokens == CLI_USAGE["input"]
    assert task.usage.cost_usd == pytest.approx(CLI_USAGE["cost"])
    for env in (json.loads(line) for line in dump.read_text().splitlines()):
        assert env["ANTHROPIC_API_KEY"] == REAL_ANTHROPIC_KEY
    assert not list((tmp_path / "direct").rglob("model-calls.jsonl"))


def test_max_cost_stops_a_preset_mid_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, providers: tuple[FakeAnthropic, FakeOpenAI]
) -> None:
    """The budget is spent by the CLI's first call: the bridge refuses its second, the CLI
    fails, and the case is `skipped` with the budget's reason, as a built-in case is."""
    cli_on_path(tmp_path, "claude-code", monkeypatch)
    claude, _ = providers
    code, report = run(tmp_path, "budget", "claude-code", "--max-cost", "0.0001")
    for case in report.cases:
        assert case.status == "skipped", case.reason
        assert case.reason == "budget of $0.0001 reached"
    # What was spent before the refusal is reported (and was counted by the budget).
    spent = sum(case.usage.input_tokens for case in report.cases)
    assert spent == 40 * agent_calls(claude)
    # The first call spends the budget: the calls after it are refused (the other case's
    # first call too, unless it was already on its way; or the other case never starts,
    # when the first attempt ended before it: the executor's own budget check).
    assert 1 <= agent_calls(claude) <= 2
    files = list((tmp_path / "budget").rglob("model-calls.jsonl"))
    assert files
    for path in files:
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert lines[-1]["summary"]["stopped"] == "budget of $0.0001 reached"
        assert lines[-2]["error"] == "budget of $0.0001 reached"


def test_a_cli_logged_in_without_an_api_key_keeps_its_direct_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default the bridge runs only when assay can call the provider itself: Claude
    Code on a subscription (CLAUDE_CODE_OAUTH_TOKEN, no API key) keeps its own login."""
    from tests.fakes.agent_clis import install_fake_cli

    install_fake_cli(tmp_path / "bin", "claude-code")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{Path(sys.executable).parent}:/usr/bin:/bin")
    log = tmp_path / "cli.jsonl"
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-subscription-0123456789")
    report = tmp_path / "oauth"
    main(["run", "evals", "--runtime", "claude-code", "-t", TASK_CASE, "--report-dir", str(report)])
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert call["keys"] == ["CLAUDE_CODE_OAUTH_TOKEN"]
    assert not list(report.rglob("model-calls.jsonl"))


@pytest.mark.parametrize(
    ("case_id", "tool", "says"),
    [
        (TASK_CASE, "solve", "agent exited with code 1"),
        (REVIEW_CASE, "read_file", "claude-code exited with code 1"),
    ],
)
def test_a_cli_that_fails_after_a_call_through_the_bridge_still_counts_it(
    case_id: str,
    tool: str,
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    providers: tuple[FakeAnthropic, FakeOpenAI],
) -> None:
    """The provider refuses the second call (a 400 is not retried): the bridge answers the
    CLI with the error, the CLI fails, and the case is an `error` whose usage is the call
    that was made (paid for all the same, and counted by --max-cost). A review case's
    error carries it too (AgentError.usage)."""
    from tests.fakes.anthropic_api import anthropic_error, tool_use_reply

    cli_on_path(tmp_path, "claude-code", monkeypatch)
    claude, _ = providers
    claude.reply(
        tool_use_reply(tool, {"path": "README.md"} if tool == "read_file" else {}),
        anthropic_error(400, "invalid_request_error", "too long"),
    )
    report = tmp_path / "failed"
    main(["run", "evals", "--runtime", "claude-code", "-t", case_id, "--report-dir", str(report)])
    (case,) = Report.model_validate_json((report / "report.json").read_text()).cases
    assert case.status == "error" and says in (case.reason or ""), case.reason
    lines = _model_calls(report, case_id)
    assert "too long" in lines[1]["error"]  # the provider's words, as the CLI got them
    assert (case.usage.input_tokens, case.usage.output_tokens) == (40, 20)
    assert case.usage.cost_usd == pytest.approx(
        cost_usd("claude-sonnet-4-6", Usage(input_tokens=40, output_tokens=20))
    )


def test_aiders_settings_file_replaces_a_link_left_in_scratch(tmp_path: Path) -> None:
    """The scratch directory is the agent's HOME: a link an agent left at the settings
    file's name is replaced by the file, and what it pointed at is not written."""
    from typing import cast

    from assay.agents.presets.aider import MODEL_SETTINGS_FILE, Aider
    from assay.agents.presets.base import _bridge_files
    from assay.bridge.attempt import Bridged
    from assay.bridge.session import BridgeSession

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    outside = tmp_path / "bashrc"
    outside.write_text("the user's own\n")
    (scratch / MODEL_SETTINGS_FILE).symlink_to(outside)
    bridge = Bridged(cast(BridgeSession, None), {}, None, "http://127.0.0.1:9")
    argv = _bridge_files(Aider("aider"), bridge, "gemini", "gemini/gemini-2.5-flash", scratch)
    written = scratch / MODEL_SETTINGS_FILE
    assert argv == ["--model-settings-file", str(written)]
    assert not written.is_symlink() and outside.read_text() == "the user's own\n"
    (entry,) = json.loads(written.read_text())
    assert entry == {
        "name": "aider/extra_params",
        "extra_params": {"api_base": "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash"},
    }
    # Another API's models need no file, and get no flag.
    assert _bridge_files(Aider("aider"), bridge, "openai", "openai/gpt-5", scratch) == []
