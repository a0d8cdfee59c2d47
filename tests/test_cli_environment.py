"""`ASSAY_*` variables: a name assay does not read is warned about, never silently ignored."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assay._cli.environment import known_variables, unknown_variables
from assay.cli import build_parser
from assay.options import env_name
from tests.test_cli_run import ASSAY, load_report, project, run_args

REPO = Path(__file__).resolve().parent.parent

_NAME = re.compile(r"\bASSAY_[A-Z0-9_]*[A-Z0-9]\b")
"""A whole variable name: `ASSAY_SANDBOX_*` and `ASSAY_<OPTION>` are ways of writing many."""

_READ_IN_TESTS = re.compile(r"""environ(?:\.get\(|\[)\s*["'](ASSAY_[A-Z0-9_]+)["']""")


@pytest.mark.slow
def test_a_mistyped_variable_is_warned_about_once_with_the_name_it_means(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"t": {}})
    env = {
        **os.environ,
        "ASSAY_TRESHOLD": "0.9",  # the run gates at 0.75 all the same: it is only a warning
        "ASSAY_NOTHING_LIKE_IT": "1",
        "assay_max_errors": "3",  # variables are case-sensitive: this one is not read either
        "ASSAY_REPORT_DIRECTORY": "",  # empty is unset: nothing to warn about
        "ASSAY_MAX_ERRORS": "0",  # known ones say nothing
    }
    done = subprocess.run(
        [*ASSAY, *run_args(root)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    said = "is set, but assay reads no such variable: it is ignored"
    warned = [line for line in done.stderr.splitlines() if "no such variable" in line]
    assert warned == [
        f"warning: ASSAY_NOTHING_LIKE_IT {said}",
        f"warning: ASSAY_TRESHOLD {said} (did you mean ASSAY_THRESHOLD?)",
        f"warning: assay_max_errors {said} (did you mean ASSAY_MAX_ERRORS?)",
    ]
    assert load_report(root / "report" / "report.json").run.threshold == 0.75


def test_every_command_warns_not_only_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.cli import main

    monkeypatch.setenv("ASSAY_HISTORY_KEPP", "5")
    assert main(["schema"]) == 0
    assert (
        "warning: ASSAY_HISTORY_KEPP is set, but assay reads no such variable: it is ignored "
        "(did you mean ASSAY_HISTORY_KEEP?)"
    ) in capsys.readouterr().err


def _names_in(path: Path) -> set[str]:
    return set(_NAME.findall(path.read_text(encoding="utf-8")))


def test_every_variable_assay_reads_or_sets_is_known() -> None:
    # Every name written in assay's code and docstrings, the Action and the workflows, and
    # every one its own tests read from the environment (whose runs must not warn).
    written: dict[str, set[str]] = {}
    files = [
        # Not the module that lists them: each must be found where it is read or set.
        *sorted(p for p in (REPO / "src").rglob("*.py") if p.name != "environment.py"),
        REPO / "action.yml",
        *sorted((REPO / ".github" / "workflows").glob("*.yml")),
        REPO / ".ci" / "run",
    ]
    for path in files:
        for name in _names_in(path):
            written.setdefault(name, set()).add(str(path.relative_to(REPO)))
    for path in sorted((REPO / "tests").rglob("*.py")):
        for name in _READ_IN_TESTS.findall(path.read_text(encoding="utf-8")):
            written.setdefault(name, set()).add(str(path.relative_to(REPO)))
    known = known_variables(build_parser())
    unknown = {name: sorted(where) for name, where in written.items() if name not in known}
    assert unknown == {}
    assert len(written) > 20  # the scan found what it scans for


def test_every_action_input_is_known_as_the_assay_variable_assay_ci_reads() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    known = known_variables(build_parser())
    inputs = [env_name(name) for name in action["inputs"]]
    assert [name for name in inputs if name not in known] == []
    # And each step's environment as action.yml sets it (the rest are INPUT_* and GITHUB_*).
    for step in action["runs"]["steps"]:
        names = [n for n in step.get("env", {}) if n.startswith("ASSAY_")]
        assert unknown_variables({n: "x" for n in names}, build_parser()) == [], step.get("name")


def test_the_test_suites_own_environment_warns_about_nothing() -> None:
    # conftest.py sets ASSAY_ISOLATION for every test; CI sets ASSAY_REQUIRE_BROWSER.
    environ = {**os.environ, "ASSAY_REQUIRE_BROWSER": "1"}
    assert unknown_variables(environ, build_parser()) == []


def test_an_environment_without_strays_asks_no_source_but_the_options() -> None:
    # The Action's inputs model (pydantic) and the provider registry stay unimported.
    code = (
        "import os, sys\n"
        "os.environ.update(ASSAY_THRESHOLD='0.8', ASSAY_PROMPT_FILE='p')\n"
        "from assay.cli import build_parser\n"
        "from assay._cli.environment import unknown_variables\n"
        "assert unknown_variables(os.environ, build_parser()) == []\n"
        "heavy = {'assay.action.inputs', 'assay.models.providers', 'pydantic'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr
