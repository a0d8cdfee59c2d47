"""The project's own Python graders run confined, never in assay's process (issue 34.2).

A `module:attribute` grader named by `[tool.assay] graders` is a file of the repository a
pull request changes. Under `assay ci` it must not see the job's tokens nor the model key,
nor write `$GITHUB_ENV`; a well-behaved one gives the verdict it gave in-process; one that
crashes, hangs or answers garbage makes its case `error`, never a pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from assay.isolation.bwrap import probe_bwrap
from tests.action.test_ci import MODEL_KEY, TOKEN, ci_environment

pytestmark = pytest.mark.slow  # real processes and servers per test: seconds each

BWRAP, WHY_NOT = probe_bwrap()
needs_bwrap = pytest.mark.skipif(
    BWRAP is None,
    reason=f"no working bwrap ({WHY_NOT}): sudo apt-get install bubblewrap",
)
SRC = Path(__file__).parents[2] / "src"

RUNTIME_TOKEN = "actions-runtime-" + "r" * 24
ID_TOKEN = "id-token-request-" + "i" * 24
GITHUB_TOKEN = "ghs_" + "G1thub" * 6
SECRETS = {
    "GITHUB_TOKEN": GITHUB_TOKEN,
    "INPUT_GITHUB_TOKEN": TOKEN,
    "ACTIONS_RUNTIME_TOKEN": RUNTIME_TOKEN,
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": ID_TOKEN,
    "ANTHROPIC_API_KEY": MODEL_KEY,
}

EVIL_GRADER = """
import hashlib, json, os, pathlib

from assay.core.checks import Check

NAMES = {names!r}
GITHUB_ENV = {github_env!r}


def _digests(text):
    # Digests, not values: whatever assay masks in its reports, a match here is a leak.
    return sorted(hashlib.sha256(part.encode()).hexdigest() for part in text.split("\\0") if part)


def _look():
    seen = {{name: hashlib.sha256(os.environ[name].encode()).hexdigest()
             for name in NAMES if name in os.environ}}
    for pid in {{os.getpid(), os.getppid(), 1}}:
        try:
            seen[f"/proc/{{pid}}/environ"] = _digests(
                pathlib.Path(f"/proc/{{pid}}/environ").read_text(errors="replace")
                .replace("=", "\\0")
            )
        except OSError as exc:
            seen[f"/proc/{{pid}}/environ"] = type(exc).__name__
    for path in {{GITHUB_ENV, os.environ.get("GITHUB_ENV", GITHUB_ENV)}}:
        try:
            with open(path, "a") as stream:
                stream.write("PWNED=1\\n")
            seen[f"wrote {{path}}"] = True
        except OSError as exc:
            seen[f"wrote {{path}}"] = type(exc).__name__
    return seen


AT_IMPORT = _look()


async def g(ctx):
    seen = {{"at_import": AT_IMPORT, "at_grade": _look()}}
    ctx.artifacts_dir.mkdir(parents=True, exist_ok=True)
    (ctx.artifacts_dir / "seen.json").write_text(json.dumps(seen))
    return Check(id="evil", kind="grader", status="pass", message="looked")
"""


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


@needs_bwrap
def test_a_pr_grader_under_assay_ci_sees_no_token_and_cannot_write_github_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    github_env = tmp_path / "runner-files" / "set_env_1234"
    github_env.parent.mkdir()
    github_env.write_text("KEPT=1\n")
    with ci_environment(tmp_path, monkeypatch, token=TOKEN) as ci:
        ci.environ.update(SECRETS, GITHUB_ENV=str(github_env), ASSAY_ISOLATION="bwrap")
        (ci.workspace / "pyproject.toml").write_text(
            '[tool.assay]\npaths = ["evals"]\ngraders = ["evilgrader:g"]\n'
        )
        (ci.workspace / "evilgrader.py").write_text(
            EVIL_GRADER.format(names=sorted(SECRETS), github_env=str(github_env))
        )
        ci.use_event("push", "push.json")
        _, out, err = ci.run(monkeypatch, capsys)
        seen_files = sorted(ci.root.rglob("seen.json"))
    # The grader ran (else nothing below would mean anything) ...
    assert len(seen_files) == 2, out + err  # one per case
    leaked = {_digest(value): name for name, value in SECRETS.items()}
    for path in seen_files:
        seen: dict[str, Any] = json.loads(path.read_text())
        for when in ("at_import", "at_grade"):
            looked = seen[when]
            # ... and of the job's variables it saw none, not even their names ...
            assert not set(SECRETS) & set(looked), looked
            # ... nor any value through another process's environment ...
            found = [
                leaked[digest]
                for key, digests in looked.items()
                if key.startswith("/proc/") and isinstance(digests, list)
                for digest in digests
                if digest in leaked
            ]
            assert found == [], when
            # ... and could not write $GITHUB_ENV.
            assert looked[f"wrote {github_env}"] != True, looked  # noqa: E712
    assert github_env.read_text() == "KEPT=1\n"
    report = json.loads(next(ci.root.rglob("report.json")).read_text())
    checks = [check for case in report["cases"] for check in case["checks"]]
    assert [c["status"] for c in checks if c["id"] == "evil"] == ["pass", "pass"]


# --- through `assay run` ------------------------------------------------------------------------

GRADERS = """
import asyncio, os, sys
from assay.core.checks import Check


async def says_verdict(ctx):
    kept = ctx.output.verdict == "keep"
    return [
        Check(id="verdict-given", kind="grader", status="pass" if kept else "fail",
              message=f"{ctx.case.id}: {ctx.output.verdict} in {ctx.sandbox.path.name}"),
        Check(id="attempt", kind="grader", status="pass", message=str(ctx.attempt)),
    ]


async def raises(ctx):
    raise RuntimeError("grader broke")


async def dies(ctx):
    print("about to die", file=sys.stderr)
    os._exit(3)


async def hangs(ctx):
    await asyncio.sleep(60)


async def garbage(ctx):
    for fd in range(1, 20):  # whichever descriptor the answer goes to
        try:
            os.write(fd, b"not json at all")
        except OSError:
            pass
    os._exit(0)


async def forged(ctx):
    for fd in range(1, 20):
        try:
            os.write(fd, b'{"checks": [{"id": 1, "status": "sure"}]}')
        except OSError:
            pass
    os._exit(0)


async def prints(ctx):
    print('{"checks": []}')  # a print is no answer: it goes to stderr
    return True
"""


def _project(tmp_path: Path, graders: tuple[str, ...]) -> Path:
    project = tmp_path / "project"
    evals = project / "evals"
    (evals / "fixtures").mkdir(parents=True)
    (evals / "fixtures" / "app.py").write_text("def handle(body):\n    return body\n")
    (evals / "skills").mkdir()
    (evals / "skills" / "security-review.md").write_text("Find security bugs.\n")
    category = evals / "security-review"
    category.mkdir()
    scenario = {
        "given": "a handler",
        "files": ["fixtures/app.py"],
        "candidate": {
            "id": "c",
            "title": "unvalidated body",
            "description": "d",
            "severity": "high",
        },
        "expect": {"verdict": "keep"},
    }
    (category / "keeps.json").write_text(json.dumps(scenario, indent=2))
    (project / "project_graders.py").write_text(textwrap.dedent(GRADERS))
    agent = project / "agent.py"
    agent.write_text('print(\'{"verdict": "keep"}\')\n')
    listed = ", ".join(json.dumps(f"project_graders:{g}") for g in graders)
    (project / "pyproject.toml").write_text(
        f'[tool.assay]\npaths = ["evals"]\nruntime = "command"\n'
        f'agent_command = "{sys.executable} {agent}"\ngraders = [{listed}]\n'
    )
    return project


def _assay(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _case(project: Path, out: str) -> dict[str, Any]:
    report = json.loads((project / out / "report.json").read_text())
    (case,) = report["cases"]
    return case  # type: ignore[no-any-return]


@needs_bwrap
def test_a_well_behaved_project_grader_gives_the_same_checks_confined_and_in_process(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, ("says_verdict", "prints"))
    confined = _assay(project, "run", "--report-dir", "confined", "--isolation", "bwrap")
    in_process = _assay(project, "run", "--report-dir", "inproc", "--isolation", "none")
    assert confined.returncode == 0, confined.stderr
    assert in_process.returncode == 0, in_process.stderr
    assert "graders run inside assay's process" in in_process.stderr
    checks = {
        out: [
            {key: check[key] for key in ("id", "kind", "status", "message")}
            for check in _case(project, out)["checks"]
        ]
        for out in ("confined", "inproc")
    }
    mine = [check for check in checks["confined"] if check["kind"] == "grader"]
    assert mine[0]["status"] == "pass"
    assert mine[0]["message"].startswith("security-review/keeps: keep in ")
    assert [c["id"] for c in mine] == ["verdict-given", "attempt", "project_graders:prints"]
    assert checks["confined"] == checks["inproc"]
    assert _case(project, "confined")["status"] == "pass"


@needs_bwrap
@pytest.mark.parametrize(
    ("grader", "reason"),
    [
        ("raises", "grader 'project_graders:raises' raised RuntimeError: grader broke"),
        ("dies", "grader 'project_graders:dies' (confined) crashed (exit code 3): about to die"),
        ("garbage", "grader 'project_graders:garbage' (confined) gave an invalid answer ("),
        ("forged", "grader 'project_graders:forged' (confined) gave an invalid answer ("),
    ],
)
def test_a_project_grader_that_breaks_is_its_cases_error(
    tmp_path: Path, grader: str, reason: str
) -> None:
    project = _project(tmp_path, (grader,))
    done = _assay(project, "run", "--report-dir", "out", "--isolation", "bwrap")
    assert done.returncode == 1, done.stderr
    case = _case(project, "out")
    assert case["status"] == "error"
    assert case["reason"].startswith(reason), case["reason"]
    assert "Traceback" not in done.stderr


@needs_bwrap
def test_a_project_grader_that_hangs_is_stopped_and_its_case_is_an_error(tmp_path: Path) -> None:
    project = _project(tmp_path, ("hangs",))
    done = _assay(project, "run", "--report-dir", "out", "--isolation", "bwrap", "--timeout", "4")
    assert done.returncode == 1, done.stderr
    case = _case(project, "out")
    assert case["status"] == "error"
    assert "timeout" in case["reason"] or "did not answer within" in case["reason"]
    assert case["duration_s"] < 30


@needs_bwrap
def test_validate_imports_a_project_grader_confined(tmp_path: Path) -> None:
    """`assay validate` names a broken grader module as before, but imports it in a child
    that sees no credential of assay's environment."""
    project = _project(tmp_path, ("says_verdict",))
    (project / "project_graders.py").write_text(
        "import os\nraise RuntimeError(sorted(k for k in os.environ if k.endswith('_TOKEN')))\n"
    )
    env_token = {"GITHUB_TOKEN": GITHUB_TOKEN}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())"]
        + ["validate"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(SRC), **env_token},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert (
        "pyproject.toml:5:1: grader 'project_graders:says_verdict': importing project_graders "
        "raised RuntimeError: []"
    ) in done.stdout + done.stderr


# --- the child's context ------------------------------------------------------------------------


def _contexts(tmp_path: Path) -> list[Any]:
    from assay.core.usage import Usage
    from assay.grading import GraderContext
    from assay.subject import AgentOutput
    from assay.suites.case import (
        Case,
        ContextChecks,
        Expectation,
        FixtureFile,
        ReviewSpec,
        RubricSpec,
        TaskSpec,
        VerificationCommand,
        VerifySpec,
    )
    from assay.workspace import Sandbox

    files = (FixtureFile(tmp_path / "a.py", "src/a.py"),)
    specs = [
        ReviewSpec(
            given="g",
            files=files,
            skill=tmp_path / "skill.md",
            should_find=(Expectation("null deref", "high"), Expectation("x", None, False)),
            should_not_find=("style",),
            repository="acme/widgets",
            notes={"k": [1, "two"]},
        ),
        VerifySpec(
            given="g",
            files=files,
            candidate={"id": "c", "title": "t", "nested": {"n": 1}},
            expect_verdict="reject",
        ),
        RubricSpec(rubric="be kind", diff=tmp_path / "d.diff", base=None, cassandra_id=""),
        TaskSpec(
            prompt="p",
            workspace=tmp_path / "ws",
            commands=(VerificationCommand("c", "n", ("python", "-c", "1"), 5.0),),
            expected_changed_files=("a.py",),
            context=ContextChecks(required_files=("b.py",)),
            required_trace_events=("tool:x",),
        ),
    ]
    kinds = ["review", "verify", "rubric", "task"]
    contexts = []
    for kind, spec in zip(kinds, specs, strict=True):
        case = Case(
            id=f"s/{kind}",
            suite="s",
            name=kind,
            kind=kind,  # type: ignore[arg-type]
            format="review-yaml",
            source_path=tmp_path / "suite.yaml",
            source_line=3,
            spec=spec,
            graders=("m:g",),
            timeout_s=9.0,
        )
        output = AgentOutput(
            findings=[{"title": "t", "location": {"path": "a.py", "startLine": 2}}],
            verdict="keep",
            review_text="r",
            trace_events=["tool:x"],
            usage=Usage(input_tokens=3, output_tokens=4, cost_usd=0.5),
            exit_code=0,
        )
        sandbox = Sandbox(
            path=tmp_path / "box" / "repo",
            kind=kind,  # type: ignore[arg-type]
            base_commit="a" * 40,
            head_commit="b" * 40,
            diff="diff --git a/x b/x\n",
            changed_files=("x",),
            repository=None,
        )
        contexts.append(GraderContext(case, output, sandbox, "m/x", 1, tmp_path / "art"))
    return contexts


def test_the_child_gets_the_same_typed_context_for_every_kind(tmp_path: Path) -> None:
    from assay.grading.grader_child import context_from_json, context_to_json

    for ctx in _contexts(tmp_path):
        wire = json.loads(json.dumps(context_to_json(ctx)))
        again = context_from_json(wire)
        assert again == ctx
        assert type(again.case.spec) is type(ctx.case.spec)
        assert again.case.spec.__dict__ == ctx.case.spec.__dict__  # notes too (compare=False)


@needs_bwrap
def test_the_plugin_projects_graders_give_the_same_verdicts_confined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/registry/test_plugins.py's run (with the OS sandbox there): its `_suite.yaml` names an
    installed package's grader by `module:Class`, which runs confined and still imports."""
    from tests.registry import test_plugins

    monkeypatch.setenv("ASSAY_ISOLATION", "bwrap")
    project = test_plugins._project(tmp_path)
    result = test_plugins._assay(project, "run", "--report-dir", "out")
    assert result.returncode == 1, result.stderr
    assert "WITHOUT an OS sandbox" not in result.stderr
    report = json.loads((project / "out/report.json").read_text())
    cases = {case["id"].split("/")[-1]: case for case in report["cases"]}
    assert {name: case["status"] for name, case in cases.items()} == {
        "bogus": "pass",
        "clean": "pass",
        "todo": "fail",
    }
    checks = {check["id"]: check for check in cases["todo"]["checks"]}
    assert checks["no_todo_comments"]["message"] == "TODO in todo.py"
    assert checks["assay_testplugin.graders:VerdictGiven"]["status"] == "pass"
