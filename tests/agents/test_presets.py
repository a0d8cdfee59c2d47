"""The agent CLI presets end to end: fake CLIs on PATH printing each tool's stream shape.

`assay run evals --runtime <preset>` on the project's own corpus: review, verify and
rubric cases are answered by the CLI's final message (a JSON block) and graded by the
judge on the fake Messages API; task cases run the CLI in the workspace, and its tool
calls become `tool:<name>` trace events. Malformed, truncated and failing streams, the
environment a preset sees, how the skill reaches it, and a missing CLI are covered too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.agents.presets.answer import json_answer
from assay.cli import main
from assay.models.pricing import cost_usd
from assay.report.model import Report, Usage
from tests.corpus.test_corpus_e2e import MODEL_KINDS, corpus_cases, expected_status
from tests.fakes.agent_clis import PROGRAMS, install_fake_cli
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.corpus_responder import corpus_responder

ROOT = Path(__file__).resolve().parents[2]
JUDGE_KEY = "sk-ant-judge-0123456789abcdef"
OTHER_KEY = "sk-openai-not-for-claude-0123456789"
PRESETS = tuple(PROGRAMS)
SUITE_MODEL = "claude-sonnet-4-6"
"""The model the corpus's Warden suites name, which a preset passes to its CLI when it runs
Anthropic's models."""
RUNS_SUITE_MODEL = {"claude-code": SUITE_MODEL, "opencode": f"anthropic/{SUITE_MODEL}"}
RUNS_SUITE_MODEL["aider"] = RUNS_SUITE_MODEL["opencode"]
"""The presets given the suite's Claude model, and its name on their command line; codex and
gemini-cli run other providers' models, so they run their own default model and say so."""
OWN_PROVIDERS = {"codex": "openai/", "gemini-cli": "gemini/"}
REVIEW_CASE = "bug-detection/null-property-access"
VERIFY_CASE = "security-review/attachment-path-traversal-keep"
# What each preset's fake reports for an attempt, read into the case's usage.
AGENT_TOKENS = (900, 80, 300)
STATED_COST = {"claude-code": 0.0123, "opencode": 0.01, "aider": 0.02}
"""The CLIs that state their cost; the others are priced from the model's list price."""
MISSING_EVENTS = {"aider": ["tool:edit_file", "tool:read_file", "verify:test"]}
"""A task's required events the preset's stream cannot carry (PVYai's `verify:test`,
and aider reports only its edits, as `tool:edit`)."""


@pytest.fixture(autouse=True)
def in_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=JUDGE_KEY, responder=corpus_responder) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", JUDGE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", OTHER_KEY)
        yield fake


def on_path(tmp_path: Path, preset: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_fake_cli(tmp_path / "bin", preset)
    monkeypatch.setenv(
        "PATH", f"{tmp_path / 'bin'}:{Path(__import__('sys').executable).parent}:/usr/bin:/bin"
    )
    log = tmp_path / "cli.jsonl"
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    return log


def run(tmp_path: Path, preset: str, *extra: str) -> tuple[int, Report | None]:
    report = tmp_path / "report"
    code = main(
        [
            "run",
            "evals",
            "--runtime",
            preset,
            "--concurrency",
            "8",
            "--report-dir",
            str(report),
            "--work-root",
            str(tmp_path / "work"),
            *extra,
        ]
    )
    path = report / "report.json"
    return code, Report.model_validate_json(path.read_text()) if path.exists() else None


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_the_corpus_runs_with_each_preset(
    preset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge: FakeAnthropic
) -> None:
    log = on_path(tmp_path, preset, monkeypatch)
    code, report = run(tmp_path, preset)
    assert report is not None
    cases = corpus_cases()
    results = {case.id: case for case in report.cases}
    assert sorted(results) == sorted(cases)
    assert {r.runtime for r in results.values()} == {preset}
    for case_id, result in results.items():
        case = cases[case_id]
        if result.kind in MODEL_KINDS:
            assert result.status == expected_status(case), (case_id, result.reason)
            continue
        # A task: the CLI solved it (tests pass, the right files changed), and its tool
        # calls are trace events; only what its stream cannot say is missing.
        (trace,) = [c for c in result.checks if c.kind == "trace"]
        assert trace.model_dump()["missingEvents"] == MISSING_EVENTS.get(preset, ["verify:test"])
        assert all(c.status == "pass" for c in result.checks if c.kind != "trace"), case_id
    assert report.summary.errors == 0 and code in (0, 1)
    if preset in RUNS_SUITE_MODEL:
        assert report.run.notes == []
    else:  # said once for the run, not once per case
        assert report.run.notes == [
            f"{preset} runs {OWN_PROVIDERS[preset]} models, not anthropic/{SUITE_MODEL}: its "
            f"cases ran with {preset}'s own default model (choose one with --model, and the "
            "judge with --judge-model)"
        ]
        assert "--model" not in calls(log)[0]["argv"]

    verify = results[VERIFY_CASE]
    tokens_in, tokens_out, cached = AGENT_TOKENS
    usage = verify.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == AGENT_TOKENS
    priced = cost_usd(
        SUITE_MODEL,
        Usage(input_tokens=tokens_in, output_tokens=tokens_out, cache_read_tokens=cached),
    )
    # The CLI's own default model has no price assay knows: no cost rather than a guess.
    expected = STATED_COST.get(preset, priced if preset in RUNS_SUITE_MODEL else None)
    assert usage.cost_usd == (None if expected is None else pytest.approx(expected))
    (finding,) = results[REVIEW_CASE].findings
    assert finding["severity"] == "high" and finding["location"]["startLine"] == 1
    assert len(calls(log)) == len(cases)


@pytest.mark.parametrize("preset", PRESETS)
def test_each_preset_sees_only_its_own_model_key_and_gets_the_skill(
    preset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge: FakeAnthropic
) -> None:
    log = on_path(tmp_path, preset, monkeypatch)
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-gemini-not-for-everyone-0123")
    code, report = run(tmp_path, preset, "-t", REVIEW_CASE)
    assert report is not None and report.cases[0].status == "pass", report.cases[0].reason
    (call,) = calls(log)
    own = {
        "claude-code": ["ANTHROPIC_API_KEY"],
        "codex": ["OPENAI_API_KEY"],
        "gemini-cli": ["GEMINI_API_KEY"],
        # opencode and aider take the key of the model's provider (the suite's: Anthropic).
        "opencode": ["ANTHROPIC_API_KEY"],
        "aider": ["ANTHROPIC_API_KEY"],
    }[preset]
    assert call["keys"] == own
    argv = call["argv"]
    skill_marker = "Bug Detection"  # from evals/skills/bug-detection/SKILL.md
    if preset == "claude-code":
        assert argv[:2] == ["-p", argv[1]] and "--append-system-prompt" in argv
        assert skill_marker.lower() in argv[argv.index("--append-system-prompt") + 1].lower()
    else:
        expected = {
            "codex": "AGENTS.md",
            "gemini-cli": "GEMINI.md",
            "opencode": "AGENTS.md",
            "aider": ".assay-conventions.md",
        }
        assert expected[preset] in call["files"]
    if preset in RUNS_SUITE_MODEL:
        assert argv[argv.index("--model") + 1] == RUNS_SUITE_MODEL[preset]
    else:
        assert "--model" not in argv
    workspace = Path(report.cases[0].workspace or tmp_path / "gone")
    assert not (workspace / "AGENTS.md").exists() and not (workspace / "GEMINI.md").exists()


@pytest.mark.parametrize(
    ("preset", "model", "argument", "keys"),
    [
        ("claude-code", "anthropic/claude-haiku-4-5", "claude-haiku-4-5", ["ANTHROPIC_API_KEY"]),
        ("codex", "openai/gpt-5", "gpt-5", ["OPENAI_API_KEY"]),
        ("gemini-cli", "gemini-2.5-flash", "gemini-2.5-flash", ["GEMINI_API_KEY"]),
        ("opencode", "gemini/gemini-2.5-pro", "google/gemini-2.5-pro", ["GEMINI_API_KEY"]),
        (
            "opencode",
            "bedrock/us.anthropic.claude-haiku-4-5-v1:0",
            "amazon-bedrock/us.anthropic.claude-haiku-4-5-v1:0",
            ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"],
        ),
        (
            "aider",
            "vertex/claude-sonnet-4-5@20250929",
            "vertex_ai/claude-sonnet-4-5@20250929",
            ["GOOGLE_OAUTH_ACCESS_TOKEN"],
        ),
        ("aider", "openrouter/openai/gpt-5", "openrouter/openai/gpt-5", ["OPENROUTER_API_KEY"]),
    ],
)
@pytest.mark.slow
def test_the_model_given_on_the_command_line_reaches_the_cli_in_its_own_names(
    preset: str,
    model: str,
    argument: str,
    keys: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    judge: FakeAnthropic,
) -> None:
    """`--model` is the agent's model: each CLI gets it as it names models, sees that
    provider's key (opencode and aider, which run any provider's) and is priced by it."""
    log = on_path(tmp_path, preset, monkeypatch)
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-gemini-0123456789")
    monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.vertex-token-0123456789")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-openrouter-0123456789")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, f"aws-{name.lower()}-0123456789")
    # opencode's `gemini/` models go through the bridge by default (tests/bridge): here, the
    # key it sees when it calls Google itself.
    direct = ["--bridge", "off"] if model.startswith("gemini/") else []
    code, report = run(tmp_path, preset, "-t", VERIFY_CASE, "--model", model, *direct)
    assert report is not None
    (result,) = report.cases
    assert result.status == "pass" and result.model == model, result.reason
    (call,) = calls(log)
    assert call["argv"][call["argv"].index("--model") + 1] == argument
    assert call["keys"] == keys
    assert report.run.notes == []
    if preset not in STATED_COST:
        from assay.models.names import parse_model, provider_of

        tokens_in, tokens_out, cached = AGENT_TOKENS
        usage = Usage(input_tokens=tokens_in, output_tokens=tokens_out, cache_read_tokens=cached)
        priced = provider_of(model).price(parse_model(model).name, usage)
        assert priced is not None and result.usage.cost_usd == pytest.approx(priced)


def test_a_preset_given_another_providers_model_runs_its_own_default_and_says_so_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    judge: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A matrix of one model codex runs and one it does not: the second runs codex's own
    default model (no --model, no cost), and the run says so once, in every rendering."""
    log = on_path(tmp_path, "codex", monkeypatch)
    cases = ["-t", VERIFY_CASE, "-t", "security-review/invoice-pdf-cross-tenant-access-keep"]
    code, report = run(tmp_path, "codex", *cases, "--model", "openai/gpt-5,claude-haiku-4-5")
    assert report is not None and len(report.cases) == 4
    note = (
        "codex runs openai/ models, not claude-haiku-4-5: its cases ran with codex's own "
        "default model (choose one with --model, and the judge with --judge-model)"
    )
    assert report.run.notes == [note]
    by_model = {
        m: [c for c in report.cases if c.model == m] for m in ("openai/gpt-5", "claude-haiku-4-5")
    }
    assert all(c.usage.cost_usd is not None for c in by_model["openai/gpt-5"])
    assert all(c.usage.cost_usd is None for c in by_model["claude-haiku-4-5"])
    given = [
        c["argv"][c["argv"].index("--model") + 1] if "--model" in c["argv"] else ""
        for c in calls(log)
    ]
    assert sorted(given) == ["", "", "gpt-5", "gpt-5"]
    out = capsys.readouterr().out
    assert out.count(note) == 1
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert summary.count("codex runs openai/ models") == 1


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize(
    ("mode", "status", "says"),
    [
        ("noisy", "pass", None),
        ("truncated", "error", "printed no final message"),
        ("failed", "error", "exited with code 1"),
        ("prose", "error", "holds no JSON block"),
    ],
)
@pytest.mark.slow
def test_malformed_truncated_and_failing_streams(
    preset: str,
    mode: str,
    status: str,
    says: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    judge: FakeAnthropic,
) -> None:
    on_path(tmp_path, preset, monkeypatch)
    monkeypatch.setenv("FAKE_CLI_MODE", mode)
    if preset == "aider" and mode == "truncated":
        status, says = "error", "printed no final message"
    code, report = run(tmp_path, preset, "-t", VERIFY_CASE)
    assert report is not None
    (result,) = report.cases
    assert result.status == status, result.reason
    if says is not None:
        assert says in (result.reason or ""), result.reason
        assert preset in (result.reason or "")


@pytest.mark.parametrize("preset", PRESETS)
def test_a_missing_cli_is_exit_2_before_any_sandbox(
    preset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, report = run(tmp_path, preset, "-t", VERIFY_CASE)
    err = capsys.readouterr().err
    assert code == 2 and report is None
    assert f"runtime {preset} runs {PROGRAMS[preset]!r}, which is not on PATH" in err
    assert not (tmp_path / "work").exists() or not any((tmp_path / "work").rglob("*"))


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ('Done.\n```json\n{"verdict": "keep"}\n```', {"verdict": "keep"}),
        (
            '```json\n{"verdict": "reject"}\n```\nthen\n```json\n{"verdict": "keep"}\n```',
            {"verdict": "keep"},
        ),
        (
            'I say {"verdict": "reject", "reason": "x"} and that is all.',
            {"verdict": "reject", "reason": "x"},
        ),
        ('```json\n{"verdict": "keep",\n```\n{"verdict": "reject"}', {"verdict": "reject"}),
        ('```json\n{"other": 1}\n```', None),
        ("no JSON at all {", None),
    ],
)
def test_the_answer_is_the_last_json_block_with_the_key(text: str, answer: Any) -> None:
    assert json_answer(text, "verdict") == answer


def test_the_model_mapping_and_a_preset_that_declares_no_providers() -> None:
    from assay.agents.presets.base import Invocation, Preset, Stream
    from assay.agents.presets.codex import Codex
    from assay.agents.presets.opencode import Opencode

    class Undeclared(Preset):  # a plugin's preset written before `providers` existed
        name = "undeclared"

        def argv(self, run: Invocation) -> list[str]:
            return [self.program]

        def stream(self) -> Stream:
            raise NotImplementedError

    assert Undeclared.cli_model("gemini/gemini-2.5-pro") == "gemini-2.5-pro"
    assert Undeclared.cannot_run("anything/at-all") is None
    assert Codex.cli_model("gpt-5") == "gpt-5"  # a bare name the registry gives to openai
    assert Codex.cli_model("claude-sonnet-4-6") is None
    assert Opencode.cli_model("claude-sonnet-4-6") == "anthropic/claude-sonnet-4-6"
    assert Opencode.cli_model("vertex/claude-sonnet-4-5@20250929") == (
        "google-vertex-anthropic/claude-sonnet-4-5@20250929"
    )
    assert Opencode.cannot_run("openai/gpt-5") is None


def test_the_instructions_file_is_put_back_through_no_link(tmp_path: Path) -> None:
    """An agent that leaves AGENTS.md as a link to a file of the host's does not get assay,
    which puts the repository's AGENTS.md back after it as its own user, to write there."""
    from assay.agents.presets.base import _instructions

    workspace, outside = tmp_path / "workspace", tmp_path / "bashrc"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("the repository's own rules\n")
    outside.write_text("untouched\n")
    with _instructions(workspace, "AGENTS.md", "# the skill"):
        assert (workspace / "AGENTS.md").read_text().startswith("# the skill\n\nthe repository")
        (workspace / "AGENTS.md").unlink()
        (workspace / "AGENTS.md").symlink_to(outside)  # what the agent does
    assert outside.read_text() == "untouched\n"
    assert not (workspace / "AGENTS.md").is_symlink()
    assert (workspace / "AGENTS.md").read_text() == "the repository's own rules\n"


def test_a_linked_instructions_file_stays_a_link_and_is_never_written_through(
    tmp_path: Path,
) -> None:
    from assay.agents.presets.base import _instructions

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "CLAUDE.md").write_text("rules\n")
    (workspace / "AGENTS.md").symlink_to("CLAUDE.md")  # a common layout
    with _instructions(workspace, "AGENTS.md", "# the skill"):
        assert (workspace / "AGENTS.md").read_text() == "# the skill"
        assert (workspace / "CLAUDE.md").read_text() == "rules\n"
    assert os.readlink(workspace / "AGENTS.md") == "CLAUDE.md"
    assert (workspace / "CLAUDE.md").read_text() == "rules\n"


def test_a_workspace_replaced_by_a_link_is_not_written_into(tmp_path: Path) -> None:
    from assay.agents.presets.base import _instructions

    workspace, elsewhere = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    elsewhere.mkdir()
    (workspace / "AGENTS.md").write_text("rules\n")
    with _instructions(workspace, "AGENTS.md", "# the skill"):
        workspace.rename(tmp_path / "moved")
        workspace.symlink_to(elsewhere)
    assert list(elsewhere.iterdir()) == []
