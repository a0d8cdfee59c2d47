"""Work done once per run, not per case: cached schemas, prompts and skills; bounded judges."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from pydantic import BaseModel

from assay._util.json_schema import tool_input_schema
from assay.agents import submissions, tools
from assay.agents.skill import load_skill
from assay.agents.submissions import ReviewSubmission, submission_tool
from assay.agents.tools import SandboxTools
from assay.grading import judge_verdicts
from assay.grading.judge_verdicts import FindingsVerdict, bounded_findings_schema
from assay.suites.case import Expectation
from tests.grading.test_judges import NULL_ACCESS, grade_review, judged, review_case, verdict


def test_static_tool_schemas_are_built_once() -> None:
    assert tool_input_schema(FindingsVerdict) is tool_input_schema(FindingsVerdict)
    assert SandboxTools.specs() is SandboxTools.specs()
    first = submission_tool("submit_findings", ReviewSubmission)
    assert submission_tool("submit_findings", ReviewSubmission) is first


def test_field_descriptions_come_from_the_schema_not_the_class() -> None:
    # pydantic's use_attribute_docstrings reads them as each class is made, walking every
    # loaded module per class: 0.18 s of a run's first case once the SDK is imported.
    made_reading_source = [
        cls
        for module in (tools, submissions, judge_verdicts)
        for cls in vars(module).values()
        if isinstance(cls, type)
        and issubclass(cls, BaseModel)
        and cls.model_config.get("use_attribute_docstrings")
    ]
    assert made_reading_source == []
    tool = submission_tool("submit_findings", ReviewSubmission)
    finding = tool.input_schema["properties"]["findings"]["items"]
    path = finding["properties"]["location"]["properties"]["path"]
    assert path["description"] == "Repository-relative path of the file, e.g. `src/handler.ts`."


def test_an_edited_skill_is_read_again(tmp_path: Path) -> None:
    skill = tmp_path / "bugs.md"
    skill.write_text("---\nname: bugs\n---\nFind bugs.\n", encoding="utf-8")
    assert (load_skill(skill).name, load_skill(skill).body) == ("bugs", "Find bugs.")
    skill.write_text("---\nname: nulls\n---\nFind null reads.\n", encoding="utf-8")
    assert (load_skill(skill).name, load_skill(skill).body) == ("nulls", "Find null reads.")


def _answer(found: list[tuple[bool, int | None]], avoided: list[tuple[bool, int | None]]) -> dict:
    return verdict(found, avoided)


@pytest.mark.parametrize(
    "answer",
    [
        _answer([(True, 1)], [(False, None)]),  # finding 1 of a single finding
        _answer([(True, 0), (True, 0)], [(False, None)]),  # one entry too many
        _answer([(True, 0)], []),  # one too few
        {"should_find": [{"index": 1, "met": False, "reasoning": "r"}], "should_not_find": []},
    ],
)
def test_the_bounded_schema_refuses_out_of_range_answers(answer: dict) -> None:
    schema = bounded_findings_schema(should_find=1, should_not_find=1, findings=1)
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(answer))


def test_the_bounded_schema_accepts_what_the_judges_must() -> None:
    schema = bounded_findings_schema(should_find=1, should_not_find=1, findings=2)
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors(_answer([(True, 1)], [(True, 0)])))
    # Warden's evalPassed: met with a null index is a valid answer.
    assert not list(validator.iter_errors(_answer([(True, None)], [(False, None)])))
    none = bounded_findings_schema(should_find=1, should_not_find=0, findings=0)
    assert not list(jsonschema.Draft202012Validator(none).iter_errors(_answer([(False, None)], [])))
    assert list(jsonschema.Draft202012Validator(none).iter_errors(_answer([(True, 0)], [])))
    # The static schema the answers are read against is left as it was.
    assert "maxItems" not in tool_input_schema(FindingsVerdict)["properties"]["should_find"]


def test_the_judge_is_shown_the_case_bounds_and_still_retries(tmp_path: Path) -> None:
    case = review_case(Expectation("null access on user.name"), Expectation("a second issue"))
    good = judged(verdict([(True, 0), (False, None)], [(False, None)]))
    out_of_range = judged(verdict([(True, 3), (False, None)], [(False, None)]))
    grade, requests = grade_review(case, [NULL_ACCESS], tmp_path, out_of_range, good)
    assert grade.judge["attempts"] == 2
    (tool,) = requests[0].tools
    should_find = tool.input_schema["properties"]["should_find"]
    assert should_find["minItems"] == should_find["maxItems"] == 2
    assert should_find["items"]["properties"]["index"]["maximum"] == 1
    matched = should_find["items"]["properties"]["matchedFindingIndex"]["anyOf"]
    assert {"minimum": 0, "maximum": 0, "type": "integer"} in matched
    assert "out of range" in requests[1].messages[-1].content[0]["content"]
