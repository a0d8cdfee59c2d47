"""No silent wrong answers: every run either does what was asked or says why not (#15)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from assay.cli import main
from assay.report.model import Report

REVIEW_AGENT = """\
import json, os
with open(os.environ["ASSAY_FINDINGS_FILE"], "w") as out:
    json.dump({"findings": []}, out)
"""


def warden_project(root: Path, *, runtime: str | None = "pi", cases: int = 1) -> Path:
    """A Warden YAML suite (with `runtime: pi` by default) and a command agent beside it."""
    (root / "skills").mkdir(parents=True)
    (root / "skills" / "security.md").write_text("# Security review\nFind injections.\n")
    (root / "fixtures").mkdir()
    (root / "fixtures" / "app.py").write_text("def find(db, n):\n    return db.execute(n)\n")
    (root / "agent.py").write_text(REVIEW_AGENT)
    header = "skill: skills/security.md\n" + (f"runtime: {runtime}\n" if runtime else "")
    evals = "".join(
        f"  - name: case-{n}\n"
        "    given: query built from user input\n"
        "    files:\n"
        "      - fixtures/app.py\n"
        "    should_find:\n"
        "      - finding: SQL injection\n"
        for n in range(cases)
    )
    (root / "security.yaml").write_text(header + "evals:\n" + evals)
    return root


def agent_command(root: Path) -> str:
    return f"{sys.executable} {root / 'agent.py'}"


def read_report(path: Path) -> Report:
    return Report.model_validate_json(path.read_text())


# -- (1) an explicit CLI choice beats a suite's default ------------------------------------


@pytest.mark.parametrize("via_env", [False, True])
def test_agent_command_beats_a_suite_runtime_default(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    via_env: bool,
) -> None:
    root = warden_project(tmp_path / "proj")
    argv = ["run", str(root), "--report-dir", str(root / "report")]
    if via_env:
        monkeypatch.setenv("ASSAY_AGENT_COMMAND", agent_command(root))
    else:
        argv += ["--agent-command", agent_command(root)]
    main(argv)
    capsys.readouterr()
    (case,) = read_report(root / "report" / "report.json").cases
    assert case.runtime == "command"


def test_runtime_builtin_with_an_agent_command_no_case_runs_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = warden_project(tmp_path / "proj")
    argv = ["run", str(root), "--runtime", "builtin", "--agent-command", agent_command(root)]
    assert main([*argv, "--report-dir", str(root / "report")]) == 2
    err = capsys.readouterr().err
    assert "--agent-command is never used: --runtime builtin runs every selected case " in err
    assert "(suites security)" in err
    assert not (root / "report").exists()


# -- (9) a missing agent binary is exit 2 before any sandbox is built ------------------------


def test_a_missing_agent_program_is_exit_2_before_any_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = warden_project(tmp_path / "proj", cases=5)
    work = tmp_path / "work"
    argv = ["run", str(root), "--agent-command", "no-such-agent-xyz {workspace}"]
    code = main([*argv, "--report-dir", str(root / "report"), "--work-root", str(work)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("no-such-agent-xyz") == 1 and "not found on PATH" in err
    assert "security/case-0" in err and "and 2 more" in err
    assert not work.exists() or not any(work.iterdir())


# -- (2) unknown providers are exit 2 with the known list and a did-you-mean ---------------


@pytest.mark.parametrize(
    "flags,shown",
    [
        (["--model", "antropic/claude-sonnet-4-6"], "--model unknown model provider 'antropic'"),
        (["--judge-model", "nope/x"], "--judge-model unknown model provider 'nope'"),
    ],
)
def test_an_unknown_provider_on_the_command_line_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], shown: str
) -> None:
    root = warden_project(tmp_path / "proj")
    assert main(["run", str(root), "--report-dir", str(root / "report"), *flags]) == 2
    err = capsys.readouterr().err
    assert shown in err and "known providers: " in err
    known = err.split("known providers: ", 1)[1].split(" (", 1)[0].split(", ")
    assert {"anthropic", "openai", "openrouter"} <= set(known)  # tests may register more
    assert ("did you mean anthropic/claude-sonnet-4-6?" in err) == ("antropic" in shown)
    assert len(err.strip().splitlines()) == 1 and not (root / "report").exists()


def test_an_unknown_provider_in_a_suite_is_a_located_validation_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = warden_project(tmp_path / "proj", runtime=None)
    suite = root / "security.yaml"
    suite.write_text("model: opnai/gpt-4o\n" + suite.read_text())
    assert main(["validate", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"{suite}:" in err and "unknown model provider 'opnai'" in err
    assert "did you mean openai/gpt-4o?" in err


def test_ci_names_the_key_of_the_provider_that_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_action_ci import TOKEN, ci_environment, make_workspace

    inputs = {"INPUT_ANTHROPIC_API_KEY": "sk-ant-set", "INPUT_JUDGE_MODEL": "openai/gpt-4o"}
    with ci_environment(tmp_path, monkeypatch, token=TOKEN, inputs=inputs) as ci:
        ci.workspace = make_workspace(tmp_path / "with-review", review=True)
        monkeypatch.chdir(ci.workspace)
        ci.environ["GITHUB_WORKSPACE"] = str(ci.workspace)
        ci.use_event("workflow_dispatch", "workflow_dispatch.json")
        code, out, _ = ci.run(monkeypatch, capsys)
        assert code == 2
        (error,) = [line for line in out.splitlines() if line.startswith("::error")]
        assert "set the openai-api-key input from a secret" in error
        assert "anthropic-api-key" not in error

        ci.environ["INPUT_JUDGE_MODEL"] = "antropic/claude-sonnet-4-6"
        code, out, err = ci.run(monkeypatch, capsys)
        assert code == 2 and "did you mean anthropic/claude-sonnet-4-6?" in out + err


# -- (3) a report with cases not run never passes the gate -----------------------------------


def test_merge_of_an_interrupted_shard_fails_the_gate_and_says_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_merge import make_case, make_report

    for index, name in ((1, "a"), (2, "b")):
        cases = [make_case(f"calc/{name}", line=index)]
        cases += [
            make_case(f"calc/{name}{n}", "skipped", line=10 * n + index, reason="interrupted")
            for n in range(1, 7)
        ]
        report = make_report(cases, shard=f"{index}/2", interrupted=True)
        # As an older assay wrote it: the stored gate says pass; merge decides afresh.
        report.summary.gate = "pass"
        (tmp_path / f"shard{index}.json").write_text(report.model_dump_json())
    out_file = tmp_path / "merged" / "report.json"
    code = main(
        ["merge", str(tmp_path / "shard1.json"), str(tmp_path / "shard2.json"), "-o", str(out_file)]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "gate: FAIL  incomplete: 12 of 14 case(s) not run (interrupted: 12)" in out
    merged = read_report(out_file)
    assert merged.summary.gate == "fail"
    first_line = out_file.with_name("summary.md").read_text().splitlines()[0]
    assert first_line.startswith("## ❌") and "(incomplete: 12 of 14 case(s) not run" in first_line


# -- (8) skips are counted in one gate line; --require-all makes them fail the gate ----------


@pytest.mark.parametrize("how", ["flag", "env", "config", None])
def test_skips_are_one_gate_line_and_require_all_fails_the_gate(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str | None,
) -> None:
    from tests.test_cli_run import project

    root = project(tmp_path, {"t": {}})
    warden_project(root / "review", cases=4)
    argv = ["run", str(root / "calc.json"), str(root / "review")]
    argv += ["--report-dir", str(root / "report")]
    argv += ["--agent-command", f"{sys.executable} {root / 'agent.py'} {{task_id}} {{workspace}}"]
    argv += ["--runtime", "builtin"]
    if how == "flag":
        argv.append("--require-all")
    elif how == "env":
        monkeypatch.setenv("ASSAY_REQUIRE_ALL", "1")
    elif how == "config":
        (root / "pyproject.toml").write_text("[tool.assay]\nrequire_all = true\n")
    code = main(argv)
    out = capsys.readouterr().out
    # `runtime: pi` with no model is Warden's default model, an OpenRouter one.
    reason = "no credentials for openrouter/anthropic/claude-sonnet-4.6: set OPENROUTER_API_KEY"
    assert out.count(reason) == 2  # the first SKIP line and the gate line, not four copies
    (gate,) = [line for line in out.splitlines() if line.startswith("gate:")]
    assert f"4 of 5 case(s) skipped ({reason}: 4)" in gate
    if how is None:
        assert code == 0 and gate.startswith("gate: PASS")
    else:
        assert code == 1 and gate.startswith("gate: FAIL") and "--require-all is set" in gate
        assert read_report(root / "report" / "report.json").run.require_all


# -- (4) --timeout bounds the whole attempt and says which part ran out ----------------------


@pytest.mark.slow
def test_a_judge_that_never_answers_is_bounded_by_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from tests.fakes import anthropic_api as fakes

    root = warden_project(tmp_path / "proj", runtime=None)
    with fakes.FakeAnthropic(api_key="sk-ant-timeout") as server:
        server.slow_reply(60.0)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-timeout")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        started = time.monotonic()
        code = main(
            [
                "run",
                str(root),
                "--agent-command",
                agent_command(root),
                "--timeout",
                "1",
                "--judge-model",
                "anthropic/claude-sonnet-4-6",
                "--report-dir",
                str(root / "report"),
            ]
        )
        elapsed = time.monotonic() - started
    capsys.readouterr()
    assert code == 1 and elapsed < 20
    (case,) = read_report(root / "report" / "report.json").cases
    assert (case.status, case.reason) == ("error", "timeout after 1s in judge")


# -- (5) assay's own I/O failure: one line, exit 4, the streamed results stay resumable ------

LIMITED_RUN = """\
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))
from assay.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_a_write_failure_is_one_line_exit_4_and_the_run_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex
    import subprocess

    from tests.test_cli_run import project, result_lines, run_args

    root = project(tmp_path, {name: {} for name in "abcdef"})
    argv = run_args(root, "--concurrency", "1")
    done = subprocess.run(
        [sys.executable, "-c", LIMITED_RUN, *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 4, done.stderr
    # Besides the error, only the warning that this test runs without the OS sandbox.
    (line,) = [text for text in done.stderr.splitlines() if "WITHOUT an OS sandbox" not in text]
    assert line.startswith(f"assay: error: cannot write {root / 'report' / 'results.jsonl'}: ")
    assert "File too large" in line and "Traceback" not in done.stderr
    written = (root / "report" / "results.jsonl").read_bytes()
    assert 0 < written.count(b"\n") < 6 and not (root / "report" / "report.json").exists()

    command = line.split("continue with: ", 1)[1]
    words = shlex.split(command)
    assert words[:2] == ["assay", "run"] and words[-2:] == ["--resume", str(root / "report")]
    assert main(words[1:]) == 0
    capsys.readouterr()
    report = read_report(root / "report" / "report.json")
    assert [c.status for c in report.cases] == ["pass"] * 6
    assert len(result_lines(root / "report" / "results.jsonl")) == 6


# -- (6) --root; an eval-root error names the root and how to choose one -------------------


def warden_repo(tmp_path: Path) -> Path:
    """A repository whose Warden suites live in evals/ (their paths resolve against evals/)."""
    repo = tmp_path / "repo"
    warden_project(repo / "evals", runtime=None)
    return repo


def test_root_makes_validity_independent_of_how_the_suites_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = warden_repo(tmp_path)
    monkeypatch.chdir(repo)
    assert main(["validate", "evals"]) == 0
    capsys.readouterr()
    # From the repository root with no PATH, the eval root is the repository: say so.
    assert main(["validate"]) == 2
    err = capsys.readouterr().err
    assert f"not found under the eval root {repo} (the PATH given; choose another with " in err
    assert "--root DIR or `root` under [tool.assay] in pyproject.toml" in err
    for argv in (["validate", "--root", "evals"], ["list", "--root", "evals"]):
        assert main(argv) == 0, capsys.readouterr().err
    assert "security/case-0" in capsys.readouterr().out
    assert main(["validate", "--root", "evals", str(repo / "evals" / "security.yaml")]) == 0
    assert main(["validate", "--root", "nowhere"]) == 2
    assert "--root nowhere: not a directory" in capsys.readouterr().err


def test_with_a_configured_root_validity_does_not_depend_on_the_working_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = warden_repo(tmp_path)
    (repo / "pyproject.toml").write_text('[tool.assay]\nroot = "evals"\n')
    for cwd, argv in [
        (repo, ["validate", "evals"]),
        (repo, ["validate", "evals/security.yaml"]),
        (repo / "evals", ["validate", "."]),
        (repo / "evals" / "fixtures", ["validate", ".."]),
        (tmp_path, ["validate", str(repo / "evals")]),
    ]:
        monkeypatch.chdir(cwd)
        assert main(argv) == 0, (cwd, argv, capsys.readouterr().err)
    (repo / "evals" / "security.yaml").write_text(
        (repo / "evals" / "security.yaml").read_text().replace("fixtures/app.py", "gone.py")
    )
    monkeypatch.chdir(repo)
    assert main(["validate", "evals"]) == 2
    err = capsys.readouterr().err
    assert f"set by `root` in {repo / 'pyproject.toml'}" in err


def test_run_takes_root_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = warden_repo(tmp_path)
    monkeypatch.chdir(repo)
    code = main(["run", "--root", "evals", "--agent-command", agent_command(repo / "evals")])
    capsys.readouterr()
    assert code == 1  # loaded (not 2): the one case is skipped for want of a judge key
    assert read_report(repo / "assay-report" / "report.json").cases[0].status == "skipped"


# -- (7) a tool call with schema-invalid input says so -------------------------------------


def test_an_invalid_submission_is_named_not_called_plain_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assay
    from assay.models import retry
    from assay.options import RunOptions
    from tests.fakes import anthropic_api as fakes
    from tests.test_runner_model import review_case

    invalid = {"findings": [{"severity": "urgent", "title": "x"}]}
    answers = iter(
        [
            fakes.tool_use_reply("submit_findings", invalid),
            fakes.text_reply("Sorry, here is my review in prose."),
            fakes.text_reply("LGTM."),
        ]
    )

    async def no_sleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(retry, "sleep", no_sleep)
    with fakes.FakeAnthropic(api_key="sk-ant-loop", responder=lambda body: next(answers)) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loop")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        options = RunOptions(report_dir=tmp_path / "report", judge_model="anthropic/claude-x")
        report = assay.run(options, cases=[review_case(tmp_path, "c", "null access")])
    (case,) = report.cases
    assert case.status == "error"
    assert case.reason.startswith(
        "the model never made a valid submit_findings call: its submit_findings input was invalid ("
    )
    assert (
        "findings.0.severity: Input " in case.reason and "location: Field required" in case.reason
    )


# -- (9) CLI polish ---------------------------------------------------------------------------


def test_unknown_keys_get_a_did_you_mean_and_config_problems_come_in_one_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = warden_project(tmp_path / "proj", runtime=None)
    suite = root / "security.yaml"
    suite.write_text(suite.read_text().replace("    files:", "    fiels: [x]\n    files:", 1))
    (root / "pyproject.toml").write_text("[tool.assay]\nthreshhold = 0.5\nconcurrency = 0\n")
    assert main(["validate", str(root)]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'fiels' in evals[0] (did you mean 'files'?)" in err
    assert "warning: unknown configuration key 'threshhold' (did you mean 'threshold'?)" in err
    assert "concurrency: Input should be greater than or equal to 1" in err


def test_every_option_and_argument_has_help_text() -> None:
    import argparse

    from assay.cli import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    missing = [
        f"{name} {action.option_strings or action.dest}"
        for name, sub in commands.choices.items()
        for action in sub._actions
        if action.dest != "help" and not (action.help or "").strip()
    ]
    assert missing == []
    ci_help = commands.choices["ci"].format_help()
    assert "max-errors" in ci_help and "GITHUB_EVENT_PATH" in ci_help and "ASSAY_" in ci_help


@pytest.mark.parametrize(
    "argv,hint",
    [
        (["run", "--repaet", "2"], "unrecognized arguments: --repaet (did you mean --repeat?)"),
        (["validate", "--stirct"], "(did you mean --strict?)"),
        (["run", "--agent-comand=x"], "(did you mean --agent-command?)"),
        (["rnu"], "invalid choice: 'rnu'"),
    ],
)
def test_a_mistyped_option_or_command_gets_a_did_you_mean(
    capsys: pytest.CaptureFixture[str], argv: list[str], hint: str
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert hint in err
    if argv == ["rnu"]:
        assert "did you mean 'run'?" in err


def _summary_report(gate: str) -> Report:
    from assay.report.model import RunInfo, Summary

    summary = Summary(
        total=1, passed=1, failed=0, errors=0, skipped=0, score=1.0, gate=gate, gate_reason="x"
    )
    run = RunInfo(id="r", started_at="t", assay_version="0", threshold=0.75)
    return Report(run=run, summary=summary, cases=[])


@pytest.mark.parametrize("gate,colour", [("pass", "32"), ("fail", "31")])
def test_the_gate_line_is_coloured_on_a_terminal_and_plain_elsewhere(
    monkeypatch: pytest.MonkeyPatch, gate: str, colour: str
) -> None:
    import io

    from assay.report.terminal import print_summary

    monkeypatch.delenv("NO_COLOR", raising=False)
    report = _summary_report(gate)
    plain = io.StringIO()
    print_summary(report, report_dir="r", stream=plain)
    assert "\x1b[" not in plain.getvalue()
    assert f"gate: {gate.upper()}  x" in plain.getvalue()
    coloured = io.StringIO()
    print_summary(report, report_dir="r", stream=coloured, colour=True)
    text = coloured.getvalue()
    assert f"\x1b[1;{colour}m{gate.upper()}\x1b[0m" in text
    monkeypatch.setenv("NO_COLOR", "1")
    quiet = io.StringIO()
    print_summary(report, report_dir="r", stream=quiet, colour=True)
    assert "\x1b[1;3" not in quiet.getvalue()


def test_live_progress_lines_do_not_wrap_at_80_columns() -> None:
    import io
    import re

    from assay.report.model import CaseResult, Source
    from assay.report.terminal import LiveProgress

    out = io.StringIO()
    live = LiveProgress(out, width=80)
    names = [f"security-review/a-rather-long-case-name-number-{n}" for n in range(6)]
    live.run_started(len(names))
    for name in names:
        live.case_started(name, "anthropic/claude-sonnet-4-6")
    failed = CaseResult(
        id=names[0],
        suite="security-review",
        kind="review",
        source=Source(path="evals/x.yaml", line=1),
        model="anthropic/claude-sonnet-4-6",
        runtime="builtin",
        status="fail",
        score=0.0,
        reason="missed: " + "the SQL injection through the name parameter " * 5,
    )
    live.case_finished(failed)
    live.run_finished()
    visible = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    lines = [line for chunk in visible.split("\r") for line in chunk.split("\n")]
    # Cut with an ellipsis on their one line, not wrapped onto the next.
    fail_line = next(line for line in lines if line.startswith("FAIL  security-review/"))
    running = [line for line in lines if line.startswith("running: ")]
    assert fail_line.rstrip().endswith("…") and len(fail_line) <= 80
    assert running and all(line.rstrip().endswith("…") and len(line) <= 80 for line in running)


@pytest.mark.slow
def test_a_tasks_verification_commands_keep_their_own_limit_past_the_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PVYai's rule (docs/pvyai.md, Timeouts): `--timeout` bounds a task's agent; its
    verification commands keep their own limit, so one that runs past it still counts."""
    from tests.test_cli_run import project, run_args

    root = project(tmp_path, {"t": {}})
    suite = root / "calc.json"
    document = json.loads(suite.read_text())
    command = document["tasks"][0]["verificationCommands"][0]
    command["command"] = [sys.executable, "-c", "import time; time.sleep(2.5)"]
    suite.write_text(json.dumps(document))
    code = main(run_args(root, "--timeout", "1"))
    capsys.readouterr()
    (case,) = read_report(root / "report" / "report.json").cases
    assert "timeout" not in (case.reason or "")
    assert {check.id: check.status for check in case.checks}[command["id"]] == "pass"
    assert code == (0 if case.status == "pass" else 1)
