"""Warden's real layout: `packages/evals/` with `src/*.eval.ts` declaring the JSON categories.

The miniature tree is shaped like getsentry/warden: skills outside the eval root at
`../warden/src/builtin-skills/<skill>/SKILL.md`, eval.ts files that call
`discoverEvalScenarios({...})` with literal and non-literal values, harness options with
`120_000`, a verification category, and YAML suites run by `e2e.eval.ts`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from assay.agents.asks import Shown, ask_for
from assay.errors import ConfigErrors
from assay.models.names import bridge_env, missing_credentials, warden_key_variables
from assay.suites.load import load_suites
from assay.suites.select import select_cases
from assay.upstream.warden.evalts import read_eval_declarations
from assay.upstream.warden.ts_tokens import tokenize
from assay.workspace import build_sandbox, remove_sandbox
from tests.test_cli_validate import cli  # noqa: F401 - the fixture

CODE_REVIEW_TS = """\
import { expect } from 'vitest';
import { describeEval } from 'vitest-evals';
import { createWardenEvalHarness, createWardenEvalJudge } from './harness.js';
import { discoverEvalScenarios } from './index.js';
import { DEFAULT_EVAL_RUNTIME, defaultEvalModel, getEvalRuntimeApiKey } from './auth.js';

const model = defaultEvalModel();
const apiKey = getEvalRuntimeApiKey(model);
const evals = discoverEvalScenarios({
  category: 'code-review',
  skill: '../warden/src/builtin-skills/code-review/SKILL.md',
  runtime: DEFAULT_EVAL_RUNTIME,
  model,
});
const CODE_REVIEW_RUN_TIMEOUT_MS = 120_000;
const CODE_REVIEW_EVAL_TIMEOUT_MS = CODE_REVIEW_RUN_TIMEOUT_MS + 60_000;

describeEval(
  'code-review',
  {
    harness: createWardenEvalHarness({
      apiKey,
      maxTurns: 8,
      timeoutMs: CODE_REVIEW_RUN_TIMEOUT_MS,
      postProcessFindings: false,
      verbose: true,
    }),
    judges: [createWardenEvalJudge(apiKey)],
  },
  (it) => {
    for (const meta of evals) {
      it(`${meta.name}`, { timeout: CODE_REVIEW_EVAL_TIMEOUT_MS }, async ({ run }) => {
        await run(meta);
      });
    }
  },
);
"""

# Values only running the code tells: a function's result, a property of an object.
SECURITY_REVIEW_TS = """\
import { discoverEvalScenarios } from './index.js';
const SKILLS = '../warden/src/builtin-skills';
const evals = discoverEvalScenarios({
  category: "security-review",
  skill: skillPath('security-review'),
  runtime: DEFAULT_EVAL_RUNTIME,
  model: pickModel(),
});
describeEval('security-review', {
  harness: createWardenEvalHarness({ apiKey, timeoutMs: TIMEOUTS.review }), // two minutes
});
"""

VERIFY_TS = """\
/* Warden's verifier-only evals. */
const model = defaultEvalModel();
const evals = discoverVerificationEvalScenarios({
  category: 'verification',
  skill: '../warden/src/builtin-skills/security-review/SKILL.md',
  runtime: DEFAULT_EVAL_RUNTIME,
  model,
});
"""

E2E_TS = """\
const model = defaultEvalModel();
const evals = discoverEvals();
describeEval('e2e', {
  harness: createWardenEvalHarness({ apiKey, runtime: DEFAULT_EVAL_RUNTIME, model, verbose: true }),
});
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def scenario(files: list[str], **extra: object) -> str:
    body = {
        "given": "a bug",
        "files": files,
        "should_find": [{"finding": "the bug", "severity": "high"}],
        **extra,
    }
    return json.dumps(body)


@pytest.fixture
def warden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`<repo>/packages/evals`, a git work tree, as Warden's repository is laid out."""
    monkeypatch.delenv("WARDEN_MODEL", raising=False)
    repo = tmp_path / "warden-repo"
    skills = repo / "packages/warden/src/builtin-skills"
    write(skills / "code-review/SKILL.md", "---\nname: code-review\n---\nFind bugs.\n")
    write(skills / "code-review/references/checks.md", "null checks\n")
    write(skills / "security-review/SKILL.md", "---\nname: security-review\n---\nFind vulns.\n")
    write(repo / "packages/evals/skills/precision.md", "---\nname: precision\n---\nBe precise.\n")
    evals = repo / "packages/evals"
    write(evals / "src/code-review.eval.ts", CODE_REVIEW_TS)
    write(evals / "src/security-review.eval.ts", SECURITY_REVIEW_TS)
    write(evals / "src/verify.eval.ts", VERIFY_TS)
    write(evals / "src/e2e.eval.ts", E2E_TS)
    write(evals / "src/harness.ts", "export function createWardenEvalHarness() {}\n")
    write(evals / "fixtures/null-access/handler.ts", "export const a = users.find()!.name;\n")
    write(
        evals / "fixtures/captured/github/getsentry/sentry/src/api.py",
        "def delete(): pass\n",
    )
    write(evals / "fixtures/captured/github/getsentry/junior/LICENSE", "MIT\n")
    write(evals / "shared/context/notes.md", "context\n")
    write(evals / "code-review/null-access.json", scenario(["fixtures/null-access/handler.ts"]))
    write(
        evals / "code-review/captured.json",
        scenario(
            ["fixtures/captured/github/getsentry/sentry/src/api.py", "shared/context/notes.md"],
            supporting_files=["fixtures/captured/github/getsentry/junior/LICENSE"],
        ),
    )
    write(evals / "security-review/authz.json", scenario(["fixtures/null-access/handler.ts"]))
    candidate = {"id": "f1", "severity": "critical", "title": "t", "description": "d"}
    write(
        evals / "verification/keep.json",
        json.dumps(
            {
                "given": "keep it",
                "files": ["fixtures/null-access/handler.ts"],
                "candidate": candidate,
                "expect": {"verdict": "keep"},
            }
        ),
    )
    write(
        evals / "eval-precision.yaml",
        "skill: skills/precision.md\nruntime: claude\nmodel: anthropic/claude-x\nevals:\n"
        "  - name: ignores-style\n    given: style only\n"
        "    files: [fixtures/null-access/handler.ts]\n"
        "    should_find:\n      - finding: 'no bugs: zero findings expected'\n"
        "        required: false\n",
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return evals


def by_id(root: Path, **kwargs: object) -> dict[str, object]:
    return {c.id: c for c in load_suites([root], **kwargs).cases}  # type: ignore[arg-type]


# --- the static reader ----------------------------------------------------------------------


def test_tokenizer_reads_literals_and_skips_comments() -> None:
    tokens = tokenize("// x 'no'\nconst a = 120_000; /* 'no' */ const b = 'it\\'s'; `t${x}`")
    values = [t.value for t in tokens if t.kind in ("str", "num", "template")]
    assert values == [120_000, "it's", None]  # a template with ${} is not a literal
    assert tokens[0].line == 2


def test_eval_ts_literals_consts_and_wardens_own_names(warden: Path) -> None:
    declarations, warnings = read_eval_declarations(warden, environ={})
    code_review = next(d for d in declarations if d.category == "code-review")
    values = {key: (v.value, v.how) for key, v in code_review.values.items()}
    assert values == {
        "category": ("code-review", "literal"),
        "skill": ("../warden/src/builtin-skills/code-review/SKILL.md", "literal"),
        "runtime": ("pi", "DEFAULT_EVAL_RUNTIME"),
        "model": ("openrouter/anthropic/claude-sonnet-4.6", "defaultEvalModel()"),
    }
    # The harness of the describeEval block that runs these metas, kept apart.
    harness = {key: (v.value, v.how) for key, v in code_review.harness.items()}
    assert harness == {
        "maxTurns": (8, "literal"),
        "timeoutMs": (120_000, "const CODE_REVIEW_RUN_TIMEOUT_MS"),
    }
    assert code_review.harness["maxTurns"].location.line == 23
    assert [d.call for d in declarations] == [
        "discoverEvalScenarios",
        "discoverEvals",
        "discoverEvalScenarios",
        "discoverVerificationEvalScenarios",
    ]


def test_non_literal_values_are_warnings_naming_file_line_and_the_suite_yaml(warden: Path) -> None:
    _, warnings = read_eval_declarations(warden, environ={})
    messages = [(Path(str(w.location.path)).name, w.location.line, w.message) for w in warnings]
    assert [(name, line) for name, line, _ in messages] == [
        ("security-review.eval.ts", 5),
        ("security-review.eval.ts", 7),
        ("security-review.eval.ts", 10),
    ]
    skill, model, timeout = (m for _, _, m in messages)
    assert skill == (
        "discoverEvalScenarios: skill is `skillPath('security-review')`, which assay cannot "
        "work out without running it (`skillPath(...)` is a function call); set `skill:` in "
        "security-review/_suite.yaml instead"
    )
    assert "model is `pickModel()`, which assay cannot work out" in model
    assert "timeoutMs is `TIMEOUTS.review`," in timeout
    assert "(`TIMEOUTS.review` is a property)" in timeout
    assert "set `timeout_ms:` in security-review/_suite.yaml" in timeout


def test_warden_model_overrides_the_default(warden: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARDEN_MODEL", "anthropic/claude-opus-4")
    cases = by_id(warden)
    assert cases["code-review/null-access"].model == "anthropic/claude-opus-4"  # type: ignore[attr-defined]


# --- what each category gets ------------------------------------------------------------------


def test_categories_get_skill_runtime_model_and_harness_options_from_eval_ts(warden: Path) -> None:
    cases = by_id(warden)
    review = cases["code-review/null-access"]
    assert review.spec.skill == (  # type: ignore[attr-defined]
        warden.parent / "warden/src/builtin-skills/code-review/SKILL.md"
    )
    assert (review.runtime, review.model) == ("pi", "openrouter/anthropic/claude-sonnet-4.6")  # type: ignore[attr-defined]
    assert review.max_turns == 8  # type: ignore[attr-defined]
    verify = cases["security-review/keep"]
    assert verify.kind == "verify"  # type: ignore[attr-defined]
    assert verify.model == "openrouter/anthropic/claude-sonnet-4.6"  # type: ignore[attr-defined]
    assert verify.spec.candidate["severity"] == "high"  # type: ignore[attr-defined]
    # A non-literal skill: the category falls back to nothing, with the warning above.
    assert cases["security-review/authz"].spec.skill is None  # type: ignore[attr-defined]


def test_no_case_of_the_declared_categories_runs_without_its_skill(warden: Path) -> None:
    loaded = load_suites([warden])
    without = [c.id for c in loaded.cases if c.spec.skill is None]  # type: ignore[union-attr]
    assert without == ["security-review/authz"]
    no_skill = [w for w in loaded.warnings if "has no skill" in w.message]
    assert [str(w.location.path).endswith("security-review") for w in no_skill] == [True]


def test_a_category_with_no_skill_is_an_error_under_strict(warden: Path) -> None:
    with pytest.raises(ConfigErrors) as caught:
        load_suites([warden], strict=True)
    assert any("category 'security-review' has no skill" in e.message for e in caught.value.errors)


def test_suite_yaml_still_overrides_eval_ts_key_by_key(warden: Path) -> None:
    write(warden / "security-review/_suite.yaml", "skill: skills/precision.md\n")
    write(warden / "code-review/_suite.yaml", "model: anthropic/claude-y\nmax_turns: 3\n")
    cases = by_id(warden)
    review = cases["code-review/null-access"]
    assert (review.runtime, review.model, review.max_turns) == ("pi", "anthropic/claude-y", 3)  # type: ignore[attr-defined]
    assert review.spec.skill.name == "SKILL.md"  # type: ignore[attr-defined]
    # The security-review skill now comes from _suite.yaml, so the case id takes its name.
    assert cases["precision/authz"].spec.skill.name == "precision.md"  # type: ignore[attr-defined]
    loaded = load_suites([warden], strict=False)
    assert not any("has no skill" in w.message for w in loaded.warnings)


def test_e2e_harness_runtime_and_model_win_over_a_yaml_suites(warden: Path) -> None:
    case = by_id(warden)["precision/ignores-style"]
    assert (case.runtime, case.model) == ("pi", "openrouter/anthropic/claude-sonnet-4.6")  # type: ignore[attr-defined]


def test_e2e_harness_turns_and_timeout_reach_the_yaml_suites(warden: Path) -> None:
    # Warden's runner takes `maxTurns` / `timeoutMs` from the harness for every meta it runs.
    write(
        warden / "src/e2e.eval.ts", E2E_TS.replace("verbose: true", "maxTurns: 4, timeoutMs: 9_000")
    )
    case = by_id(warden)["precision/ignores-style"]
    assert (case.max_turns, case.timeout_s) == (4, 9.0)  # type: ignore[attr-defined]


def test_a_harness_model_and_runtime_beat_a_json_scenarios_own(warden: Path) -> None:
    # runner.ts: `options.model ?? meta.model`; the discover call's model does not.
    harness = "createWardenEvalHarness({ apiKey, model: 'anthropic/claude-h', runtime: 'claude' })"
    write(
        warden / "src/sec.eval.ts",
        "const evals = discoverEvalScenarios({ category: 'sec', skill: 'skills/precision.md',"
        f" model: 'anthropic/claude-d' }});\ndescribeEval('sec', {{ harness: {harness} }});\n",
    )
    own = {"model": "anthropic/claude-own", "runtime": "pi"}
    write(warden / "sec/own.json", scenario(["fixtures/null-access/handler.ts"], **own))
    write(warden / "code-review/own.json", scenario(["fixtures/null-access/handler.ts"], **own))
    cases = by_id(warden)
    assert (cases["precision/own"].model, cases["precision/own"].runtime) == (  # type: ignore[attr-defined]
        "anthropic/claude-h",
        "claude",
    )
    # A discover call's model and runtime are defaults: the scenario's own beat them.
    mine = cases["code-review/own"]
    assert (mine.model, mine.runtime) == ("anthropic/claude-own", "pi")  # type: ignore[attr-defined]
    # A `_suite.yaml` model is the category's default again, which the scenario's beats.
    write(warden / "sec/_suite.yaml", "model: anthropic/claude-s\n")
    cases = by_id(warden)
    assert (cases["precision/own"].model, cases["precision/own"].runtime) == (  # type: ignore[attr-defined]
        "anthropic/claude-own",
        "claude",
    )


def test_a_yaml_suite_without_runtime_or_model_gets_wardens_defaults(
    warden: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # EvalFileSchema: runtime DEFAULT_EVAL_RUNTIME (`pi`), model DEFAULT_EVAL_MODEL, a
    # constant: WARDEN_MODEL reaches YAML suites only through e2e.eval.ts's harness.
    (warden / "src/e2e.eval.ts").unlink()
    text = (warden / "eval-precision.yaml").read_text()
    write(
        warden / "eval-precision.yaml",
        text.replace("runtime: claude\nmodel: anthropic/claude-x\n", ""),
    )
    case = by_id(warden)["precision/ignores-style"]
    assert (case.runtime, case.model) == ("pi", "openrouter/anthropic/claude-sonnet-4.6")  # type: ignore[attr-defined]
    assert (case.max_turns, case.timeout_s) == (None, None)  # type: ignore[attr-defined]
    monkeypatch.setenv("WARDEN_MODEL", "anthropic/claude-w")
    case = by_id(warden)["precision/ignores-style"]
    assert case.model == "openrouter/anthropic/claude-sonnet-4.6"  # type: ignore[attr-defined]
    # Defaults, the weakest settings: the project's `[tool.assay]` model still beats them.
    write(warden / "assay.toml", 'model = "anthropic/claude-project"\n')
    case = by_id(warden)["precision/ignores-style"]
    assert (case.runtime, case.model) == ("pi", None)  # type: ignore[attr-defined]


def test_eval_ts_files_are_read_in_nested_directories_of_src(warden: Path) -> None:
    # vitest: `include: ['src/**/*.eval.ts']`, node_modules and dist excluded.
    nested = (
        "const evals = discoverEvalScenarios({ category: 'deep', skill: 'skills/precision.md' });\n"
    )
    write(warden / "src/suites/deep/deep.eval.ts", nested)
    write(warden / "src/node_modules/x/other.eval.ts", nested.replace("deep", "nm"))
    write(warden / "src/dist/built.eval.ts", nested.replace("deep", "dist"))
    write(warden / "deep/a.json", scenario(["fixtures/null-access/handler.ts"]))
    declarations, _ = read_eval_declarations(warden, environ={})
    assert "deep" in {d.category for d in declarations}
    assert not {"nm", "dist"} & {d.category for d in declarations}
    case = by_id(warden)["precision/a"]
    assert case.spec.skill.name == "precision.md"  # type: ignore[attr-defined]


def test_a_declared_category_named_like_a_fixture_tree_is_read(warden: Path) -> None:
    # `base/` holds rubric bases elsewhere; declared by an eval.ts it is a Warden category.
    declared = (
        "const evals = discoverEvalScenarios({ category: 'base', skill: 'skills/precision.md' });\n"
    )
    write(warden / "src/base.eval.ts", declared)
    write(warden / "base/b.json", scenario(["fixtures/null-access/handler.ts"]))
    write(warden / "code-review/base/nested.json", scenario(["fixtures/null-access/handler.ts"]))
    ids = set(by_id(warden))
    assert "precision/b" in ids
    assert not any(i.endswith("/nested") for i in ids)  # an undeclared `base/` is still skipped


def test_the_reviewer_sees_wardens_pull_request_not_the_given(warden: Path, tmp_path: Path) -> None:
    # Warden commits the fixtures as `add fixture: <name>` and its reviewer's PR context is
    # that commit's subject and body (buildLocalEventContext); only the judge sees `given`.
    case = by_id(warden)["code-review/null-access"]
    shown = Shown(diff_at="above", diff="", answer="")
    ask = ask_for(case, shown)  # type: ignore[arg-type]
    assert (ask.title, ask.body) == ("add fixture: null-access", "Analyzing changes in eval")
    assert "a bug" not in ask.text
    sandbox = build_sandbox(case, parent=tmp_path)  # type: ignore[arg-type]
    try:
        subject = subprocess.run(
            ["git", "log", "-1", "--format=%s%n%b", "eval"],
            cwd=sandbox.path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert subject.strip() == ask.title
    finally:
        remove_sandbox(sandbox)
    verify = ask_for(by_id(warden)["security-review/keep"], shown)  # type: ignore[arg-type]
    assert (verify.title, verify.body) == ("keep it", None)


# --- names and layout -------------------------------------------------------------------------


def test_ids_are_wardens_test_names_and_todays_ids_still_select(warden: Path) -> None:
    loaded = load_suites([warden])
    assert sorted(c.id for c in loaded.cases) == [
        "code-review/captured",
        "code-review/null-access",
        "precision/ignores-style",
        "security-review/authz",
        "security-review/keep",
    ]
    picked = select_cases(loaded.cases, ["verification/keep", "eval-precision/*"])
    assert [c.id for c in picked] == ["precision/ignores-style", "security-review/keep"]


def test_temp_repo_has_the_skill_dir_the_origin_from_files_and_parent_dir_paths(
    warden: Path, tmp_path: Path
) -> None:
    case = by_id(warden)["code-review/captured"]
    work = tmp_path / "work"
    work.mkdir()
    sandbox = build_sandbox(case, parent=work)  # type: ignore[arg-type]
    try:

        def git(*args: str) -> str:
            return subprocess.run(
                ["git", *args], cwd=sandbox.path, capture_output=True, text=True, check=True
            ).stdout

        assert git("ls-tree", "-r", "--name-only", "main").split() == [
            ".warden/skills/code-review/SKILL.md",
            ".warden/skills/code-review/references/checks.md",
            "captured/LICENSE",
        ]
        assert sorted(sandbox.changed_files) == ["captured/src/api.py", "context/notes.md"]
        # The supporting file names getsentry/junior, the files getsentry/sentry: origin
        # comes from `files` alone.
        assert git("remote", "get-url", "origin").strip() == (
            "https://github.com/getsentry/sentry.git"
        )
    finally:
        remove_sandbox(sandbox)


# --- keys -------------------------------------------------------------------------------------


def test_keys_are_warden_provider_or_provider_for_every_prefix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "WARDEN_OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    model = "openrouter/anthropic/claude-sonnet-4.6"
    assert warden_key_variables("openrouter") == ("WARDEN_OPENROUTER_API_KEY", "OPENROUTER_API_KEY")
    assert warden_key_variables("my-proxy") == ("WARDEN_MY_PROXY_API_KEY", "MY_PROXY_API_KEY")
    assert missing_credentials(model) is not None
    monkeypatch.setenv("WARDEN_OPENROUTER_API_KEY", "sk-or-test")
    assert missing_credentials(model) is None
    bridge_env()
    import os

    assert os.environ["OPENROUTER_API_KEY"] == "sk-or-test"


# --- validate ---------------------------------------------------------------------------------


def test_validate_prints_each_categorys_skill_model_runtime_and_where_from(
    cli,  # noqa: F811
    warden: Path,
) -> None:
    write(warden / "code-review/_suite.yaml", "model: anthropic/claude-y\n")
    code, out, err = cli("validate", str(warden))
    assert code == 0, err
    block = out.split("category settings", 1)[1]
    lines = [line.strip() for line in block.splitlines()[1:]]
    start = next(i for i, line in enumerate(lines) if line.endswith("/code-review"))
    assert lines[start + 2 : start + 6] == [
        "runtime    pi  [code-review.eval.ts:12 (DEFAULT_EVAL_RUNTIME)]",
        "model      anthropic/claude-y  [_suite.yaml]",
        "max_turns  8  [code-review.eval.ts:23]",
        "timeout_ms 120000  [code-review.eval.ts:15 (const CODE_REVIEW_RUN_TIMEOUT_MS)]",
    ]
    skill = lines[start + 1]
    assert skill.startswith("skill ") and skill.endswith(
        "warden/src/builtin-skills/code-review/SKILL.md  [code-review.eval.ts:11]"
    )
    code, out, _ = cli("validate", str(warden), "--json")
    rows = {Path(r["category"]).name: r["settings"] for r in json.loads(out)["categories"]}
    assert rows["verification"]["model"] == {
        "value": "openrouter/anthropic/claude-sonnet-4.6",
        "from": "verify.eval.ts:2 (defaultEvalModel())",
    }
    assert rows["security-review"]["skill"] == {"value": None, "from": "unset"}
