"""Warden parity, second round: eval.ts values as Node evaluates them, one harness per
describeEval block, a category declared twice, nested categories, the declaring call's
kind, zod's leniency, Node's `path.join` for fixtures, `fixtureStorageSegments` on the
absolute path, EvalFileSchema's defaults, and what discovery reads in a Warden eval root.

The tree is test_warden_tree.py's miniature of getsentry/warden (`warden` fixture).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from assay.core.files import artifacts_dir
from assay.errors import ConfigErrors
from assay.suites.load import load_suites
from assay.suites.select import select_cases
from assay.upstream.warden.evalts import read_eval_declarations
from assay.upstream.warden.ts_eval import UNDEFINED, Unknown, evaluate, js_text
from assay.upstream.warden.ts_tokens import Token, tokenize
from assay.workspace import build_sandbox, remove_sandbox
from tests.test_warden_tree import scenario, warden, write  # noqa: F401 - the fixture

DEFAULT_MODEL = "openrouter/anthropic/claude-sonnet-4.6"
HANDLER = "fixtures/null-access/handler.ts"


def cases_of(root: Path, **kwargs: Any) -> dict[str, Any]:
    return {c.id: c for c in load_suites([root], **kwargs).cases}


def warnings_of(root: Path) -> list[str]:
    return [w.message for w in load_suites([root]).warnings]


def value(source: str, environ: dict[str, str] | None = None) -> object:
    def resolve(token: Token, called: bool) -> object:
        known = {"ONE_MINUTE": 60_000, "SKILLS": "../skills"}
        if called or token.text not in known:
            return Unknown(f"{token.text} unknown")
        return known[token.text]

    return evaluate(tokenize(source), resolve=resolve, environ=environ or {})  # type: ignore[arg-type]


# --- 1. eval.ts values: constant expressions as TypeScript evaluates them -----------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("120_000 + 60_000", 180_000),
        ("2 * (ONE_MINUTE + 30_000) - 1", 179_999),
        ("-(3 + 4) * 2", -14),
        ("7 % 4 + 10 / 4", 5.5),
        ("-7 % 3", -1),  # JavaScript's % keeps the dividend's sign
        ("16 / 2", 8),  # one number type: a whole quotient is a whole number
        ("'anthropic/' + 'claude'", "anthropic/claude"),
        ("'x' + 2 * 3", "x6"),
        ("'v' + 1.5", "v1.5"),
        ("`${SKILLS}/code-review/SKILL.md`", "../skills/code-review/SKILL.md"),
        ("`${ONE_MINUTE / 1000}s`", "60s"),
        ("'pi' as const", "pi"),
        ("(ONE_MINUTE as number) * 2", 120_000),
        ("'claude' as RuntimeName", "claude"),
        ("'pi' as 'pi' | 'claude'", "pi"),
        ("3 satisfies number", 3),
        ("process.env.SET!", "from-env"),
        ("process.env.UNSET ?? 'fallback'", "fallback"),
        ("process.env['SET'] ?? 'fallback'", "from-env"),
        ('process.env["EMPTY"] ?? "fallback"', ""),  # `??`: only unset falls back
        ("process.env.EMPTY || 'fallback'", "fallback"),  # `||`: empty falls back too
        ("process.env.UNSET || process.env.SET", "from-env"),
        ("process.env.UNSET", UNDEFINED),
    ],
)
def test_constant_expressions_evaluate_as_typescript(source: str, expected: object) -> None:
    environ = {"SET": "from-env", "EMPTY": ""}
    assert value(source, environ) == expected


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("pickModel()", "pickModel unknown"),
        ("skillPath('x')", "`skillPath(...)` is a function call"),
        ("TIMEOUTS.review", "`TIMEOUTS.review` is a property"),
        ("1 / 0", "/ by zero"),
        ("process.env.UNSET + '/x'", "+ on an undefined value"),
        ("'a' - 1", "- on a string"),
        ("cond ? 1 : 2", "cond unknown"),
    ],
)
def test_anything_else_is_unknown_with_a_reason(source: str, reason: str) -> None:
    result = value(source)
    assert isinstance(result, Unknown) and reason in result.reason


def test_numbers_become_text_as_javascript_writes_them() -> None:
    assert [js_text(v) for v in (120_000, 8.0, 1.5, 1e-7, 0.000001, 1e21, 0.1 + 0.2)] == [
        "120000",
        "8",
        "1.5",
        "1e-7",
        "0.000001",
        "1e+21",
        "0.30000000000000004",
    ]


WARDEN_CODE_REVIEW_TS = """\
import { DEFAULT_EVAL_RUNTIME, defaultEvalModel } from './auth.js';
const SKILLS = '../warden/src/builtin-skills';
export const CODE_REVIEW_RUN_TIMEOUT_MS: number = 120_000;
const CODE_REVIEW_EVAL_TIMEOUT_MS = CODE_REVIEW_RUN_TIMEOUT_MS + 60_000;
let TURNS = 16 / 2;
const model = process.env['WARDEN_SEMANTIC_CHUNK_EVAL_MODEL'] ?? defaultEvalModel();
const evals = discoverEvalScenarios({
  category: 'code-review',
  skill: `${SKILLS}/code-review/SKILL.md` as const,
  runtime: (process.env.EVAL_RUNTIME || DEFAULT_EVAL_RUNTIME) satisfies RuntimeName,
  model,
});
describeEval('code-review', {
  harness: createWardenEvalHarness({
    maxTurns: TURNS!,
    timeoutMs: CODE_REVIEW_EVAL_TIMEOUT_MS,
  }),
}, (it) => { for (const meta of evals) it(meta.name, async ({ run }) => run(meta)); });
"""


def test_wardens_computed_values_reach_the_cases(
    warden: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(warden / "src/code-review.eval.ts", WARDEN_CODE_REVIEW_TS)
    monkeypatch.setenv("EVAL_RUNTIME", "")  # `||`: empty falls back to the default
    case = cases_of(warden)["code-review/null-access"]
    assert case.spec.skill == warden.parent / "warden/src/builtin-skills/code-review/SKILL.md"
    assert (case.runtime, case.model) == ("pi", DEFAULT_MODEL)
    assert (case.max_turns, case.timeout_s) == (8, 180.0)
    monkeypatch.setenv("WARDEN_MODEL", "anthropic/claude-w")
    assert cases_of(warden)["code-review/null-access"].model == "anthropic/claude-w"
    monkeypatch.setenv("WARDEN_SEMANTIC_CHUNK_EVAL_MODEL", "anthropic/claude-chunk")
    monkeypatch.setenv("EVAL_RUNTIME", "claude")
    case = cases_of(warden)["code-review/null-access"]
    assert (case.runtime, case.model) == ("claude", "anthropic/claude-chunk")
    own = [w for w in load_suites([warden]).warnings if "code-review.eval.ts" in str(w.location)]
    assert own == []


def test_where_a_computed_value_came_from(warden: Path) -> None:  # noqa: F811
    write(warden / "src/code-review.eval.ts", WARDEN_CODE_REVIEW_TS)
    declarations, warnings = read_eval_declarations(warden, environ={})
    (review,) = [d for d in declarations if d.category == "code-review"]
    timeout = review.harness["timeoutMs"]
    assert (timeout.value, timeout.how, timeout.location.line) == (
        180_000,
        "const CODE_REVIEW_EVAL_TIMEOUT_MS",
        4,  # the const's own expression, where the value is written
    )
    assert review.values["runtime"].how == (
        "(process.env.EVAL_RUNTIME || DEFAULT_EVAL_RUNTIME) satisfies RuntimeName"
    )
    assert review.values["model"].how == "const model"
    assert not [w for w in warnings if "code-review.eval.ts" in str(w.location)]


def test_an_unset_environment_variable_is_an_option_left_out(warden: Path) -> None:  # noqa: F811
    # `model: process.env.X` with X unset is `model: undefined`: Warden's default applies.
    text = (warden / "src/code-review.eval.ts").read_text()
    write(
        warden / "src/code-review.eval.ts", text.replace("  model,\n", "  model: process.env.X,\n")
    )
    declarations, warnings = read_eval_declarations(warden, environ={})
    (review,) = [d for d in declarations if d.category == "code-review"]
    assert "model" not in review.values
    assert not [w for w in warnings if "code-review.eval.ts" in str(w.location)]
    assert cases_of(warden)["code-review/null-access"].model == DEFAULT_MODEL


def test_what_cannot_be_evaluated_stays_a_warning_naming_file_and_line(
    warden: Path,  # noqa: F811
) -> None:
    write(
        warden / "src/code-review.eval.ts",
        "const evals = discoverEvalScenarios({\n  category: 'code-review',\n"
        "  skill: resolveSkill('code-review'),\n});\n",
    )
    (warning,) = [
        w for w in load_suites([warden]).warnings if "code-review.eval.ts" in str(w.location)
    ]
    assert (warning.location.line, warning.location.col) == (3, 3)
    assert warning.message.startswith(
        "discoverEvalScenarios: skill is `resolveSkill('code-review')`, which assay cannot "
        "work out without running it"
    )
    assert "set `skill:` in code-review/_suite.yaml instead" in warning.message


# --- 2. a harness belongs to its describeEval block ---------------------------------------

TWO_BLOCKS_TS = """\
const slow = discoverEvalScenarios({ category: 'slow', skill: 'skills/precision.md' });
describeEval('slow', {
  harness: createWardenEvalHarness({
    maxTurns: 30, timeoutMs: 10 * 60_000, model: 'anthropic/claude-s',
  }),
}, (it) => { for (const meta of slow) it(meta.name, ({ run }) => run(meta)); });

describeEval('fast', {
  harness: createWardenEvalHarness({ maxTurns: 3 }),
}, (it) => {
  for (const meta of discoverEvalScenarios({ category: 'fast', skill: 'skills/precision.md' })) {
    it(meta.name, ({ run }) => run(meta));
  }
});
"""


def test_each_discover_call_gets_the_harness_of_its_own_block(warden: Path) -> None:  # noqa: F811
    write(warden / "src/speed.eval.ts", TWO_BLOCKS_TS)
    write(warden / "slow/a.json", scenario([HANDLER]))
    write(warden / "fast/b.json", scenario([HANDLER]))
    cases = cases_of(warden)
    slow, fast = cases["precision/a"], cases["precision/b"]
    assert (slow.max_turns, slow.timeout_s, slow.model) == (30, 600.0, "anthropic/claude-s")
    assert (fast.max_turns, fast.timeout_s, fast.model) == (3, None, DEFAULT_MODEL)
    assert not any("cannot tell which harness" in w for w in warnings_of(warden))


def test_a_harness_held_in_a_const_is_its_blocks(warden: Path) -> None:  # noqa: F811
    write(
        warden / "src/held.eval.ts",
        "const harness = createWardenEvalHarness({ maxTurns: 5 });\n"
        "const other = createWardenEvalHarness({ maxTurns: 9 });\n"
        "const evals = discoverEvalScenarios({ category: 'held', skill: 'skills/precision.md' });\n"
        "describeEval('held', { harness }, (it) => { for (const m of evals) it(m.name); });\n"
        "describeEval('other', { harness: other }, (it) => {});\n",
    )
    write(warden / "held/a.json", scenario([HANDLER]))
    assert cases_of(warden)["precision/a"].max_turns == 5


def test_without_a_block_one_harness_still_applies_and_two_apply_none(
    warden: Path,  # noqa: F811
) -> None:
    declare = "discoverEvalScenarios({ category: 'loose', skill: 'skills/precision.md' });\n"
    write(warden / "loose/a.json", scenario([HANDLER]))
    write(
        warden / "src/loose.eval.ts",
        f"const evals = {declare}const h = createWardenEvalHarness({{ maxTurns: 4 }});\n",
    )
    assert cases_of(warden)["precision/a"].max_turns == 4  # the file's only harness
    write(
        warden / "src/loose.eval.ts",
        f"const evals = {declare}"
        "const h = createWardenEvalHarness({ maxTurns: 4 });\n"
        "const g = createWardenEvalHarness({ maxTurns: 6 });\n",
    )
    loaded = load_suites([warden])
    assert {c.id: c for c in loaded.cases}["precision/a"].max_turns is None
    (warning,) = [w for w in loaded.warnings if "cannot tell which harness" in w.message]
    assert Path(str(warning.location.path)).name == "loose.eval.ts"
    assert warning.location.line == 1
    assert "this file creates 2 harnesses" in warning.message


# --- 3. a category declared twice runs once per declaration --------------------------------


def test_a_category_declared_twice_runs_under_each_declaration(warden: Path) -> None:  # noqa: F811
    # A second declaration of code-review, in another file, with another skill.
    write(
        warden / "src/precision.eval.ts",
        "const evals = discoverEvalScenarios({ category: 'code-review', "
        "skill: 'skills/precision.md', model: 'anthropic/claude-p' });\n"
        "describeEval('p', { harness: createWardenEvalHarness({ maxTurns: 2 }) });\n",
    )
    cases = cases_of(warden)
    first, second = cases["code-review/null-access"], cases["precision/null-access"]
    assert first.spec.skill.name == "SKILL.md" and second.spec.skill.name == "precision.md"
    assert (first.model, first.max_turns) == (DEFAULT_MODEL, 8)
    assert (second.model, second.max_turns) == ("anthropic/claude-p", 2)
    assert first.spec.files == second.spec.files


def test_two_declarations_giving_one_id_use_wardens_full_id(warden: Path) -> None:  # noqa: F811
    # Same skill, two models: the short ids would clash, the full ids do not.
    write(
        warden / "src/matrix.eval.ts",
        "const opus = discoverEvalScenarios({ category: 'matrix', skill: 'skills/precision.md',"
        " model: 'anthropic/claude-opus' });\n"
        "const haiku = discoverEvalScenarios({ category: 'matrix', skill: 'skills/precision.md',"
        " model: 'anthropic/claude-haiku' });\n",
    )
    write(warden / "matrix/case.json", scenario([HANDLER]))
    loaded = load_suites([warden])
    ids = sorted(c.id for c in loaded.cases if c.suite == "matrix")
    assert ids == [
        "precision/pi/anthropic/claude-haiku/case",
        "precision/pi/anthropic/claude-opus/case",
    ]
    assert not any("duplicate" in w.message for w in loaded.warnings)
    # The short id selects both; each full id one.
    assert len(select_cases(loaded.cases, ["precision/case"])) == 2
    picked = select_cases(loaded.cases, ["precision/pi/anthropic/claude-opus/case"])
    assert [c.model for c in picked] == ["anthropic/claude-opus"]


def test_every_warden_case_has_its_full_id_as_an_alias(warden: Path) -> None:  # noqa: F811
    loaded = load_suites([warden])
    picked = select_cases(loaded.cases, [f"code-review/pi/{DEFAULT_MODEL}/null-access"])
    assert [c.id for c in picked] == ["code-review/null-access"]
    # A YAML suite's: its own runtime and model (Warden's meta), not the e2e harness's.
    picked = select_cases(loaded.cases, ["precision/claude/anthropic/claude-x/ignores-style"])
    assert [c.id for c in picked] == ["precision/ignores-style"]


def test_declarations_that_still_clash_run_as_numbered_ids(warden: Path) -> None:  # noqa: F811
    # Same skill, runtime and model: only the harness differs. Both run.
    write(
        warden / "src/twice.eval.ts",
        "const a = discoverEvalScenarios({ category: 'twice', skill: 'skills/precision.md' });\n"
        "describeEval('a', { harness: createWardenEvalHarness({ maxTurns: 1 }) }, () => a);\n"
        "const b = discoverEvalScenarios({ category: 'twice', skill: 'skills/precision.md' });\n"
        "describeEval('b', { harness: createWardenEvalHarness({ maxTurns: 2 }) }, () => b);\n",
    )
    write(warden / "twice/t.json", scenario([HANDLER]))
    cases = cases_of(warden)
    full = f"precision/pi/{DEFAULT_MODEL}/t"
    assert (cases[full].max_turns, cases[f"{full}#2"].max_turns) == (1, 2)


# --- 4. nested categories -------------------------------------------------------------------


def test_a_nested_category_names_its_directory(warden: Path) -> None:  # noqa: F811
    write(
        warden / "src/bench.eval.ts",
        "const evals = discoverEvalScenarios({ category: 'bench/perf', "
        "skill: 'skills/precision.md', model: 'anthropic/claude-b' });\n",
    )
    write(warden / "bench/perf/slow-loop.json", scenario([HANDLER]))
    write(warden / "bench/other.json", scenario([HANDLER]))  # undeclared: assay's own rule
    cases = cases_of(warden)
    nested = cases["precision/slow-loop"]
    assert (nested.suite, nested.model) == ("bench/perf", "anthropic/claude-b")
    assert nested.spec.skill.name == "precision.md"
    assert select_cases(list(cases.values()), ["bench/perf/slow-loop"]) == [nested]
    assert cases["bench/other"].suite == "bench"


# --- 5. the declaring call decides the kind ----------------------------------------------

CANDIDATE = {"id": "f1", "severity": "high", "title": "t", "description": "d"}


def test_a_review_declared_directory_reads_review_scenarios(warden: Path) -> None:  # noqa: F811
    # Keys of a verification scenario too: Warden's review schema reads it, dropping them.
    both = {"candidate": CANDIDATE, "expect": {"verdict": "keep"}}
    write(warden / "code-review/both.json", scenario([HANDLER], **both))
    loaded = load_suites([warden])
    case = {c.id: c for c in loaded.cases}["code-review/both"]
    assert (case.kind, case.format) == ("review", "review-json")
    unknown = sorted(w.message.split("'")[1] for w in loaded.warnings if "unknown key" in w.message)
    assert unknown == ["candidate", "expect"]


def test_a_verification_declared_directory_reads_verification_scenarios(
    warden: Path,  # noqa: F811
) -> None:
    # No candidate: by its keys a review scenario; declared, a verification one missing two.
    write(warden / "verification/looks-like-review.json", scenario([HANDLER]))
    with pytest.raises(ConfigErrors) as caught:
        load_suites([warden])
    messages = [e.message for e in caught.value.errors]
    assert "missing required field 'candidate'" in messages
    assert "missing required field 'expect'" in messages
    # A file of no known shape in a declared directory is read (and refused) as Warden reads it.
    (warden / "verification/looks-like-review.json").unlink()
    write(warden / "verification/notes.json", '{"owner": "me"}')
    with pytest.raises(ConfigErrors, match="missing required field 'given'"):
        load_suites([warden])


def test_a_directory_declared_as_both_kinds_keeps_the_key_rule(warden: Path) -> None:  # noqa: F811
    write(
        warden / "src/mixed.eval.ts",
        "discoverEvalScenarios({ category: 'verification', skill: 'skills/precision.md' });\n",
    )
    write(warden / "verification/review.json", scenario([HANDLER]))
    loaded = load_suites([warden])
    kinds = {c.name: c.kind for c in loaded.cases if c.suite == "verification"}
    assert kinds == {"keep": "verify", "review": "review"}
    assert any("declared by both" in w.message for w in loaded.warnings)


# --- 6. what Warden's zod accepts -------------------------------------------------------------


def test_empty_text_is_a_warning_and_an_error_under_strict(warden: Path) -> None:  # noqa: F811
    write(
        warden / "code-review/blank.json",
        json.dumps(
            {
                "name": "",
                "given": "",
                "files": [HANDLER],
                "should_find": [{"finding": ""}],
                "should_not_find": [""],
            }
        ),
    )
    loaded = load_suites([warden])
    case = {c.id: c for c in loaded.cases}["code-review/"]
    assert (case.spec.given, case.spec.should_find[0].finding) == ("", "")
    blank = sorted(
        w.message.split(":")[0] for w in loaded.warnings if "empty; Warden accepts it" in w.message
    )
    assert blank == ["given", "name", "should_find[0].finding", "should_not_find[0]"]
    with pytest.raises(ConfigErrors) as caught:
        load_suites([warden], strict=True)
    assert sum("empty; Warden accepts it" in e.message for e in caught.value.errors) == 4


def test_a_case_name_with_a_slash_is_kept_in_the_id(warden: Path, tmp_path: Path) -> None:  # noqa: F811
    write(warden / "code-review/slash.json", scenario([HANDLER], name="auth/login"))
    loaded = load_suites([warden])
    case = {c.id: c for c in loaded.cases}["code-review/auth/login"]
    assert case.name == "auth/login"
    assert any("contains '/'" in w.message for w in loaded.warnings)
    # Its artifacts stay under the report's cases/ directory, one segment per part.
    path = artifacts_dir(tmp_path / "report", case.id, "m/x", 0)
    assert path.relative_to(tmp_path / "report/cases").parts == (
        "code-review",
        "auth",
        "login",
        path.parts[-2],
        "attempt-1",
    )
    write(warden / "code-review/dots.json", scenario([HANDLER], name="../../escape"))
    dots = {c.id: c for c in load_suites([warden]).cases}["code-review/../../escape"]
    escaped = artifacts_dir(tmp_path / "report", dots.id, None, 0)
    assert escaped.resolve().is_relative_to((tmp_path / "report/cases").resolve())
    with pytest.raises(ConfigErrors, match="contains '/'"):
        load_suites([warden], strict=True)


def test_control_characters_in_a_name_stay_an_error(warden: Path) -> None:  # noqa: F811
    write(warden / "code-review/ctl.json", scenario([HANDLER], name="a\u0007b"))
    with pytest.raises(ConfigErrors, match="must not contain control characters"):
        load_suites([warden])


def test_a_fixture_listed_twice_is_copied_once(warden: Path) -> None:  # noqa: F811
    write(warden / "code-review/twice.json", scenario([HANDLER, "./" + HANDLER]))
    loaded = load_suites([warden])
    case = {c.id: c for c in loaded.cases}["code-review/twice"]
    assert [f.dest for f in case.spec.files] == ["null-access/handler.ts"]
    (warning,) = [w for w in loaded.warnings if "already lists" in w.message]
    assert warning.message == (
        "files[1]: './fixtures/null-access/handler.ts' is the file files[0] already lists; "
        "it is copied once"
    )


def test_duplicate_ids_both_run_numbered_with_a_warning(warden: Path) -> None:  # noqa: F811
    write(warden / "code-review/again.json", scenario([HANDLER], name="null-access"))
    write(warden / "code-review/third.json", scenario([HANDLER], name="null-access"))
    loaded = load_suites([warden])
    ids = sorted(c.id for c in loaded.cases if c.name == "null-access")
    assert ids == [
        "code-review/null-access",
        "code-review/null-access#2",
        "code-review/null-access#3",
    ]
    # Each later one names where the first is, and says what it runs as.
    duplicates = [w for w in loaded.warnings if "duplicate case id" in w.message]
    assert [Path(str(w.location.path)).name for w in duplicates] == [
        "null-access.json",
        "third.json",
    ]
    assert "(also defined at " in duplicates[0].message
    assert "again.json:" in duplicates[0].message
    assert duplicates[0].message.endswith("this one as 'code-review/null-access#2'")
    with pytest.raises(ConfigErrors, match="duplicate case id"):
        load_suites([warden], strict=True)


def test_the_scaffold_placeholder_is_a_warning_only_when_it_starts_with_todo_colon(
    warden: Path,  # noqa: F811
) -> None:
    stub = {"should_find": [{"finding": "TODO: replace with the exact finding"}]}
    write(warden / "code-review/stub.json", scenario([HANDLER], **stub))
    loaded = load_suites([warden])
    (warning,) = [w for w in loaded.warnings if "TODO placeholder" in w.message]
    assert warning.message.startswith("should_find[0].finding: still the scaffold's TODO")
    assert {c.id: c for c in loaded.cases}["code-review/stub"].spec.should_find
    with pytest.raises(ConfigErrors, match="still the scaffold's TODO placeholder"):
        load_suites([warden], strict=True)
    words = {"should_find": [{"finding": "TODO comments left in the code must be flagged"}]}
    write(warden / "code-review/stub.json", scenario([HANDLER], **words))
    assert not any("TODO" in w.message for w in load_suites([warden]).warnings)


def test_a_cassandra_rubric_placeholder_is_a_warning_too(tmp_path: Path) -> None:
    root = tmp_path / "rubrics"
    write(root / "cases/one/input.diff", "")
    write(root / "cases/two/input.diff", "")
    cases = [
        {
            "id": "one",
            "rubric": "TODO: describe what a good review must catch",
            "fixture_path": "cases/one",
        },
        {
            "id": "two",
            "rubric": "TODO comments left in the code must be flagged",
            "fixture_path": "cases/two",
        },
    ]
    write(root / "suite.json", json.dumps({"name": "s", "cases": cases}))
    loaded = load_suites([root])
    assert sorted(c.id for c in loaded.cases) == ["suite/one", "suite/two"]
    todo = [w for w in loaded.warnings if "TODO" in w.message]
    assert [w.message.split(":")[0] for w in todo] == ["cases[0].rubric"]
    with pytest.raises(ConfigErrors, match=r"cases\[0\].rubric: still the scaffold's TODO"):
        load_suites([root], strict=True)


# --- 7. fixture paths: Node's join, inside the project ----------------------------------------


def test_fixture_paths_are_joined_as_node_joins_them(warden: Path) -> None:  # noqa: F811
    # A leading `/` is relative to the eval root; `..` is normalised and may leave the eval
    # root, never the project (the git work tree holding it).
    write(warden.parent / "shared/types.ts", "export type Id = string;\n")
    paths = ["/" + HANDLER, "code-review/../" + HANDLER.replace("handler", "x/../handler")]
    write(
        warden / "code-review/joined.json",
        scenario([paths[0]], supporting_files=["../shared/types.ts"]),
    )
    write(warden / "code-review/dots.json", scenario([paths[1]]))
    cases = cases_of(warden)
    joined = cases["code-review/joined"].spec
    assert [(f.source, f.dest) for f in joined.files] == [
        (warden / HANDLER, "null-access/handler.ts")
    ]
    assert [(f.source, f.dest) for f in joined.supporting_files] == [
        (warden.parent / "shared/types.ts", "shared/types.ts")
    ]
    assert cases["code-review/dots"].spec.files == joined.files


def test_a_fixture_outside_the_project_is_refused(warden: Path, tmp_path: Path) -> None:  # noqa: F811
    write(tmp_path / "host-secret.txt", "token\n")
    outside = os.path.relpath(tmp_path / "host-secret.txt", warden)
    write(warden / "code-review/leak.json", scenario([outside]))
    with pytest.raises(ConfigErrors) as caught:
        load_suites([warden])
    (error,) = [e for e in caught.value.errors if "leak.json" in str(e.location)]
    assert (error.location.line, error.location.col) == (1, 30)  # the `files` entry
    assert error.message.startswith(f"files[0]: {outside!r} is {tmp_path / 'host-secret.txt'}, ")
    assert f"outside the project {warden.parent.parent}" in error.message
    assert error.message.endswith("copy it into the eval root's fixtures/")


def test_a_symlink_leading_out_of_the_project_is_refused(warden: Path, tmp_path: Path) -> None:  # noqa: F811
    write(tmp_path / "host-secret.txt", "token\n")
    os.symlink(tmp_path / "host-secret.txt", warden / "fixtures/null-access/link.ts")
    write(warden / "code-review/link.json", scenario(["fixtures/null-access/link.ts"]))
    with pytest.raises(ConfigErrors, match="a symlink escapes the root"):
        load_suites([warden])


# --- 8. where a fixture lands: Warden reads the absolute path ------------------------------


def repo_files(case: Any, parent: Path) -> tuple[list[str], list[str]]:
    sandbox = build_sandbox(case, parent=parent)
    try:
        listed = subprocess.run(
            ["git", "ls-tree", "-r", "--name-only", "eval"],
            cwd=sandbox.path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        return listed, sorted(sandbox.changed_files)
    finally:
        remove_sandbox(sandbox)


def test_a_tree_inside_a_fixtures_directory_lands_as_warden_lands_it(tmp_path: Path) -> None:
    # fixtureStorageSegments reads the absolute path: after the first `evals/fixtures`, else
    # after the first `fixtures`, which here is a directory above the eval root.
    repo = tmp_path / "fixtures/acme"
    root = repo / "review-evals"
    write(root / "skills/s.md", "Find bugs.\n")
    write(root / "data/app.ts", "export const a = 1;\n")
    write(
        root / "review.yaml",
        (
            "skill: skills/s.md\nevals:\n  - name: one\n    given: g\n"
            "    files: [data/app.ts]\n    should_find: [{finding: f}]\n"
        ),
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (case,) = load_suites([root]).cases
    assert [f.dest for f in case.spec.files] == ["acme/review-evals/data/app.ts"]
    work = tmp_path / "work"
    work.mkdir()
    assert "acme/review-evals/data/app.ts" in repo_files(case, work)[0]
    # `evals/fixtures` wins over an earlier `fixtures`.
    nested = repo / "evals"
    write(nested / "skills/s.md", "Find bugs.\n")
    write(nested / "fixtures/c/app.ts", "export const a = 1;\n")
    write(
        nested / "review.yaml", (root / "review.yaml").read_text().replace("data/", "fixtures/c/")
    )
    (case,) = load_suites([nested]).cases
    assert [f.dest for f in case.spec.files] == ["c/app.ts"]


# --- 9. a YAML suite's defaults are EvalFileSchema's --------------------------------------------


def test_a_yaml_suites_default_model_is_wardens_constant(
    warden: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (warden / "src/e2e.eval.ts").unlink()
    text = (warden / "eval-precision.yaml").read_text()
    write(warden / "eval-precision.yaml", text.replace("model: anthropic/claude-x\n", ""))
    monkeypatch.setenv("WARDEN_MODEL", "anthropic/claude-w")
    case = cases_of(warden)["precision/ignores-style"]
    # `runtime: claude` named, no model: the schema's DEFAULT_EVAL_MODEL, not WARDEN_MODEL.
    assert (case.runtime, case.model) == ("claude", DEFAULT_MODEL)


def test_warden_model_reaches_yaml_suites_through_the_e2e_harness(
    warden: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WARDEN_MODEL", "anthropic/claude-w")
    case = cases_of(warden)["precision/ignores-style"]
    assert (case.runtime, case.model) == ("pi", "anthropic/claude-w")


# --- 10. what discovery reads in a Warden eval root -------------------------------------------


def test_src_is_code_never_suites(warden: Path) -> None:  # noqa: F811
    # Warden's own unit-test fixtures under src/ look like scenarios, some broken ones too.
    write(warden / "src/__fixtures__/scenario.json", scenario(["missing.ts"]))
    write(warden / "src/__fixtures__/broken.json", "{ not json")
    write(warden / "src/__fixtures__/suite.yaml", "skill: [")
    loaded = load_suites([warden])
    assert not any("__fixtures__" in str(c.source_path) for c in loaded.cases)
    assert not any("__fixtures__" in str(w.location) for w in loaded.warnings)


def test_wardens_suffix_rule_where_warden_reads(warden: Path) -> None:  # noqa: F811
    suite = (warden / "eval-precision.yaml").read_text()
    write(warden / ".dot-suite.yaml", suite.replace("ignores-style", "dotted"))
    write(warden / "SHOUT.YAML", "skill: [")  # not `.yaml`: Warden never reads it
    write(warden / "code-review/.hidden.json", scenario([HANDLER]))
    write(warden / "code-review/UPPER.JSON", "{ not json")
    ids = set(cases_of(warden))
    assert {"precision/dotted", "code-review/.hidden"} <= ids


def test_the_general_rule_elsewhere(tmp_path: Path) -> None:
    # No src/**/*.eval.ts: assay's own rule (hidden files skipped, suffixes any case).
    root = tmp_path / "plain"
    write(root / "skills/s.md", "Find bugs.\n")
    write(root / "fixtures/a.ts", "a\n")
    body = (
        "skill: skills/s.md\nevals:\n  - {name: %s, given: g, files: [fixtures/a.ts],"
        " should_find: [{finding: f}]}\n"
    )
    write(root / "UPPER.YAML", body % "upper")
    write(root / ".hidden.yaml", "skill: [")
    assert set(cases_of(root)) == {"s/upper"}
