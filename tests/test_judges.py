"""The findings and rubric judges against an in-process scripted judge model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.core.severities import normalise_severity
from assay.errors import JudgeError
from assay.grading.base import Grade
from assay.grading.findings_judge import FindingsJudge
from assay.grading.rubric_judge import RubricJudge
from assay.models.base import ModelRequest, ModelResponse
from assay.options import RunOptions
from assay.subject import AgentOutput, AttemptContext
from assay.suites.case import Case, Expectation, ReviewSpec, RubricSpec
from assay.workspace.built_sandbox import Sandbox
from tests.fakes.scripted_provider import reply, scripted_provider, sequence, text, tool_call

JUDGE = "fake/judge"


def finding(severity: str, title: str) -> dict[str, Any]:
    return {
        "severity": severity,
        "confidence": "high",
        "title": title,
        "description": f"{title}, explained",
        "location": {"path": "app/handler.ts", "startLine": 3},
    }


NULL_ACCESS = finding("high", "user may be undefined")
NAMING = finding("low", "rename variable u")


def review_case(*expectations: Expectation, avoid: tuple[str, ...] = ("style issues",)) -> Case:
    spec = ReviewSpec(
        given="code that reads .name on an Array.find() result",
        files=(),
        should_find=expectations or (Expectation("null access on user.name", severity="high"),),
        should_not_find=avoid,
    )
    return _case("review", spec)


def rubric_case() -> Case:
    spec = RubricSpec(rubric="Must flag the hardcoded key.", diff=Path("input.diff"), base=None)
    return _case("rubric", spec)


def _case(kind: str, spec: Any) -> Case:
    return Case(
        id=f"suite/{kind}",
        suite="suite",
        name=kind,
        kind=kind,  # type: ignore[arg-type]
        format="review-json",
        source_path=Path("suite/case.json"),
        source_line=1,
        spec=spec,
    )


def context(case: Case, tmp_path: Path) -> AttemptContext:
    sandbox = Sandbox(
        path=tmp_path,
        kind=case.kind,
        base_commit="0" * 40,
        head_commit="1" * 40,
        diff='+const APIKey = "hardcoded"\n',
        changed_files=("config.go",),
        repository=None,
    )
    return AttemptContext(
        case=case,
        sandbox=sandbox,
        model="fake/subject",
        judge_model=JUDGE,
        timeout_s=60,
        attempt=0,
        artifacts_dir=tmp_path,
    )


def verdict(
    found: list[tuple[bool, int | None]], avoided: list[tuple[bool, int | None]]
) -> dict[str, Any]:
    return {
        "should_find": [
            {"index": i, "met": met, "matchedFindingIndex": at, "reasoning": f"sf{i}"}
            for i, (met, at) in enumerate(found)
        ],
        "should_not_find": [
            {"index": i, "violated": bad, "violatingFindingIndex": at, "reasoning": f"snf{i}"}
            for i, (bad, at) in enumerate(avoided)
        ],
    }


def judged(verdicts: dict[str, Any]) -> ModelResponse:
    return reply(tool_call("record_verdict", verdicts))


def grade_review(
    case: Case, findings: list[dict[str, Any]], tmp_path: Path, *responses: ModelResponse
) -> tuple[Grade, list[ModelRequest]]:
    with scripted_provider(sequence(*responses)) as fake:
        grade = asyncio.run(
            FindingsJudge(options=RunOptions()).grade(
                context(case, tmp_path), AgentOutput(findings=findings)
            )
        )
    return grade, fake.requests


def statuses(grade: Grade) -> dict[str, str]:
    return {check.id: check.status for check in grade.checks}


# -- findings judge ------------------------------------------------------------------------------


def test_all_assertions_hold(tmp_path: Path) -> None:
    grade, requests = grade_review(
        review_case(), [NULL_ACCESS], tmp_path, judged(verdict([(True, 0)], [(False, None)]))
    )
    assert (grade.status, grade.score, grade.reason) == ("pass", 1.0, "")
    assert statuses(grade) == {
        "should_find[0]": "pass",
        "should_find[0].severity": "pass",
        "should_not_find[0]": "pass",
    }
    assert grade.checks[0].message == "sf0"
    assert grade.judge["model"] == JUDGE and grade.judge["prompt_version"] == "findings-judge.v3"
    assert grade.judge["verdict"]["should_find"][0]["matchedFindingIndex"] == 0
    assert grade.usage.input_tokens == 100
    (request,) = requests
    assert (request.purpose, request.model, request.tool_choice) == (
        "judge",
        "judge",
        "record_verdict",
    )
    prompt = request.messages[0].content[0]["text"]
    assert "[0] null access on user.name" in prompt and "[0] style issues" in prompt
    assert '"title": "user may be undefined"' in prompt


def test_the_judge_sees_required_severities_and_each_findings_severity(tmp_path: Path) -> None:
    # Warden's judge prompt marks each should_find required or optional, with the severity
    # its finding must have, and shows each finding's severity and confidence: of two
    # findings reporting the problem, the judge can name the one with the right severity.
    case = review_case(
        Expectation("null access on user.name", severity="high"),
        Expectation("a missing test", required=False),
    )
    critical = {**NULL_ACCESS, "severity": "critical", "confidence": 0.9}
    findings = [{**NULL_ACCESS, "severity": "low"}, critical]
    grade, (request,) = grade_review(
        case, findings, tmp_path, judged(verdict([(True, 1), (False, None)], [(False, None)]))
    )
    prompt = request.messages[0].content[0]["text"]
    assert "[0] null access on user.name [required severity: high] (required)" in prompt
    assert "[1] a missing test (optional)" in prompt
    shown = json.loads(prompt.split("```json\n", 1)[1].split("\n```", 1)[0])
    # Severities on Warden's scale, as the check in code compares them.
    assert [(f["severity"], f["confidence"]) for f in shown] == [("low", "high"), ("high", 0.9)]
    assert "Do not consider severity" not in request.system
    assert "exactly that severity" in request.system
    # The check itself stays in code, against the finding the judge named.
    assert statuses(grade)["should_find[0].severity"] == "pass"
    assert grade.status == "pass"


def test_unmet_required_should_find_fails(tmp_path: Path) -> None:
    grade, _ = grade_review(
        review_case(), [NAMING], tmp_path, judged(verdict([(False, None)], [(False, None)]))
    )
    assert (grade.status, grade.score) == ("fail", 0.0)
    assert statuses(grade)["should_find[0]"] == "fail"
    assert statuses(grade)["should_find[0].severity"] == "skipped"
    assert grade.reason == "should_find[0]: sf0"


def test_severity_mismatch_fails_even_when_matched(tmp_path: Path) -> None:
    medium = {**NULL_ACCESS, "severity": "Medium"}
    grade, _ = grade_review(
        review_case(), [NAMING, medium], tmp_path, judged(verdict([(True, 1)], [(False, None)]))
    )
    assert grade.status == "fail"
    assert statuses(grade) == {
        "should_find[0]": "pass",
        "should_find[0].severity": "fail",
        "should_not_find[0]": "pass",
    }
    assert "expected severity high, finding 1 has 'Medium'" in grade.reason
    severity_check = grade.checks[1]
    assert severity_check.kind == "severity"


def test_should_not_find_violation_fails(tmp_path: Path) -> None:
    grade, _ = grade_review(
        review_case(), [NULL_ACCESS, NAMING], tmp_path, judged(verdict([(True, 0)], [(True, 1)]))
    )
    assert grade.status == "fail"
    assert statuses(grade)["should_not_find[0]"] == "fail"
    assert grade.checks[-1].model_dump()["violatingFindingIndex"] == 1


def test_optional_should_find_unmet_still_passes(tmp_path: Path) -> None:
    case = review_case(
        Expectation("null access on user.name"),
        Expectation("mentions the missing test", severity="low", required=False),
    )
    grade, _ = grade_review(
        case, [NULL_ACCESS], tmp_path, judged(verdict([(True, 0), (False, None)], [(False, None)]))
    )
    assert (grade.status, grade.score) == ("pass", 1.0)
    assert statuses(grade)["should_find[1]"] == "fail"
    assert grade.checks[1].model_dump()["required"] is False


def test_empty_findings_leave_should_find_unmet(tmp_path: Path) -> None:
    grade, requests = grade_review(
        review_case(), [], tmp_path, judged(verdict([(False, None)], [(False, None)]))
    )
    assert grade.status == "fail"
    assert "The reviewer's findings (0)" in requests[0].messages[0].content[0]["text"]


def test_met_with_no_matched_index_passes_without_a_required_severity(tmp_path: Path) -> None:
    # Warden's evalPassed: `met: true` with a null matchedFindingIndex is a pass, first time.
    case = review_case(Expectation("null access on user.name"))
    grade, requests = grade_review(
        case, [NULL_ACCESS], tmp_path, judged(verdict([(True, None)], [(False, None)]))
    )
    assert (grade.status, grade.judge["attempts"], len(requests)) == ("pass", 1, 1)


def test_met_with_no_matched_index_fails_a_required_severity(tmp_path: Path) -> None:
    case = review_case(Expectation("null access on user.name", severity="high"))
    grade, _ = grade_review(
        case, [NULL_ACCESS], tmp_path, judged(verdict([(True, None)], [(False, None)]))
    )
    assert grade.status == "fail"
    assert statuses(grade)["should_find[0].severity"] == "fail"
    assert "could not be checked: no matched finding" in grade.reason


def test_a_negative_case_with_no_findings_is_judgeable(tmp_path: Path) -> None:
    # Warden's "no findings expected" cases: an optional should_find met by silence.
    case = review_case(
        Expectation("no bugs: zero findings are expected", required=False),
        avoid=("inconsistent naming", "magic numbers"),
    )
    answer = verdict([(True, None)], [(False, None), (False, None)])
    grade, requests = grade_review(case, [], tmp_path, judged(answer))
    assert (grade.status, grade.score, len(requests)) == ("pass", 1.0, 1)
    assert "expects nothing to be reported" in requests[0].system


def test_severity_is_compared_on_wardens_scale(tmp_path: Path) -> None:
    # A reviewer's `critical` is Warden's `high`; `info` is `low`.
    case = review_case(Expectation("null access on user.name", severity="high"))
    critical = {**NULL_ACCESS, "severity": "critical"}
    grade, _ = grade_review(
        case, [critical], tmp_path, judged(verdict([(True, 0)], [(False, None)]))
    )
    assert grade.status == "pass"


def test_wrong_array_length_is_retried_once(tmp_path: Path) -> None:
    short = verdict([(True, 0)], [])
    grade, requests = grade_review(
        review_case(),
        [NULL_ACCESS],
        tmp_path,
        judged(short),
        judged(verdict([(True, 0)], [(False, None)])),
    )
    assert grade.status == "pass"
    assert grade.judge["attempts"] == 2
    assert grade.usage.input_tokens == 200
    feedback = requests[1].messages[-1].content[0]
    assert feedback["type"] == "tool_result" and feedback["is_error"] is True
    assert "should_not_find has 0 entries; expected exactly 1" in feedback["content"]
    assert [r.purpose for r in requests] == ["judge", "judge"]


@pytest.mark.parametrize(
    "bad, complaint",
    [
        (verdict([(True, 3)], [(False, None)]), "out of range"),
        ({**verdict([(True, 0)], [(False, None)]), "score": 5}, "Additional properties"),
        ({"should_find": [{"index": 0, "met": "yes"}], "should_not_find": []}, "is not of type"),
    ],
)
def test_invalid_verdicts_are_explained_to_the_judge(
    tmp_path: Path, bad: dict[str, Any], complaint: str
) -> None:
    good = judged(verdict([(True, 0)], [(False, None)]))
    grade, requests = grade_review(review_case(), [NULL_ACCESS], tmp_path, judged(bad), good)
    assert grade.status == "pass"
    assert complaint in requests[1].messages[-1].content[0]["content"]


def test_text_instead_of_a_tool_call_is_retried(tmp_path: Path) -> None:
    good = judged(verdict([(True, 0)], [(False, None)]))
    grade, requests = grade_review(
        review_case(), [NULL_ACCESS], tmp_path, reply(text("It passes.")), good
    )
    assert grade.status == "pass"
    nudge = requests[1].messages[-1].content[0]
    assert nudge["type"] == "text" and "no record_verdict tool call" in nudge["text"]


def test_garbage_twice_is_a_judge_error_keeping_the_raw_answers(tmp_path: Path) -> None:
    with pytest.raises(JudgeError) as caught:
        grade_review(
            review_case(),
            [NULL_ACCESS],
            tmp_path,
            reply(text("I think it is fine")),
            reply(tool_call("record_verdict", {"verdict": "pass!!"})),
        )
    assert "outside its verdict schema twice" in str(caught.value)
    assert caught.value.raw is not None
    assert "I think it is fine" in caught.value.raw and '"pass!!"' in caught.value.raw
    usage = caught.value.usage  # both failed calls are paid for; the budget must see them
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (200, 40)


def test_tool_input_that_is_not_json_is_retried(tmp_path: Path) -> None:
    good = judged(verdict([(True, 0)], [(False, None)]))
    undecodable = reply(tool_call("record_verdict", '{"should_find": [tru'))
    grade, requests = grade_review(review_case(), [NULL_ACCESS], tmp_path, undecodable, good)
    assert grade.status == "pass"
    assert "not valid JSON" in requests[1].messages[-1].content[0]["content"]


def test_an_answer_cut_off_at_the_token_limit_is_never_a_verdict(tmp_path: Path) -> None:
    cut = judged(verdict([(True, 0)], [(False, None)]))
    cut = ModelResponse(content=cut.content, stop_reason="max_tokens", usage=cut.usage)
    good = judged(verdict([(True, 0)], [(False, None)]))
    grade, requests = grade_review(review_case(), [NULL_ACCESS], tmp_path, cut, good)
    assert grade.status == "pass" and len(requests) == 2
    assert "cut off at the judge's token limit" in requests[1].messages[-1].content[0]["content"]
    with pytest.raises(JudgeError, match="cut off at the judge's token limit"):
        grade_review(review_case(), [NULL_ACCESS], tmp_path, cut, cut)


def test_a_judges_huge_bad_value_is_not_quoted_whole(tmp_path: Path) -> None:
    """jsonschema quotes the bad value: 3 MB of it was the case's reason three times over."""
    huge = verdict([(True, 0)], [(False, None)])
    huge["should_find"][0]["matchedFindingIndex"] = "x" * 3_000_000
    with pytest.raises(JudgeError) as caught:
        grade_review(review_case(), [NULL_ACCESS], tmp_path, judged(huge), judged(huge))
    assert len(str(caught.value)) < 2_000


def test_severity_normalisation() -> None:
    assert normalise_severity(" HIGH ") == "high"
    assert normalise_severity("error") == "high"
    assert normalise_severity("warning") == "medium"
    assert normalise_severity("informational") == "info"
    assert normalise_severity("severe") is None
    assert normalise_severity(3) is None


# -- rubric judge --------------------------------------------------------------------------------


def grade_rubric(tmp_path: Path, *responses: ModelResponse) -> tuple[Grade, list[ModelRequest]]:
    output = AgentOutput(review_text="The API key is hardcoded.", findings=[NULL_ACCESS])
    with scripted_provider(sequence(*responses)) as fake:
        grade = asyncio.run(
            RubricJudge(options=RunOptions()).grade(context(rubric_case(), tmp_path), output)
        )
    return grade, fake.requests


def evaluation(score: Any, met: bool) -> ModelResponse:
    body = {
        "score": score,
        "rationale": "caught it",
        "findings": ["names the key"],
        "met_rubric": met,
    }
    return reply(tool_call("record_evaluation", body))


@pytest.mark.parametrize(
    "score, met, status, case_score",
    [
        (5, True, "pass", 1.0),
        (4, True, "pass", 0.75),
        (3, False, "fail", 0.5),
        (1, False, "fail", 0.0),
    ],
)
def test_rubric_score_mapping_and_met_rubric(
    tmp_path: Path, score: int, met: bool, status: str, case_score: float
) -> None:
    grade, requests = grade_rubric(tmp_path, evaluation(score, met))
    assert (grade.status, grade.score) == (status, case_score)
    assert grade.checks[0].kind == "rubric" and grade.checks[0].message == "caught it"
    assert grade.judge["verdict"] == {
        "score": score,
        "rationale": "caught it",
        "findings": ["names the key"],
        "met_rubric": met,
    }
    assert grade.judge["prompt_version"] == "rubric-judge.v1"
    (request,) = requests
    assert request.purpose == "judge" and request.tool_choice == "record_evaluation"
    prompt = request.messages[0].content[0]["text"]
    assert "Must flag the hardcoded key." in prompt
    assert '+const APIKey = "hardcoded"' in prompt
    assert "The API key is hardcoded." in prompt
    assert "5: every issue the rubric asks for is caught" in request.system


def test_rubric_score_out_of_range_is_retried(tmp_path: Path) -> None:
    grade, requests = grade_rubric(tmp_path, evaluation(7, True), evaluation(4, True))
    assert grade.score == 0.75
    assert "7 is greater than the maximum of 5" in requests[1].messages[-1].content[0]["content"]


def test_rubric_garbage_twice_is_a_judge_error(tmp_path: Path) -> None:
    with pytest.raises(JudgeError) as caught:
        grade_rubric(tmp_path, evaluation("five", True), reply(text("5/5")))
    assert (
        caught.value.raw is not None and '"five"' in caught.value.raw and "5/5" in caught.value.raw
    )


def test_judge_schema_is_cassandras() -> None:
    from assay.grading.rubric_judge import _CALL

    schema = _CALL.tool.input_schema
    assert schema["required"] == ["score", "rationale", "findings", "met_rubric"]
    assert schema["properties"]["score"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
        "description": schema["properties"]["score"]["description"],
    }
    assert json.dumps(schema).count("$ref") == 0
