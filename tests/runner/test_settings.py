"""How a run's options are decided and checked (runner/settings.py), the same for both doors.

Per option, the first with a value wins: given > ASSAY_* > `[tool.assay]` > the suite >
the default. `assay.run()` refuses what `assay run` refuses, with the same message, and a
dry run through the library runs no agent.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.cli import main
from assay.errors import ConfigError
from assay.options import DEFAULT_TIMEOUT_S, RunOptions, RunSettings
from assay.runner.plan import plan_runs
from assay.runner.settings import DEFAULT, GIVEN, resolve_settings
from assay.suites.config import AssayConfig
from tests.cli.test_run import project
from tests.runner.test_e2e import agent_argv
from tests.upstream.test_warden_tree import by_id, warden  # noqa: F401 - the fixture

CONFIG = AssayConfig(
    path=Path("/proj/pyproject.toml"),
    threshold=0.5,
    max_errors=3,
    concurrency=4,
    timeout=90.0,
    require_all=True,
    report_dir=Path("/proj/configured"),
    isolation="bwrap",
    agent_network=False,
    pass_env=("FROM_CONFIG",),
)


def settings(options: RunOptions, environ: dict[str, str], config: Any = CONFIG) -> RunSettings:
    return resolve_settings(options, config=config, environ=environ)


# -- precedence ---------------------------------------------------------------------------


def test_given_beats_the_environment_beats_the_config_beats_the_default() -> None:
    decided = settings(
        RunOptions(threshold=0.9, require_all=False, pass_env=("GIVEN",)),
        {
            "ASSAY_THRESHOLD": "0.8",
            "ASSAY_MAX_ERRORS": "7",
            "ASSAY_AGENT_NETWORK": "on",
            "ASSAY_PASS_ENV": "FROM_ENV,OTHER",
        },
    )
    assert (decided.threshold, decided.sources["threshold"]) == (0.9, GIVEN)
    assert decided.require_all is False  # given False beats the config's true
    assert (decided.max_errors, decided.sources["max_errors"]) == (7, "ASSAY_MAX_ERRORS")
    assert decided.agent_network is True
    assert (decided.concurrency, decided.sources["concurrency"]) == (4, str(CONFIG.path))
    assert decided.report_dir == Path("/proj/configured")
    assert decided.isolation == "bwrap" and decided.command_network is True
    assert (decided.repeat, decided.sources["repeat"]) == (1, DEFAULT)
    # pass-env only ever lets more through: every source's names together.
    assert decided.pass_env == ("FROM_CONFIG", "GIVEN", "FROM_ENV", "OTHER")


def test_without_config_or_environment_the_defaults_apply() -> None:
    decided = settings(RunOptions(), {}, config=None)
    default = RunSettings()
    for name in ("concurrency", "repeat", "timeout_s", "threshold", "max_errors", "report_dir"):
        assert getattr(decided, name) == getattr(default, name), name
        assert decided.sources[name] == DEFAULT
    assert (decided.isolation, decided.require_all, decided.dry_run) == ("auto", False, False)


def test_in_github_actions_the_config_file_cannot_turn_the_os_sandbox_off() -> None:
    # The PR writes pyproject.toml: there `isolation = "none"` would let its own agent and
    # graders run unconfined with the job's environment. Only the job's settings may.
    unconfined = AssayConfig(path=Path("/proj/pyproject.toml"), isolation="none")
    local = settings(RunOptions(), {}, config=unconfined)
    assert (local.isolation, local.warnings) == ("none", ())
    in_ci = settings(RunOptions(), {"GITHUB_ACTIONS": "true"}, config=unconfined)
    assert (in_ci.isolation, in_ci.sources["isolation"]) == ("auto", DEFAULT)
    assert in_ci.warnings == (
        "/proj/pyproject.toml: isolation = 'none' is not taken in GitHub Actions, where the "
        "pull request can change this file; set the Action's `isolation` input "
        "(ASSAY_ISOLATION) instead",
    )
    chosen = settings(
        RunOptions(), {"GITHUB_ACTIONS": "true", "ASSAY_ISOLATION": "none"}, config=unconfined
    )
    assert (chosen.isolation, chosen.warnings) == ("none", ())


def test_text_forms_are_read_as_the_command_line_reads_them(tmp_path: Path) -> None:
    decided = settings(
        RunOptions(models=("a/x,b/y", "a/x"), shard="2/3", report_dir=str(tmp_path)),
        {"ASSAY_TEST": "calc/*", "ASSAY_AGENT_COMMAND": "my-agent {workspace}"},
        config=None,
    )
    assert decided.models == ("a/x", "b/y")
    assert decided.shard == (2, 3)
    assert decided.report_dir == tmp_path
    assert decided.patterns == ("calc/*",)
    assert decided.agent_command == ("my-agent", "{workspace}")


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("ASSAY_TIMEOUT", "abc", "ASSAY_TIMEOUT='abc': not a number"),
        ("ASSAY_CONCURRENCY", "1.5", "ASSAY_CONCURRENCY='1.5': not a whole number"),
        (
            "ASSAY_RUNTIME",
            "foo",
            "ASSAY_RUNTIME='foo': unknown runtime 'foo'; known runtimes",
        ),
        ("ASSAY_DRY_RUN", "maybe", "ASSAY_DRY_RUN='maybe': expected 1/0"),
        ("ASSAY_ISOLATION", "full", "ASSAY_ISOLATION='full': expected one of auto, bwrap, none"),
    ],
)
def test_a_bad_variable_is_refused_by_the_library_as_by_the_cli(
    variable: str, value: str, message: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    with pytest.raises(ConfigError) as caught:
        settings(RunOptions(), {variable: value})
    assert str(caught.value).startswith(message)
    monkeypatch.setenv(variable, value)
    assert main(["run", "nowhere"]) == 2
    assert capsys.readouterr().err.startswith(f"assay: error: {message}")


# -- the suite's timeout ----------------------------------------------------------------


def test_a_warden_harness_timeout_is_the_cases_timeout_unless_one_is_set(
    warden: Path,  # noqa: F811 - the fixture
) -> None:
    case = by_id(warden)["code-review/null-access"]
    assert case.timeout_s == 120.0  # type: ignore[attr-defined]  # timeoutMs: 120_000

    def planned(options: RunOptions, environ: dict[str, str], config: Any = None) -> float:
        decided = settings(options, environ, config=config)
        (run,) = plan_runs([case], options=decided, config=config)  # type: ignore[list-item]
        return run.timeout_s

    assert planned(RunOptions(), {}) == 120.0  # the suite's
    assert planned(RunOptions(), {}, config=CONFIG) == 90.0  # [tool.assay] beats the suite
    assert planned(RunOptions(), {"ASSAY_TIMEOUT": "30"}, config=CONFIG) == 30.0
    assert planned(RunOptions(timeout_s=10), {"ASSAY_TIMEOUT": "30"}) == 10.0
    assert planned(RunOptions(timeout_s=DEFAULT_TIMEOUT_S), {}) == DEFAULT_TIMEOUT_S  # given


# -- the same refusals through both doors -------------------------------------------------


@pytest.mark.parametrize(
    ("given", "flags", "message"),
    [
        ({"concurrency": 0}, ["--concurrency", "0"], "--concurrency must be at least 1, got 0"),
        ({"repeat": 0}, ["--repeat", "0"], "--repeat must be between 1 and 1000, got 0"),
        (
            {"repeat": 10**20},
            ["--repeat", str(10**20)],
            f"--repeat must be between 1 and 1000, got {10**20}",
        ),
        ({"threshold": 2.0}, ["--threshold", "2"], "--threshold must be between 0 and 1"),
        ({"shard": "3/2"}, ["--shard", "3/2"], "--shard 3/2: need 1 <= I <= N"),
        ({"shard": "x"}, ["--shard", "x"], "--shard must look like I/N"),
        ({"offline": True}, ["--offline"], "--offline replays recorded model calls"),
        (  # a file: every case used to fail with NotADirectoryError after its model calls
            {"cache_dir": Path(__file__)},
            ["--cache", __file__],
            f"--cache {__file__}: is a file, not a cache directory",
        ),
        ({"skill": Path("no-such.md")}, ["--skill", "no-such.md"], "--skill no-such.md: no such"),
        ({"patterns": ("zzz",)}, ["-t", "zzz"], "no cases match -t 'zzz'"),
        ({"agent_command": "'open"}, ["--agent-command", "'open"], '--agent-command "\'open"'),
        (  # the report directory given with it (`report`) was ignored without a word
            {"resume_dir": Path("earlier")},
            ["--resume", "earlier"],
            "--resume earlier continues that run in its own directory",
        ),
    ],
)
@pytest.mark.slow
def test_the_library_refuses_what_the_cli_refuses(
    tmp_path: Path, capsys: Any, given: dict[str, Any], flags: list[str], message: str
) -> None:
    root = project(tmp_path, {"a": {}})
    common: dict[str, Any] = {
        "paths": (str(root / "calc.json"),),
        "report_dir": root / "report",
        "agent_command": tuple(agent_argv(root)),
    }
    with pytest.raises(ConfigError) as caught:
        assay.run(RunOptions(**{**common, **given}))
    assert message in str(caught.value)
    args = ["run", str(root / "calc.json"), "--report-dir", str(root / "report"), *flags]
    if "agent_command" not in given:
        args += ["--agent-command", " ".join(agent_argv(root))]
    assert main(args) == 2
    assert f"assay: error: {caught.value}" in capsys.readouterr().err
    assert not (root / "started").exists() and not (root / "report").exists()


def test_the_library_refuses_a_work_root_inside_a_fixture(tmp_path: Path, capsys: Any) -> None:
    root = project(tmp_path, {"a": {}})
    inside = root / "fixtures" / "calc" / "work"
    with pytest.raises(ConfigError, match="is inside the fixture") as caught:
        assay.run(
            RunOptions(
                paths=(str(root / "calc.json"),),
                agent_command=tuple(agent_argv(root)),
                work_root=inside,
                report_dir=root / "report",
            )
        )
    argv = " ".join(agent_argv(root))
    code = main(
        ["run", str(root / "calc.json"), "--agent-command", argv, "--work-root", str(inside)]
    )
    assert code == 2
    assert f"assay: error: {caught.value}" in capsys.readouterr().err


# -- dry run ----------------------------------------------------------------------------


def test_a_library_dry_run_builds_the_sandboxes_and_runs_no_agent(tmp_path: Path) -> None:
    root = project(tmp_path, {"a": {}, "b": {}})
    report = assay.run(
        RunOptions(
            paths=(str(root / "calc.json"),),
            agent_command=tuple(agent_argv(root)),
            work_root=root.parent / "work",
            report_dir=root / "report",
            dry_run=True,
        )
    )
    assert not (root / "started").exists()  # the agent never ran
    assert not (root / "report").exists()  # and nothing was written
    assert [(c.id, c.status) for c in report.cases] == [
        ("calc/a", "skipped"),
        ("calc/b", "skipped"),
    ]
    for case in report.cases:
        assert case.reason.startswith("dry run") and case.workspace is not None
        assert (Path(case.workspace) / "calc.py").is_file()  # kept, to look inside


def test_assay_dry_run_in_the_environment_is_a_dry_run_for_the_library_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, {"a": {}})
    monkeypatch.setenv("ASSAY_DRY_RUN", "1")
    monkeypatch.setenv("ASSAY_AGENT_COMMAND", " ".join(agent_argv(root)))
    report = assay.run(RunOptions(paths=(str(root / "calc.json"),), work_root=tmp_path / "w"))
    assert [c.status for c in report.cases] == ["skipped"]
    assert not (root / "started").exists()


def test_deciding_again_keeps_what_was_decided_and_redecides_the_defaults() -> None:
    first = settings(RunOptions(threshold=0.9, paths="evals"), {"ASSAY_REPEAT": "2"}, config=None)
    assert first.paths == ("evals",)
    again = resolve_settings(first, config=CONFIG, environ={})
    assert (again.threshold, again.sources["threshold"]) == (0.9, GIVEN)
    assert (again.repeat, again.sources["repeat"]) == (2, "ASSAY_REPEAT")
    assert (again.max_errors, again.sources["max_errors"]) == (3, str(CONFIG.path))  # was default
    handmade = resolve_settings(RunSettings(threshold=0.6), config=CONFIG, environ={})
    assert (handmade.threshold, handmade.sources["threshold"]) == (0.6, GIVEN)


# -- the gate's options ----------------------------------------------------------------------


def test_gate_options_follow_the_same_precedence() -> None:
    config = AssayConfig(
        path=Path("/proj/pyproject.toml"),
        gate="regression",
        inconclusive="fail",
        errors_count_as="fail",
        floor=0.4,
        quarantine=("s/flaky",),
    )
    decided = settings(
        RunOptions(inconclusive="neutral", quarantine=("s/given",)),
        {"ASSAY_ERRORS_COUNT_AS": "skip", "ASSAY_QUARANTINE": "s/env, s/other"},
        config,
    )
    assert (decided.inconclusive, decided.sources["inconclusive"]) == ("neutral", GIVEN)
    assert (decided.errors_count_as, decided.sources["errors_count_as"]) == (
        "skip",
        "ASSAY_ERRORS_COUNT_AS",
    )
    assert (decided.gate, decided.floor) == ("regression", 0.4)
    assert decided.quarantine == ("s/flaky", "s/given", "s/env", "s/other")
    defaults = settings(RunOptions(), {}, None)
    assert (defaults.gate, defaults.inconclusive, defaults.errors_count_as) == (
        "threshold",
        "score",
        "skip",
    )


def test_a_bad_gate_choice_in_the_environment_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="ASSAY_INCONCLUSIVE='maybe': expected one of"):
        settings(RunOptions(), {"ASSAY_INCONCLUSIVE": "maybe"})


def test_regression_gate_without_a_baseline_is_refused(tmp_path: Path) -> None:
    from assay.runner.settings import check_settings

    with pytest.raises(ConfigError, match="--gate regression needs --baseline"):
        check_settings(settings(RunOptions(gate="regression"), {}, None))
    with pytest.raises(ConfigError, match="no such report file"):
        check_settings(settings(RunOptions(baseline=tmp_path / "nope.json"), {}, None))
    with pytest.raises(ConfigError, match="--floor must be between 0 and 1"):
        check_settings(settings(RunOptions(floor=1.5), {}, None))


def test_affected_by_and_affects_all_join_their_sources() -> None:
    config = AssayConfig(path=Path("/proj/pyproject.toml"), affects_all=("agent/**",))
    decided = settings(
        RunOptions(affects_all=("prompts/*",)),
        {"ASSAY_AFFECTED_BY": "origin/main", "ASSAY_AFFECTS_ALL": "assay.toml"},
        config,
    )
    assert (decided.affected_by, decided.sources["affected_by"]) == (
        "origin/main",
        "ASSAY_AFFECTED_BY",
    )
    assert decided.affects_all == ("agent/**", "prompts/*", "assay.toml")


def test_a_negative_zero_threshold_is_zero() -> None:
    """`threshold = -0.0` in a config, or from a library caller, is never shown as -0.00."""
    settings = resolve_settings(RunOptions(threshold=-0.0, floor=-0.0), config=None, environ={})
    assert math.copysign(1.0, settings.threshold) == 1.0
    assert settings.floor is not None and math.copysign(1.0, settings.floor) == 1.0
