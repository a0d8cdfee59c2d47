"""The run as an inspect eval log (`assay run --inspect-log`, `assay export --inspect`).

The project's corpus (`evals/`) runs twice per case (epochs = attempts) through the real
CLI against the loopback fake Messages API, as tests/corpus/test_corpus_e2e.py runs it; the log
it writes is read back by inspect_ai's own reader and compared with report.json: one
sample per case and attempt, the C/I and numeric scores with the attempt's reason, the
token usage per sample and in total, the builtin agent's conversation. inspect_ai is an
optional extra (`pip install -e '.[inspect]'`); without it, the log is still checked
against the facts of inspect's schema that assay writes (tests/data/inspect-log.schema.json).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from assay.cli import main
from assay.core.files import artifacts_dir
from assay.report.inspect_messages import conversation_of
from assay.report.model import Report
from assay.suites.case import TaskSpec
from tests.corpus.test_corpus_e2e import (
    API_KEY,
    ASSAY,
    ROOT,
    corpus_cases,
    offline_environ,
    run_args,
)
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.corpus_responder import corpus_responder

pytestmark = pytest.mark.slow  # real processes and servers per test: seconds each

SCHEMA = ROOT / "tests" / "data" / "inspect-log.schema.json"
INSTALL = "pip install -e '.[inspect]'"


@dataclass(frozen=True)
class Run:
    report: Report
    report_dir: Path

    @property
    def log_file(self) -> Path:
        return self.report_dir / "inspect-log.json"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    base = tmp_path_factory.mktemp("inspect")
    with FakeAnthropic(api_key=API_KEY, responder=corpus_responder) as fake:
        env = {**offline_environ(), "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.url}
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the task fixtures' own pytest runs
        done = subprocess.run(
            [*ASSAY, *run_args(base, "--repeat", "2", "--inspect-log")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report_dir = base / "report"
    report = Report.model_validate_json((report_dir / "report.json").read_text())
    yield Run(report, report_dir)


def read_eval_log() -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        pytest.skip(f"inspect_ai is not installed: {INSTALL}")
    return read_eval_log


def test_inspect_reads_the_run_with_the_reports_samples_scores_and_usage(run: Run) -> None:
    log = read_eval_log()(str(run.log_file))
    report = run.report
    assert log.status == "success"
    assert log.eval.run_id == report.run.id
    assert log.eval.config.epochs == report.run.repeat == 2
    assert log.eval.dataset.samples == len(report.cases)

    attempts = {(c.id, i + 1): (c, a) for c in report.cases for i, a in enumerate(c.attempts)}
    assert len(attempts) == 2 * len(report.cases)
    assert log.samples is not None
    assert {(s.id, s.epoch) for s in log.samples} == set(attempts)
    assert log.results.total_samples == len(log.samples) == len(attempts)

    corpus = corpus_cases()
    kinds = set()
    for sample in log.samples:
        case, attempt = attempts[(sample.id, sample.epoch)]
        kinds.add(case.kind)
        assert sample.metadata["status"] == attempt.status
        assert attempt.status in ("pass", "fail")  # the fake run has no error or skip
        assert sample.scores is not None
        status = sample.scores["status"]
        assert status.value == ("C" if attempt.status == "pass" else "I")
        assert status.explanation == (attempt.reason or None)
        assert sample.scores["score"].value == attempt.score
        spent = attempt.usage.input_tokens + attempt.usage.output_tokens
        if spent:
            (usage,) = sample.model_usage.values()
            assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (
                attempt.usage.input_tokens,
                attempt.usage.output_tokens,
                spent,
            )
            assert usage.total_cost == pytest.approx(attempt.usage.cost_usd)
        else:
            assert sample.model_usage == {}
        roles = [m.role for m in sample.messages]
        if case.runtime == "builtin":
            # The builtin agent's whole conversation: its tools called and answered.
            assert roles[:2] == ["system", "user"] and "tool" in roles, roles
            assistant = [m for m in sample.messages if m.role == "assistant"]
            calls = [call for m in assistant for call in m.tool_calls or []]
            assert calls and calls[-1].function.startswith("submit_")
            assert sample.output.completion  # the submitted answer
        else:
            # A command agent: its transcript (agent-transcript.json) as a conversation: what
            # it was asked (kept with its artifacts too), then its steps as assistant turns.
            assert roles[0] == "user" and len(roles) > 1, roles
            assert set(roles[1:]) <= {"assistant", "tool"} and roles[-1] == "assistant", roles
            folder = artifacts_dir(run.report_dir, case.id, case.model, sample.epoch - 1)
            asked = (folder / "prompt.txt").read_text()
            assert sample.messages[0].text == sample.input[0].text == asked
            spec = corpus[case.id].spec
            assert isinstance(spec, TaskSpec)  # the corpus's command agent runs its tasks
            assert spec.prompt in asked
            assert attempt.transcript is not None
            assert attempt.transcript.endswith("/agent-transcript.json")
    assert kinds == {"review", "verify", "rubric", "task"}

    # The run's totals: tokens as report.json sums them, and the score of its gate.
    (total,) = log.stats.model_usage.values()
    assert (total.input_tokens, total.output_tokens) == (
        report.summary.tokens.input,
        report.summary.tokens.output,
    )
    assert total.total_cost == pytest.approx(report.summary.cost_usd)
    scores = {score.name: score for score in log.results.scores}
    assert scores["score"].metrics["mean"].value == pytest.approx(report.summary.score)
    passed = [sum(a.status == "pass" for a in c.attempts) / len(c.attempts) for c in report.cases]
    assert scores["status"].metrics["accuracy"].value == pytest.approx(sum(passed) / len(passed))


def test_export_writes_the_same_log_where_inspect_view_lists_it(run: Run, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    assert main(["export", "--inspect", str(run.report_dir), "-o", f"{logs}/"]) == 0
    (written,) = logs.iterdir()
    assert written.read_bytes() == run.log_file.read_bytes()
    assert written.name.startswith(run.report.run.started_at[:10])
    read_eval_log()  # skips without inspect_ai
    from inspect_ai.log import list_eval_logs

    # `inspect view --log-dir logs` lists what list_eval_logs lists.
    assert [Path(info.name).name for info in list_eval_logs(str(logs))] == [written.name]
    assert list_eval_logs(str(run.report_dir)) == []  # inspect-log.json: not inspect's name


def test_the_log_holds_what_inspects_schema_requires(run: Run) -> None:
    """Without inspect_ai: the log against the facts of inspect's schema that assay writes."""
    document = json.loads(run.log_file.read_text())
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(document, schema, format_checker=jsonschema.FormatChecker())
    assert len(document["samples"]) == sum(len(c.attempts) for c in run.report.cases)


def test_the_vendored_schema_requires_no_less_than_inspects_own() -> None:
    """Each object the vendored schema describes requires every key inspect's does."""
    try:
        from inspect_ai.log import EvalLog
    except ImportError:
        pytest.skip(f"inspect_ai is not installed: {INSTALL}")
    real = EvalLog.model_json_schema(mode="serialization")["$defs"]
    ours = json.loads(SCHEMA.read_text())["$defs"]
    for name in ("EvalSpec", "EvalPlan", "EvalResults", "EvalScore", "EvalStats", "EvalSample"):
        assert set(real[name].get("required", [])) <= set(ours[name]["required"]), name


def test_export_of_a_directory_without_a_report_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "--inspect", str(tmp_path)]) == 2
    assert f"{tmp_path}: no report.json here" in capsys.readouterr().err


def test_a_transcripts_blocks_become_inspects_messages() -> None:
    transcript = {
        "system": "be careful",
        "messages": [
            {"role": "user", "content": "review this"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "look at a.py"},
                    {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "no a",
                        "is_error": True,
                    },
                    {"type": "text", "text": "submit now"},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        ],
        "turns": [{"stop_reason": "tool_use"}, {"stop_reason": "end_turn"}],
        "result": None,
    }
    conversation = conversation_of(transcript, model="m")
    assert [m["role"] for m in conversation.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert conversation.input == conversation.messages[:2]
    thinking = conversation.messages[2]
    assert thinking["content"] == [
        {"type": "reasoning", "reasoning": "look at a.py", "redacted": False}
    ]
    assert thinking["tool_calls"][0] == {
        "id": "t1",
        "function": "read_file",
        "arguments": {"path": "a"},
        "type": "function",
    }
    tool = conversation.messages[3]
    assert (tool["function"], tool["tool_call_id"], tool["error"]["message"]) == (
        "read_file",
        "t1",
        "no a",
    )
    assert (conversation.completion, conversation.stop_reason) == ("done", "stop")


def _case(case_id: str, model: str, attempts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "id": case_id,
        "suite": "s",
        "kind": "review",
        "source": {"path": "evals/s.yaml", "line": 3},
        "model": model,
        "runtime": "command",
        "attempts": attempts,
        **extra,
    }


def matrix_report() -> dict[str, Any]:
    """A run of one case on two models, with an error, and a case skipped before it ran."""
    usage = {"input_tokens": 7, "output_tokens": 3, "cost_usd": None}
    return {
        "run": {
            "id": "abc123",
            "started_at": "2026-01-02T03:04:05Z",
            "assay_version": "0.1.0",
            "threshold": 0.5,
            "models": ["openai/a", "openai/b"],
            "repeat": 2,
            "interrupted": True,
        },
        "summary": {
            "total": 3,
            "passed": 1,
            "failed": 0,
            "errors": 1,
            "skipped": 1,
            "score": 1.0,
            "gate": "pass",
        },
        "cases": [
            _case(
                "s/one",
                "openai/a",
                [
                    {"status": "pass", "score": 1.0, "usage": usage},
                    {"status": "pass", "score": 1.0, "usage": usage},
                ],
                status="pass",
                score=1.0,
            ),
            _case(
                "s/one",
                "openai/b",
                [
                    {"status": "error", "reason": "agent exited with code 3", "usage": usage},
                    {"status": "error", "reason": "agent exited with code 3"},
                ],
                status="error",
                reason="agent exited with code 3",
                error_source="agent",
            ),
            _case("s/two", "openai/a", [], status="skipped", reason="no OPENAI_API_KEY"),
        ],
    }


@pytest.fixture
def matrix_log(tmp_path: Path) -> Path:
    (tmp_path / "report.json").write_text(json.dumps(matrix_report()))
    assert main(["export", "--inspect", str(tmp_path)]) == 0
    return tmp_path / "inspect-log.json"


def test_a_matrix_with_errors_and_skips_exports_a_sample_for_each(matrix_log: Path) -> None:
    document = json.loads(matrix_log.read_text())
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert document["status"] == "cancelled"
    assert document["eval"]["model"] == "assay/matrix"
    samples = {(s["id"], s["epoch"]): s for s in document["samples"]}
    assert list(samples) == [
        ("s/one [openai/a]", 1),
        ("s/one [openai/a]", 2),
        ("s/one [openai/b]", 1),
        ("s/one [openai/b]", 2),
        ("s/two", 1),
    ]
    errored = samples[("s/one [openai/b]", 1)]
    assert errored["error"]["message"] == "agent exited with code 3"
    assert errored["scores"] is None
    skipped = samples[("s/two", 1)]
    assert (skipped["scores"], skipped["metadata"]["reason"]) == (None, "no OPENAI_API_KEY")
    assert document["results"]["completed_samples"] == 2
    # Every attempt's usage, each under its model: three attempts spent 7 in, 3 out.
    usage = document["stats"]["model_usage"]
    assert {m: (u["input_tokens"], u["output_tokens"]) for m, u in usage.items()} == {
        "openai/a": (14, 6),
        "openai/b": (7, 3),
    }


def test_inspect_reads_errored_and_skipped_samples(matrix_log: Path) -> None:
    log = read_eval_log()(str(matrix_log))
    assert log.status == "cancelled"
    assert len(log.samples) == 5
    assert log.samples[2].error.message == "agent exited with code 3"
