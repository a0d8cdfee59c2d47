"""What a hostile suite can make the sandbox show through the agent's argv (real bwrap).

A pull request writes the agent command, so it can name any path: the checkout's
`.git/config` (actions/checkout keeps the job token there), `~/.git-credentials`, a
credentials file another step wrote into the workspace, its own suite file and fixtures
(the answer key), the run history and the baseline report (past expected findings). Each
test runs a real `assay run` of a task suite in a git checkout, with an agent that tries
to read those paths and prints what it could.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.isolation.bwrap import probe_bwrap
from tests.requires import no_bwrap_reason

BWRAP, WHY_NOT = probe_bwrap()
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason=no_bwrap_reason(WHY_NOT))

READER = """
import os, sys
from pathlib import Path

# Every path it is told about: printed as shown (its first bytes) or refused.
for path in sys.argv[1:] + os.environ.get("PROBE_PATHS", "").split(":"):
    if not path:
        continue
    try:
        if os.path.isdir(path):
            print("LISTED", path, sorted(os.listdir(path)), flush=True)
        else:
            print("READ-OK", path, Path(path).read_text()[:20].strip(), flush=True)
    except OSError as exc:
        print("refused", path, exc.strerror, flush=True)
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _checkout(root: Path, files: dict[str, str]) -> Path:
    """A git checkout holding a one-task suite (`calc.json`) and `files`, all committed."""
    fixture = root / "fixtures" / "calc"
    fixture.mkdir(parents=True)
    (fixture / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    task = {
        "id": "probe",
        "name": "probe",
        "difficulty": "easy",
        "prompt": "fix add",
        "workspaceFixture": "fixtures/calc",
        "verificationCommands": [
            {"id": "noop", "name": "noop", "command": [sys.executable, "-c", "pass"]}
        ],
        "expectedChangedFiles": ["calc.py"],
    }
    (root / "calc.json").write_text(json.dumps({"id": "calc", "name": "calc", "tasks": [task]}))
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "suite")
    return root


def _assay_run(
    checkout: Path, agent: str, *extra: str, report_dir: Path, env: dict[str, str]
) -> str:
    """The agent's stdout from `assay run calc.json` in `checkout` (its working directory)."""
    command = [
        sys.executable, "-c", "import sys; from assay.cli import main; sys.exit(main())",
        "run", "calc.json", "--agent-command", agent, "--report-dir", str(report_dir),
        "--work-root", str(report_dir.parent / "work"), *extra,
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=checkout, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    (stdout,) = report_dir.rglob("agent.stdout")
    return stdout.read_text()


def _environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(HOME=str(home), **extra)
    return env


def _shown(stdout: str) -> set[str]:
    return {line.split()[1] for line in stdout.splitlines() if line.startswith("READ-OK")}


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A directory outside /tmp, HOME and /run, which every sandbox masks anyway: what
    the run itself masks there is all that hides it."""
    try:
        path = Path(tempfile.mkdtemp(prefix="assay-exposure-", dir="/var/tmp"))
    except OSError as exc:
        pytest.skip(f"/var/tmp is not writable: {exc.strerror}")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@needs_bwrap
@pytest.mark.parametrize("isolation", ["bwrap", "none"])
@pytest.mark.slow
def test_an_argument_shows_a_tracked_file_of_the_checkout_and_nothing_else(
    tmp_path: Path, isolation: str
) -> None:
    home = tmp_path / "home"
    (home / ".docker").mkdir(parents=True)
    (home / ".git-credentials").write_text("https://x-access-token:ghs_home@github.com\n")
    (home / ".docker" / "config.json").write_text('{"auths": {"ghcr.io": {"auth": "c2VjcmV0"}}}')
    checkout = _checkout(
        tmp_path / "checkout",
        {
            "agents/reader.py": READER,
            "agents/notes.txt": "tracked notes\n",
            ".assay-history/reports/old.json": '{"should_find": "the answer"}\n',
        },
    )
    # What actions/checkout and google-github-actions/auth leave in the workspace.
    _git(checkout, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic eA==")
    (checkout / "gha-creds-0123abcd.json").write_text('{"type": "service_account"}\n')
    named = [
        checkout / "agents" / "notes.txt",
        checkout / ".git" / "config",
        checkout / "gha-creds-0123abcd.json",
        checkout / "calc.json",
        checkout / "fixtures" / "calc" / "calc.py",
        checkout / ".assay-history" / "reports" / "old.json",
        home / ".git-credentials",
        home / ".docker" / "config.json",
    ]
    agent = " ".join([sys.executable, str(checkout / "agents" / "reader.py"), *map(str, named)])
    stdout = _assay_run(
        checkout,
        agent,
        "--isolation",
        isolation,
        "--history",
        str(checkout / ".assay-history"),
        report_dir=tmp_path / "out" / "report",
        env=_environment(home),
    )
    if isolation == "none":  # the control: every path is there to be read
        assert _shown(stdout) == set(map(str, named))
        return
    assert _shown(stdout) == {str(checkout / "agents" / "notes.txt")}
    assert stdout.count("refused") == len(named) - 1


@needs_bwrap
@pytest.mark.slow
def test_an_agent_beside_its_suite_file_sees_itself_and_one_elsewhere_its_tracked_helpers(
    tmp_path: Path,
) -> None:
    program = f"#!{sys.executable}\n" + READER
    helper_agent = (
        f"#!{sys.executable}\nimport helper, sys\nprint('HELPER', helper.VALUE, flush=True)\n"
        + READER
    )
    checkout = _checkout(
        tmp_path / "checkout",
        {
            "agent.py": program,  # beside calc.json: the layout of `agent_command: ./agent.sh`
            "agents/main.py": helper_agent,
            "agents/helper.py": "VALUE = 42\n",
        },
    )
    (checkout / "agents" / "local-secret.env").write_text("KEY=untracked\n")
    (checkout / "agents" / "cache").mkdir()
    (checkout / "agents" / "cache" / "token").write_text("untracked token\n")
    # A link the pull request checks in resolves inside the sandbox, where .git is masked.
    (checkout / "agents" / "config").symlink_to("../.git/config")
    _git(checkout, "add", "agents/config")
    _git(checkout, "commit", "-q", "-m", "link")
    report_dir = tmp_path / "out" / "report"
    env = _environment(tmp_path, PROBE_PATHS=f"{checkout}:{checkout / 'calc.json'}")
    beside = _assay_run(
        checkout, str(checkout / "agent.py"), "--isolation", "bwrap", report_dir=report_dir, env=env
    )
    assert f"LISTED {checkout} ['agent.py']" in beside
    assert f"refused {checkout / 'calc.json'}" in beside

    shutil.rmtree(report_dir)
    agents = checkout / "agents"
    probes = ["", "local-secret.env", "cache/token", "config", "helper.py"]
    env["PROBE_PATHS"] = ":".join(str(agents / name) for name in probes)
    elsewhere = _assay_run(
        checkout,
        str(checkout / "agents" / "main.py"),
        "--isolation",
        "bwrap",
        report_dir=report_dir,
        env=env,
    )
    assert "HELPER 42" in elsewhere  # its sibling module imports
    # Its directory is there, but what git does not track is covered: the name, no content.
    listed = ["cache", "config", "helper.py", "local-secret.env", "main.py"]
    assert f"LISTED {agents} {listed}" in elsewhere
    assert _shown(elsewhere) == {str(agents / "helper.py")}


@needs_bwrap
@pytest.mark.slow
def test_an_agent_cli_installed_under_home_keeps_its_own_directory(tmp_path: Path) -> None:
    # As the presets' CLIs are: ~/.local/bin/<cli> links into ~/.local/share/<cli>/<version>.
    home = tmp_path / "home"
    install = home / ".local" / "share" / "probe-cli" / "1.0"
    install.mkdir(parents=True)
    (install / "helper.py").write_text("VALUE = 'cli helper'\n")
    (install / "cli").write_text(
        f"#!{sys.executable}\nimport helper\nprint('HELPER', helper.VALUE, flush=True)\n"
    )
    (install / "cli").chmod(0o755)
    (home / ".local" / "bin").mkdir()
    (home / ".local" / "bin" / "probe-cli").symlink_to(install / "cli")
    (home / ".git-credentials").write_text("secret\n")
    checkout = _checkout(tmp_path / "checkout", {})
    env = _environment(home, PATH=f"{home / '.local' / 'bin'}:{os.environ['PATH']}")
    stdout = _assay_run(
        checkout, "probe-cli", "--isolation", "bwrap", report_dir=tmp_path / "report", env=env
    )
    assert "HELPER cli helper" in stdout


@needs_bwrap
@pytest.mark.slow
def test_the_history_and_the_baseline_report_are_not_mounted(
    tmp_path: Path, outside_tmp: Path
) -> None:
    checkout = _checkout(tmp_path / "checkout", {"agents/reader.py": READER})
    history = outside_tmp / "history"
    base = outside_tmp / "base"
    agent = f"{sys.executable} {checkout / 'agents' / 'reader.py'}"
    env = _environment(tmp_path)
    # A first run: its report becomes the baseline, and the history records it.
    _assay_run(checkout, agent, "--history", str(history), report_dir=base, env=env)
    (kept,) = (history / "reports").iterdir()
    # A baseline alone in a directory that also holds what an agent needs: the file only.
    tools = outside_tmp / "tools"
    tools.mkdir()
    shutil.copy(base / "report.json", tools / "baseline.json")
    (tools / "tool.txt").write_text("a tool\n")

    probes = [kept, history, base / "report.json", base / "results.jsonl"]
    env["PROBE_PATHS"] = ":".join(map(str, probes))
    report_dir = tmp_path / "second" / "report"
    args = ("--isolation", "bwrap", "--history", str(history))
    stdout = _assay_run(
        checkout,
        agent,
        *args,
        "--baseline",
        str(base / "report.json"),
        report_dir=report_dir,
        env=env,
    )
    assert _shown(stdout) == set()
    assert f"LISTED {history} []" in stdout

    shutil.rmtree(report_dir)
    env["PROBE_PATHS"] = f"{tools / 'baseline.json'}:{tools / 'tool.txt'}"
    baseline = ("--baseline", str(tools / "baseline.json"))
    stdout = _assay_run(checkout, agent, *args, *baseline, report_dir=report_dir, env=env)
    assert _shown(stdout) == {str(tools / "tool.txt")}
    assert f"refused {tools / 'baseline.json'} Permission denied" in stdout


@pytest.mark.parametrize("with_exec", [True, False])
@pytest.mark.slow
def test_the_evals_step_leaves_no_shell_holding_the_inputs_as_assays_parent(
    tmp_path: Path, with_exec: bool
) -> None:
    import yaml

    action = yaml.safe_load((Path(__file__).parents[1] / "action.yml").read_text())
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "assay"]
    script = step["run"] if with_exec else step["run"].replace("exec ", "")
    assert script != step["run"] or with_exec  # the control really drops it
    checkout = _checkout(tmp_path / "checkout", {"agents/parent.py": PARENT_READER})
    # The venv's python stands in for `python -P assay ci`: a real `assay run`, unsandboxed.
    bin_dir = tmp_path / "assay-venv" / "bin"
    bin_dir.mkdir(parents=True)
    agent = f"{sys.executable} {checkout / 'agents' / 'parent.py'}"
    (bin_dir / "python").write_text(
        "#!/bin/sh\n"
        f"exec {sys.executable} -c 'import sys; from assay.cli import main; sys.exit(main())' "
        f"run {checkout / 'calc.json'} --agent-command '{agent}' --isolation none "
        f"--report-dir {tmp_path / 'report'} --work-root {tmp_path / 'work'}\n"
    )
    (bin_dir / "python").chmod(0o755)
    (tmp_path / "step.sh").write_text(script)
    env = _environment(tmp_path, RUNNER_TEMP=str(tmp_path), PYCACHE_PREFIX="")
    env["INPUT_GITHUB_TOKEN"] = "ghs_" + "input" * 8
    # As the runner starts a `shell: bash` step.
    bash = shutil.which("bash")
    assert bash is not None
    subprocess.run(
        [bash, "--noprofile", "--norc", "-eo", "pipefail", str(tmp_path / "step.sh")],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    (stdout,) = (tmp_path / "report").rglob("agent.stdout")
    seen = "PARENT-HOLDS-INPUT" in stdout.read_text()
    assert seen is not with_exec, stdout.read_text()


PARENT_READER = """
import os
from pathlib import Path

assay = os.getppid()
parent = int(Path(f"/proc/{assay}/stat").read_text().rsplit(")", 1)[1].split()[1])
environ = Path(f"/proc/{parent}/environ").read_bytes()
print("PARENT-HOLDS-INPUT" if b"INPUT_GITHUB_TOKEN=" in environ else "parent clean", flush=True)
"""


@needs_bwrap
@pytest.mark.slow
def test_a_project_without_git_runs_its_agent_but_never_shows_the_suite(tmp_path: Path) -> None:
    """No git repository: the working directory holding the suites is the checkout, so the
    agent script at its root starts (alone: its directory holds the suites) and the suite
    file and fixture stay hidden."""
    project = tmp_path / "project"
    checkout = _checkout(project, {"reader.py": READER})
    shutil.rmtree(checkout / ".git")
    named = [project / "calc.json", project / "fixtures" / "calc" / "calc.py"]
    agent = " ".join([sys.executable, str(project / "reader.py"), *map(str, named)])
    stdout = _assay_run(
        project,
        agent,
        "--isolation",
        "bwrap",
        report_dir=tmp_path / "out" / "report",
        env=_environment(tmp_path / "home"),
    )
    assert _shown(stdout) == set()
    assert sum(line.startswith("refused") for line in stdout.splitlines()) == len(named)


@needs_bwrap
@pytest.mark.slow
def test_a_tracked_file_a_later_step_filled_in_is_not_shown(tmp_path: Path) -> None:
    """A pull request checks in a placeholder where a CI step later writes a credential:
    a file whose content is not what the checkout tracks is no file of the checkout."""
    checkout = _checkout(tmp_path / "checkout", {"agents/reader.py": READER, "sa-key.json": "{}\n"})
    (checkout / "sa-key.json").write_text('{"private_key": "REAL-SECRET"}\n')
    agent = f"{sys.executable} {checkout / 'agents' / 'reader.py'} {checkout / 'sa-key.json'}"
    stdout = _assay_run(
        checkout,
        agent,
        "--isolation",
        "bwrap",
        report_dir=tmp_path / "out" / "report",
        env=_environment(tmp_path / "home"),
    )
    assert "REAL-SECRET" not in stdout and _shown(stdout) == set()


@needs_bwrap
@pytest.mark.slow
def test_a_relative_program_shows_nothing_of_the_host_whatever_link_the_checkout_holds(
    tmp_path: Path,
) -> None:
    """`bin/peek` runs from the case's workspace (the fixture's `bin/peek`); resolved on the
    host against assay's working directory it was the checkout's link into `~/.ssh`,
    whose directory was then shown to the program."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY\n")
    key = home / ".ssh" / "id_rsa"
    peek = f"#!/bin/sh\ncat {key} 2>/dev/null || echo refused {key}\n"
    checkout = _checkout(tmp_path / "checkout", {"fixtures/calc/bin/peek": peek})
    (checkout / "bin").mkdir()
    (checkout / "bin" / "peek").symlink_to(home / ".ssh" / "nothing")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "link")
    stdout = _assay_run(
        checkout,
        "bin/peek",
        "--isolation",
        "bwrap",
        report_dir=tmp_path / "out" / "report",
        env=_environment(home),
    )
    assert "PRIVATE-KEY" not in stdout and f"refused {key}" in stdout


def test_score_never_asks_git_what_the_agents_own_repository_tracks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`assay score --workspace .`: the workspace's repository (whose config the agent
    wrote) is masked around the workspace, but is no checkout whose files are listed."""
    import argparse

    from assay._cli.score import _sandboxing
    from assay.suites import load_suites

    checkout = _checkout(tmp_path / "suite", {})
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    _git(workspace, "init", "-q", "-b", "main")
    monkeypatch.chdir(workspace)
    (case,) = load_suites([checkout / "calc.json"]).cases
    args = argparse.Namespace(
        isolation="bwrap" if BWRAP else "none", command_network="on", workspace="."
    )
    sandboxing = _sandboxing(args, case=case, limits=None)
    if BWRAP is None:
        return
    assert Path(os.path.realpath(workspace)) not in sandboxing.shown.sources
    assert Path(os.path.realpath(checkout)) in sandboxing.shown.sources


@needs_bwrap
@pytest.mark.slow
def test_a_built_program_the_checkout_does_not_track_starts_alone(tmp_path: Path) -> None:
    """`go build -o bin/agent` then `--agent-command ./bin/agent`: the binary is the build's
    output, untracked (often ignored), and is executed, not read: it starts, shown alone, and
    what lies beside it (an untracked credentials file) stays hidden."""
    checkout = _checkout(tmp_path / "checkout", {".gitignore": "bin/\n"})
    secret = checkout / "bin" / "creds.json"
    built = checkout / "bin" / "agent"
    built.parent.mkdir()
    secret.write_text('{"token": "BUILD-SECRET"}\n')
    built.write_text(f"#!{sys.executable}\n{READER}")
    built.chmod(0o755)
    stdout = _assay_run(
        checkout,
        f"{built} {secret}",
        "--isolation",
        "bwrap",
        report_dir=tmp_path / "out" / "report",
        env=_environment(tmp_path / "home"),
    )
    assert "BUILD-SECRET" not in stdout
    assert f"refused {secret}" in stdout  # it ran, and could not read what lies beside it
