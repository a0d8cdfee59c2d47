"""A plugin's mistake is said in one line naming the plugin, never a traceback or a false gate.

Each test installs a small careless plugin the way `tests/plugins/` holds assay's own test
plugin (a module and its `*.dist-info/entry_points.txt`, found through PYTHONPATH) and
runs the real `assay run` / `assay validate` in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).parents[1] / "src"

AGENT = """
import asyncio, time
from assay.agents.base import AgentOutput
from assay.registry.runtimes import RuntimeSpec


class CarelessAgent:
    def __init__(self, options):
        pass

    async def run(self, ctx):
        name = ctx.case.id.rsplit("/", 1)[-1]
        if name == "exits":
            raise SystemExit(0)
        if name == "interrupts":
            raise KeyboardInterrupt
        if name == "blocks":
            time.sleep(2.5)  # a synchronous call on the event loop
        if name == "awaits":
            await asyncio.sleep(30)
        return AgentOutput(verdict="keep")


class NoRun:
    def __init__(self, options):
        pass


class Answers:
    def __init__(self, options):
        pass

    async def run(self, ctx):
        return {"verdict": "keep"}


class NotAsync:
    def __init__(self, options):
        pass

    def run(self, ctx):
        return AgentOutput(verdict="keep")


RUNTIME = RuntimeSpec("careless", CarelessAgent)
"""

GRADERS = """
import time


async def exits(ctx):
    if ctx.case.id.endswith("/grader-exits"):
        raise SystemExit(3)
    return True


async def blocks(ctx):
    if ctx.case.id.endswith("/grader-blocks"):
        time.sleep(2.5)
    return True


async def cannot_look(ctx):
    from assay.core.checks import Check

    status = "blocked" if ctx.case.id.endswith("/grader-blocked") else "pass"
    return [Check(id="looked", kind="grader", status=status, message="no access")]
"""


def _install(
    site: Path, dist: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]
) -> None:
    """A distribution as tests/plugins holds one: its modules and its dist-info."""
    info = site / f"{dist.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in names.items())
            for group, names in entry_points.items()
        )
    )
    for module, text in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(text))


def _careless(
    site: Path, group: str | None = None, names: dict[str, str] | None = None, **modules: str
) -> None:
    """`assay-careless`: the careless runtimes and graders, and `names` in `group` (their
    `modules` beside them)."""
    entry_points = {
        "assay.runtimes": {
            "careless": "careless_agent:RUNTIME",
            "no-run": "careless_agent:NoRun",
            "answers-dict": "careless_agent:Answers",
            "not-async": "careless_agent:NotAsync",
        },
        "assay.graders": {
            "exits": "careless_graders:exits",
            "blocks": "careless_graders:blocks",
            "cannot-look": "careless_graders:cannot_look",
        },
    }
    if group is not None:
        entry_points[group] = names or {}
    modules = {"careless_agent": AGENT, "careless_graders": GRADERS, **modules}
    _install(site, "assay-careless", entry_points, modules)


def _project(tmp_path: Path, *names: str, graders: tuple[str, ...] = ()) -> Path:
    """Warden verification scenarios `names` (each expecting `keep`), run by `careless`."""
    project = tmp_path / "project"
    evals = project / "evals"
    (evals / "fixtures").mkdir(parents=True)
    (evals / "fixtures" / "app.py").write_text("def handle(body):\n    return body\n")
    (evals / "skills").mkdir()
    (evals / "skills" / "security-review.md").write_text("Find security bugs.\n")
    category = evals / "security-review"
    category.mkdir()
    for name in names:
        scenario = {
            "given": f"{name} handler",
            "files": ["fixtures/app.py"],
            "candidate": {
                "id": name,
                "title": "unvalidated body",
                "description": "d",
                "severity": "high",
            },
            "expect": {"verdict": "keep"},
        }
        (category / f"{name}.json").write_text(json.dumps(scenario, indent=2))
    listed = ", ".join(json.dumps(g) for g in graders)
    (project / "pyproject.toml").write_text(
        f'[tool.assay]\npaths = ["evals"]\nruntime = "careless"\ngraders = [{listed}]\n'
    )
    return project


def _assay(project: Path, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _stderr(result: subprocess.CompletedProcess[str]) -> list[str]:
    """Its stderr's lines, but for the OS sandbox's warning (whether bwrap works here is the
    machine's, not the plugin's)."""
    return [line for line in result.stderr.splitlines() if not line.startswith("assay: WARNING")]


def _cases(report_dir: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((report_dir / "report.json").read_text())
    return {case["id"].rsplit("/", 1)[-1]: case for case in report["cases"]}


# --- renderers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "taken"),
    [
        ("report.json", "the file of renderer 'report'"),
        ("Summary.md", "the file of renderer 'summary'"),  # one file where names ignore case
        ("results.jsonl", "a name the report directory keeps for itself"),
        (".assay.lock", "a name the report directory keeps for itself"),
        ("cases", "a name the report directory keeps for itself"),
    ],
)
@pytest.mark.slow
def test_a_renderer_may_not_write_a_file_the_report_directory_has_already(
    tmp_path: Path, filename: str, taken: str
) -> None:
    site = tmp_path / "site"
    renderer = f"""
        from assay.report.renderers import Renderer
        RENDERER = Renderer("clobber", {filename!r}, lambda ctx: "the plugin's text\\n")
    """
    _careless(site, "assay.renderers", {"clobber": "clobber:RENDERER"}, clobber=renderer)
    project = _project(tmp_path, "keeps")
    result = _assay(project, site, "run", "--report-dir", "out")
    assert result.returncode == 2, result.stderr
    assert _stderr(result) == [
        "assay: error: entry point 'clobber' (= clobber:RENDERER) of distribution "
        f"'assay-careless' in group 'assay.renderers' writes {filename}, {taken}: a renderer "
        "must write a file of its own; uninstall the plugin, or have its file renamed"
    ]
    assert not (project / "out/results.jsonl").exists()  # refused before anything ran


@pytest.mark.slow
def test_two_plugins_writing_one_file_are_refused_naming_both(tmp_path: Path) -> None:
    site = tmp_path / "site"
    renderer = """
        from assay.report.renderers import Renderer
        A = Renderer("a-digest", "digest.txt", lambda ctx: "a\\n")
        B = Renderer("b-digest", "digest.txt", lambda ctx: "b\\n")
    """
    _careless(site, "assay.renderers", {"a-digest": "digests:A"}, digests=renderer)
    _install(site, "other-plugin", {"assay.renderers": {"b-digest": "digests:B"}}, {})
    result = _assay(_project(tmp_path, "keeps"), site, "run", "--report-dir", "out")
    assert result.returncode == 2, result.stderr
    assert _stderr(result) == [
        "assay: error: entry point 'b-digest' (= digests:B) of distribution 'other-plugin' in "
        "group 'assay.renderers' writes digest.txt, the file of entry point 'a-digest' "
        "(= digests:A) of distribution 'assay-careless' in group 'assay.renderers': a "
        "renderer must write a file of its own; uninstall the plugin, or have its file renamed"
    ]


@pytest.mark.slow
def test_a_broken_renderer_is_a_warning_and_the_gate_still_decides(tmp_path: Path) -> None:
    site = tmp_path / "site"
    renderers = """
        from assay.report.renderers import Renderer

        def _pieces(ctx):
            yield "fine so far\\n"
            yield b"then bytes"

        def _raises(ctx):
            raise RuntimeError("the template is missing")

        def _exits(ctx):
            raise SystemExit(1)

        BYTES = Renderer("bytes", "bytes.txt", lambda ctx: b"not text")
        NUMBER = Renderer("number", "number.txt", lambda ctx: 42)
        PIECES = Renderer("pieces", "pieces.txt", _pieces)
        RAISES = Renderer("raises", "raises.txt", _raises)
        EXITS = Renderer("exits", "exits.txt", _exits)
        FINE = Renderer("fine", "fine.txt", lambda ctx: "ok\\n")
    """
    names = ("bytes", "number", "pieces", "raises", "exits", "fine")
    entry_points = {name: f"renderers:{name.upper()}" for name in names}
    _careless(site, "assay.renderers", entry_points, renderers=renderers)
    project = _project(tmp_path, "keeps")
    result = _assay(project, site, "run", "--report-dir", "out")
    assert result.returncode == 0, result.stderr  # the gate passed: its verdict is the exit code
    assert "gate: PASS" in result.stdout
    origin = "entry point '{0}' (= renderers:{1}) of distribution 'assay-careless' in group "
    origin += "'assay.renderers' ({0}.txt)"
    said = {
        "bytes": "returned bytes: expected a str, an iterable of str, or None",
        "number": "returned int: expected a str, an iterable of str, or None",
        "pieces": "gave a piece of type bytes: expected a str, an iterable of str, or None",
        "raises": "failed: RuntimeError: the template is missing",
        "exits": "failed: SystemExit(1)",
    }
    assert _stderr(result) == [
        f"warning: {origin.format(name, name.upper())} {what}; {name}.txt was not written"
        for name, what in sorted(said.items())
    ]
    out = project / "out"
    assert not [name for name in said if (out / f"{name}.txt").exists()]
    assert (out / "fine.txt").read_text() == "ok\n"
    assert _cases(out)["keeps"]["status"] == "pass"


# --- runtimes and graders ----------------------------------------------------------------------


@pytest.mark.slow
def test_sys_exit_in_an_agent_or_a_grader_is_that_cases_error(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _careless(site)
    project = _project(tmp_path, "exits", "grader-exits", "keeps", graders=("exits",))
    result = _assay(project, site, "run", "--report-dir", "out")
    assert result.returncode == 1, result.stderr  # errors, not a passed gate
    cases = _cases(project / "out")
    assert cases["exits"]["status"] == "error"
    assert cases["exits"]["reason"] == (
        "the agent raised SystemExit(0) (traceback in "
        "cases/security-review/exits/attempt-1/traceback.txt)"
    )
    traceback = (project / "out/cases/security-review/exits/attempt-1/traceback.txt").read_text()
    assert "raise SystemExit(0)" in traceback
    assert cases["grader-exits"]["status"] == "error"
    assert cases["grader-exits"]["reason"] == "grader 'exits' raised SystemExit(3)"
    assert cases["keeps"]["status"] == "pass"
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_ctrl_c_in_an_agent_still_interrupts_the_run(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _careless(site)
    project = _project(tmp_path, "interrupts")
    result = _assay(project, site, "run", "--report-dir", "out")
    assert result.returncode == 130, result.stderr
    assert "continue with: " in result.stderr + result.stdout


@pytest.mark.slow
def test_an_agent_or_grader_that_blocks_the_loop_past_the_timeout_is_a_timeout(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    _careless(site)
    project = _project(tmp_path, "blocks", "awaits", "grader-blocks", graders=("blocks",))
    result = _assay(
        project, site, "run", "--report-dir", "out", "--timeout", "1", "--concurrency", "1"
    )
    assert result.returncode == 1, result.stderr
    cases = _cases(project / "out")
    blocked = (
        r"the event loop was blocked until it returned, 2\.[5-9]s into the attempt, so the "
        r"timeout could not stop it \(a runtime or grader must not block the loop: run "
        r"blocking work with asyncio\.to_thread\)"
    )
    assert re.fullmatch(f"timeout after 1s in agent: {blocked}", cases["blocks"]["reason"])
    assert re.fullmatch(f"timeout after 1s in grading: {blocked}", cases["grader-blocks"]["reason"])
    # An agent that awaits is stopped at the timeout itself, not after a grace period
    # meant for agents that stop themselves.
    assert cases["awaits"]["reason"] == "timeout after 1s in agent"
    assert cases["awaits"]["duration_s"] < 2.0
    assert {case["status"] for case in cases.values()} == {"error"}


@pytest.mark.parametrize(
    ("runtime", "reason"),
    [
        ("no-run", "runtime 'no-run': its agent (NoRun) has no `async def run(self, ctx)`"),
        (
            "answers-dict",
            "runtime 'answers-dict' returned dict: expected an AgentOutput (assay.agents.base)",
        ),
        (
            "not-async",
            "runtime 'not-async': run(ctx) returned AgentOutput at once, not an awaitable: "
            "write it as `async def run(self, ctx)`",
        ),
    ],
)
@pytest.mark.slow
def test_a_runtime_whose_agent_is_not_one_is_that_cases_error(
    tmp_path: Path, runtime: str, reason: str
) -> None:
    site = tmp_path / "site"
    _careless(site)
    project = _project(tmp_path, "keeps")
    result = _assay(project, site, "run", "--report-dir", "out", "--runtime", runtime)
    assert result.returncode == 1, result.stderr
    case = _cases(project / "out")["keeps"]
    assert (case["status"], case["reason"]) == ("error", reason)


# --- found before the run ----------------------------------------------------------------------

TOY_FORMAT = """
import os
from assay.suites.formats import SuiteFormat

def _recognises(doc):
    if os.environ.get("TOY_MISTAKE") == "recognise-raises":
        raise RuntimeError("recognises exploded")
    return isinstance(doc.data, dict) and "toy" in doc.data

def _load(doc, *, root, ctx):
    mistake = os.environ.get("TOY_MISTAKE")
    if mistake == "load-raises":
        raise ValueError("toy loader exploded")
    if mistake == "load-none":
        return None
    return ["not a case"]

FORMAT = SuiteFormat("toy", _load, _recognises)
"""


@pytest.mark.parametrize(
    ("mistake", "said"),
    [
        ("recognise-raises", "recognises(doc) raised RuntimeError: recognises exploded"),
        ("load-raises", "load(doc) raised ValueError: toy loader exploded"),
        ("load-none", "load(doc) returned NoneType: expected a list of assay.suites.case.Case"),
        ("not-cases", "load(doc) gave a str among its cases: expected a list of "),
    ],
)
@pytest.mark.slow
def test_a_format_plugins_mistake_is_an_error_at_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mistake: str, said: str
) -> None:
    site = tmp_path / "site"
    _careless(site, "assay.formats", {"toy": "toy:FORMAT"}, toy=TOY_FORMAT)
    project = _project(tmp_path, "keeps")
    (project / "evals/toys.json").write_text('{"toy": []}\n')
    monkeypatch.setenv("TOY_MISTAKE", mistake)
    result = _assay(project, site, "validate")
    assert result.returncode == 2, result.stderr
    origin = (
        "entry point 'toy' (= toy:FORMAT) of distribution 'assay-careless' in group 'assay.formats'"
    )
    assert f"evals/toys.json: {origin}: {said}" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_grader_module_that_breaks_on_import_is_named_by_validate_and_run(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    _careless(site)
    project = _project(tmp_path, "keeps", graders=("broken_graders:check",))
    (project / "broken_graders.py").write_text("1 / 0\n")
    said = (
        "pyproject.toml:4:1: grader 'broken_graders:check': importing broken_graders raised "
        "ZeroDivisionError: division by zero"
    )
    for command in (["validate"], ["run", "--report-dir", "out"]):
        result = _assay(project, site, *command)
        assert result.returncode == 2, result.stderr
        assert said in result.stdout + result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_grader_that_could_not_look_keeps_the_case_from_passing_and_merge_agrees(
    tmp_path: Path,
) -> None:
    """A user grader's `blocked` check is no pass (one set of failing check statuses, for
    grading and for `assay merge`, which refused such a run's shards before)."""
    site = tmp_path / "site"
    _careless(site)
    project = _project(tmp_path, "grader-blocked", "keeps", graders=("cannot-look",))
    for shard in ("1/2", "2/2"):
        result = _assay(project, site, "run", "--shard", shard, "--report-dir", f"out{shard[0]}")
        assert result.returncode in (0, 1), result.stderr
    merged = _assay(project, site, "merge", "out1", "out2", "-o", "merged/")
    assert merged.returncode == 1, merged.stderr  # the gate's verdict, not a refusal (2)
    cases = _cases(project / "merged")
    assert cases["grader-blocked"]["status"] == "fail"
    assert cases["grader-blocked"]["reason"] == "check looked failed: no access"
    assert cases["keeps"]["status"] == "pass"
