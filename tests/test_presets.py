"""The agent CLI presets end to end: fake CLIs on PATH printing each tool's stream shape.

`assay run evals --runtime <preset>` on the project's own corpus: review, verify and
rubric cases are answered by the CLI's final message (a JSON block) and graded by the
judge on the fake Messages API; task cases run the CLI in the workspace, and its tool
calls become `tool:<name>` trace events. Malformed, truncated and failing streams, the
environment a preset sees, how the skill reaches it, and a missing CLI are covered too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.agents.presets.answer import json_answer
from assay.cli import main
from assay.models.pricing import cost_usd
from assay.report.model import Report, Usage
from tests.fakes.agent_clis import PROGRAMS, install_fake_cli
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.corpus_responder import corpus_responder
from tests.test_corpus_e2e import MODEL_KINDS, corpus_cases, expected_status

ROOT = Path(__file__).resolve().parents[1]
JUDGE_KEY = "sk-ant-judge-0123456789abcdef"
OTHER_KEY = "sk-openai-not-for-claude-0123456789"
PRESETS = tuple(PROGRAMS)
SUITE_MODEL = "claude-sonnet-4-6"
"""The model the corpus's Warden suites name, which a preset passes to its CLI."""
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

    verify = results[VERIFY_CASE]
    tokens_in, tokens_out, cached = AGENT_TOKENS
    usage = verify.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == AGENT_TOKENS
    priced = cost_usd(
        SUITE_MODEL,
        Usage(input_tokens=tokens_in, output_tokens=tokens_out, cache_read_tokens=cached),
    )
    assert usage.cost_usd == pytest.approx(STATED_COST.get(preset, priced))
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
        assert argv[argv.index("--model") + 1] == SUITE_MODEL
    else:
        expected = {
            "codex": "AGENTS.md",
            "gemini-cli": "GEMINI.md",
            "opencode": "AGENTS.md",
            "aider": ".assay-conventions.md",
        }
        assert expected[preset] in call["files"]
    workspace = Path(report.cases[0].workspace or tmp_path / "gone")
    assert not (workspace / "AGENTS.md").exists() and not (workspace / "GEMINI.md").exists()


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
