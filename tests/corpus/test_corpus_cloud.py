"""`assay run evals/ --model <provider>/...` on the project's own corpus for every built-in
provider but Anthropic's (tests/corpus/test_corpus_e2e.py): Bedrock, Vertex, Gemini, OpenAI and
OpenRouter, through each provider's real SDK to its loopback fake, with the corpus responder
playing reviewer, verifier and judge: every case gets the status it gets on the Anthropic
API, and usage and cost are the provider's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main
from assay.models.registry import provider_cost
from assay.report.model import Report, Usage
from tests.corpus.test_corpus_e2e import MODEL_KINDS, SPEND, corpus_cases, expected_status, run_args
from tests.fakes.cloud import OPENAI_COMPATIBLE, SETUPS, CloudSetup
from tests.fakes.corpus_responder import corpus_responder


@pytest.fixture(autouse=True)
def in_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.mark.slow
@pytest.mark.parametrize("cloud", (*SETUPS, *OPENAI_COMPATIBLE), ids=str)
def test_the_corpus_runs_on_each_cloud_provider(
    cloud: CloudSetup,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with cloud.serving(monkeypatch, corpus_responder) as fake:
        code = main(run_args(tmp_path, "--model", cloud.model))
        calls = fake.calls
    output = capsys.readouterr()
    report = Report.model_validate_json((tmp_path / "report" / "report.json").read_text())
    cases = corpus_cases()
    results = {case.id: case for case in report.cases}
    assert {i: r.status for i, r in results.items()} == {
        i: expected_status(c) for i, c in cases.items()
    }, output.out + output.err
    model_backed = [r for r in results.values() if r.kind in MODEL_KINDS]
    assert calls == sum(SPEND[r.kind][0] for r in model_backed)
    provider, model_id = cloud.model.split("/", 1)
    for result in model_backed:
        _, tokens_in, tokens_out = SPEND[result.kind]
        assert (result.model, result.runtime) == (cloud.model, "builtin")
        assert (result.usage.input_tokens, result.usage.output_tokens) == (tokens_in, tokens_out)
        priced = provider_cost(
            provider, model_id, Usage(input_tokens=tokens_in, output_tokens=tokens_out)
        )
        assert priced and result.usage.cost_usd == pytest.approx(priced), result.id
        if result.kind != "verify":
            assert result.judge["model"] == cloud.model
    assert report.summary.errors == 0 and report.run.judge_model == cloud.model
    assert code == (0 if report.summary.gate == "pass" else 1)
    # The provider's credential appears nowhere in what the run wrote.
    for path in (tmp_path / "report").rglob("*"):
        if path.is_file():
            assert cloud.secret not in path.read_text(errors="replace"), path
    assert cloud.secret not in output.out + output.err
    assert json.loads((tmp_path / "report" / "report.json").read_text())["cases"]
