"""JSON from agents and models nested past the recursion limit is invalid JSON, never a crash.

CPython's decoder raises RecursionError for it; every reader of outside JSON goes through
`assay._util.json_text`, and each one's own handling of invalid JSON then applies.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from assay._util import json_text
from assay.agents.presets.answer import json_answer
from assay.agents.trace import StdoutReader
from assay.core.files import artifacts_dir
from assay.errors import ConfigError
from assay.grading.findings_judge import FindingsVerdict
from assay.grading.judging import JudgeCall
from assay.models._http import response_json
from assay.models.anthropic_provider import from_message
from assay.models.base import INVALID_JSON_KEY, ModelResponse
from assay.models.openai_wire import parse_arguments
from assay.models.retry import ApiCallFailure
from assay.report.html_data import viewer_data
from assay.report.read import read_report
from tests.viewer_reports import viewer_report

DEEP = "[" * 100_000 + "]" * 100_000


def test_too_deep_a_document_is_a_value_error() -> None:
    with pytest.raises(RecursionError):
        json.loads(DEEP)  # what every `except ValueError` let through
    with pytest.raises(ValueError, match="nested too deeply"):
        json_text.loads(DEEP)
    with pytest.raises(ValueError, match="nested too deeply"):
        json_text.raw_decode(json.JSONDecoder(), f'x {{"a": {DEEP}}}', 2)
    assert json_text.loads(b'{"a": [1]}') == {"a": [1]}


def test_an_agents_deep_stdout_line_is_no_event_and_its_answer_still_counts() -> None:
    reader = StdoutReader()
    reader('{"type": "tool", "name": "read_file"}')
    reader(f'{{"type": "tool", "name": "deep", "a": {DEEP}}}')
    reader(f'{{"findings": {DEEP}}}')
    reader('{"findings": []}')
    assert reader.events == ["tool:read_file"]
    assert reader.last_findings == {"findings": []}


def test_a_presets_deep_answer_block_is_passed_over() -> None:
    text = f'```json\n{{"findings": []}}\n```\n```json\n{{"findings": {DEEP}}}\n```'
    assert json_answer(text, "findings") == {"findings": []}
    assert json_answer(f'{{"findings": {DEEP}}} then {{"findings": [1]}}', "findings") == {
        "findings": [1]
    }


def test_a_models_deep_tool_input_is_invalid_json_for_the_caller_to_retry() -> None:
    assert parse_arguments(DEEP) == {INVALID_JSON_KEY: DEEP}
    message = {
        "content": [{"type": "tool_use", "id": "t", "name": "x", "input": DEEP}],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    assert from_message(message).content[0]["input"] == {INVALID_JSON_KEY: DEEP}


def test_a_judges_deep_answer_is_a_problem_it_is_told_about() -> None:
    call = JudgeCall("record_verdict", FindingsVerdict)
    response = ModelResponse(
        content=[{"type": "tool_use", "id": "t", "name": "record_verdict", "input": DEEP}],
        stop_reason="tool_use",
    )
    verdict, problems, _ = call._read(response, call.tool)
    assert verdict is None and "not valid JSON" in problems[0] and "too deeply" in problems[0]


def test_a_deep_http_body_is_an_unreadable_answer_retried_like_a_5xx() -> None:
    body = SimpleNamespace(
        content=DEEP.encode(), status_code=200, headers={"content-type": "application/json"}
    )
    with pytest.raises(ApiCallFailure):
        response_json(SimpleNamespace(http_response=body))


def test_a_command_agents_deep_findings_file_is_an_agent_error(tmp_path: Path) -> None:
    from assay.agents.command import _answer
    from assay.errors import AgentError

    findings = tmp_path / "findings.json"
    findings.write_text(f'{{"findings": {DEEP}}}')
    with pytest.raises(AgentError, match="is not valid JSON: JSON nested too deeply"):
        _answer(findings, None, "findings")


def test_a_deep_agent_stdout_is_shown_as_text_in_report_html(tmp_path: Path) -> None:
    # An agent printing 200,000 `[` made the html renderer fail, so the run had no page.
    report = viewer_report(1, tmp_path)
    case = report.cases[0]
    folder = artifacts_dir(tmp_path, case.id, case.model, 0)
    (folder / "agent.stdout").write_text(DEEP)
    attempts = [
        a.model_copy(update={"transcript": str((folder / "agent.stdout").relative_to(tmp_path))})
        for a in case.attempts
    ]
    report.cases[0] = case.model_copy(update={"attempts": attempts})
    shown = viewer_data(report, tmp_path)["cases"][0]["attempts"][0]["transcript"]
    assert shown["text"].startswith("[[[")


def test_a_deep_report_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(f'{{"cases": {DEEP}}}')
    with pytest.raises(ConfigError, match="nested too deeply"):
        read_report(path)


LONE = (
    r'{"title": "bad \ud800 one", "\udfff": ["x\udc00", {"deep": "\ud83d"}],'
    r' "pair": "\ud83d\ude00"}'
)


def test_a_lone_surrogate_from_outside_becomes_a_replacement_character() -> None:
    # Valid JSON that no UTF-8 writer accepts once decoded: one in an agent's finding
    # stopped the run with a traceback as report.json was written.
    for text in (LONE, LONE.encode()):
        value = json_text.loads(text)
        assert value == {
            "title": "bad \ufffd one",
            "\ufffd": ["x\ufffd", {"deep": "\ufffd"}],
            "pair": "\U0001f600",
        }
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # writable
    value, end = json_text.raw_decode(json.JSONDecoder(), f"say {LONE} then", 4)
    assert value["title"] == "bad \ufffd one" and end == 4 + len(LONE)
    assert json_text.loads(r'"\\ud800"') == "\\ud800"  # a literal backslash, kept


def test_an_agents_answer_with_a_lone_surrogate_is_written_to_the_report(tmp_path: Path) -> None:
    from assay.agents.command import _answer, _validated_findings

    findings = tmp_path / "findings.json"
    findings.write_text(r'{"findings": [{"severity": "high", "title": "t \ud800"}]}')
    answer = _answer(findings, None, "findings")
    assert answer is not None
    (finding,) = _validated_findings(*answer)
    assert finding["title"] == "t \ufffd"


@pytest.mark.parametrize(
    ("string", "refused_at"),
    [
        (r"bad \ud800 one", 2),
        (r"low \udc00 alone", 2),
        (r"pair \ud83d\ude00 fine", None),
        (r"literal \\ud800 fine", None),
        (r"literal \\\ud800 escape", 2),
    ],
)
def test_a_suite_with_half_a_surrogate_pair_is_refused_where_it_is(
    tmp_path: Path, string: str, refused_at: int | None
) -> None:
    from assay.suites.document import read_document

    path = tmp_path / "suite.json"
    path.write_text('{\n  "name": "x",\n  "prompt": "' + string + '"\n}\n')
    if refused_at is None:
        read_document(path)
        return
    with pytest.raises(ConfigError, match="surrogate pair") as caught:
        read_document(path)
    assert caught.value.location is not None and caught.value.location.line == 3
